"""A lab pack's folder (a package, so that its mutants' imports resolve the same in every isolation mode)."""
