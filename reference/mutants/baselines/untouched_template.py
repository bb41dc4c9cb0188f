"""The untouched student template: every method still raises NotImplementedError."""

from reference.mutants._base import export, fresh_template

MAX_PERCENT = 0.0  # nothing was written, so nothing may pass

template = fresh_template(__name__)
export(template, globals())
