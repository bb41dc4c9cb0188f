"""The student template as shipped: nothing was written, so nothing may pass."""

from labs.decode_step.reference.mutants._base import run_template

MAX_PERCENT = 0.0

run_template(globals())
