"""The CUDA-graph lab's own Python (loaded by path by the engine, see docs/labs.md)."""
