"""The CUDA-graph lab's own check kinds (``lab.yaml: checks.modules``): each module defines one
kind as the engine's own kinds are written (a :class:`grader.suite.checks.base.Check` subclass),
marked ``lab_owned``: the engine lists it for this lab only, never in its registry."""
