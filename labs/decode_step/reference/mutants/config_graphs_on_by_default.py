"""DecodeConfig turns decode graphs on by default."""

from labs.decode_step.reference.mutants._base import run_edited_reference

TAG = "decode-config"

EDITS = (
    (
        "    enable_decode_graphs: bool = False\n",
        "    enable_decode_graphs: bool = True  # graphs are opt-in\n",
    ),
)

run_edited_reference(globals(), EDITS)
