"""Pads the buffer but keys the graph on the real batch size, so batches that pad to one size capture separate graphs."""

from reference.mutants._base import run_edited_reference

TAG = "padding"

EDITS = (
    ("return (batch, *x.shape[1:])", "return x.shape  # should be the padded shape"),
    # The static buffer is still padded as the reference pads it, so only the keying mistake shows.
    (
        "        static_input = np.zeros(key, dtype=x.dtype)\n",
        "        shape = (self._padded_batch(x.shape[0]), *x.shape[1:]) if x.ndim else ()\n"
        "        static_input = np.zeros(shape, dtype=x.dtype)\n",
    ),
    ("GraphEntry(key, static_input", "GraphEntry(shape, static_input"),
)

run_edited_reference(globals(), EDITS)
