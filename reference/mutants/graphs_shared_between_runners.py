"""Keeps the graph table in a class attribute, so every GraphRunner shares (and replays) the others' graphs."""

from reference.mutants._base import run_edited_reference

TAG = "shape-cache"

EDITS = (
    (
        "    @property\n    def num_captured",
        "    graphs: dict[Shape, GraphEntry] = {}  # a class attribute: one table for every runner\n"
        "\n"
        "    @property\n"
        "    def num_captured",
    ),
    ("        self.graphs: dict[Shape, GraphEntry] = {}\n", ""),
)

run_edited_reference(globals(), EDITS)
