"""Returns the whole padded output instead of slicing the real rows back out."""

from reference.mutants._base import run_edited_reference

TAG = "padding"

EDITS = (
    (
        "return np.array(output[: x.shape[0]], copy=True)",
        "return np.array(output, copy=True)  # should slice the real rows out",
    ),
)

run_edited_reference(globals(), EDITS)
