"""A failed case's traced re-run (grader.run.relocating) names the decision behind a wrong count or
output (issue 34, point 3), on small submissions written as a student might, not the suite's
mutants:

* a decision of an earlier step: the list ``run_eager`` ran was made by the submission's own
  ``fuse_elementwise`` in step 1, so a count that is right for that list names the test on the
  path of the first op the list holds where the contract does not put it (``op:N``); ops run out
  of their list's order name the line that chose the op run first (``called``);
* a path chosen by a key that is not the one due (the handout's padded shape), also one that
  raised, or an earlier call's of the same runner: where that key, or the batch it was made
  from, was made (``compared``/``looked-up`` with their values, ``operand``), or where the sizes
  a test chose the batch from were set when they never held the one due (``iterated``); a key
  that is the one due keeps the lines named before;
* ops of the chain that never ran, where a loop walked a list empty: where that list was last
  changed, in an earlier step (``emptied``).
"""

from __future__ import annotations

from support.traced_judging import judged, line_of

COUNTER = """
import numpy as np


class LaunchCounter:
    n = 0

    @classmethod
    def bump(cls, k=1):
        cls.n += k


def run_eager(ops, x):
    for op in ops:
        x = op(x)
        LaunchCounter.bump(1)
    return x
"""

FUSE = """

def make_group(parts):
    def group(x):
        for part in parts:
            x = part(x)
        return x

    group.elementwise = True
    return group


def fuse_elementwise(ops):
    out, pending = [], []
    for op in ops:
        if getattr(op, "elementwise", False):
            pending.append(op)
            continue
        out.extend([make_group(list(pending))] if len(pending) > 1 else pending)
        pending = []
        out.append(op)
    out.extend([make_group(list(pending))] if len(pending) > 1 else pending)
    return out
"""


def test_a_count_right_for_a_wrongly_fused_list_names_the_test_that_merged_the_op(tmp_path):
    # `hasattr` merges the matmul (op 2) into one run: run_eager pays one launch for the one op it
    # was handed, right for its list; op 2's path in step 1 went through the wrong test
    source = COUNTER + FUSE.replace('getattr(op, "elementwise", False)', 'hasattr(op, "elementwise")')
    verdict, lines = judged(tmp_path, source, "fusion-basics/matmul-splits-runs")
    test = line_of(lines, 'if hasattr(op, "elementwise"):')
    assert verdict.status == "failed" and "should cost 3 launches but cost 1" in verdict.message
    assert verdict.origin == f"cudagraph.py:{test}", verdict.message
    assert "(op 2's path in step 1, which made the list this step ran)" in verdict.message
    first, _ = judged(tmp_path / "first", source, "fusion-basics/matmul-splits-runs", trace=False)
    assert first.origin != f"cudagraph.py:{test}"  # a first run does not trace the paths
    assert first.message.split("\n")[0] == verdict.message.split("\n")[0]  # the verdict is the first run's


def test_a_run_split_in_pairs_names_the_test_on_the_path_of_the_op_left_alone(tmp_path):
    # closes a run at two: [add, mul, relu] becomes a group and relu alone (two launches)
    split = FUSE.replace(
        "            pending.append(op)\n            continue\n",
        "            pending.append(op)\n"
        "            if len(pending) == 2:\n"
        "                out.append(make_group(list(pending)))\n"
        "                pending = []\n"
        "            continue\n",
    )
    verdict, lines = judged(tmp_path, COUNTER + split, "fusion-basics/whole-chain-fuses")
    assert "should cost 1 launch but cost 2" in verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, 'if len(pending) == 2:')}", verdict.message


def test_a_miscount_of_run_eager_itself_keeps_its_own_line_though_the_list_came_from_step_1(tmp_path):
    # the fused list is right and run_eager pays one launch in all: not one per entry of its
    # list, so the count is run_eager's own doing, named at its bump
    source = (COUNTER + FUSE).replace(
        "    for op in ops:\n        x = op(x)\n        LaunchCounter.bump(1)\n",
        "    for op in ops:\n        x = op(x)\n    LaunchCounter.bump(1)\n",
    )
    verdict, lines = judged(tmp_path, source, "fusion-basics/matmul-splits-runs")
    assert "should cost 3 launches but cost 1" in verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, '    LaunchCounter.bump(1)')}", verdict.message
    assert "path in step 1" not in verdict.message


def test_ops_run_out_of_order_name_the_line_that_chose_the_op_run_first(tmp_path):
    # the group applies its parts last first: the loop header chose relu to run before add
    source = COUNTER + FUSE.replace("for part in parts:", "for part in parts[::-1]:")
    verdict, lines = judged(tmp_path, source, "fusion-basics/whole-chain-fuses")
    assert "wrong output" in verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, 'for part in parts[::-1]:')}", verdict.message
    assert "the ops ran out of their order" in verdict.message
    # in order but each part given the input, not the last result: no order to blame, the
    # group's own return made the value
    source = COUNTER + FUSE.replace(
        "            x = part(x)\n        return x\n", "            y = part(x)\n        return y\n"
    )
    verdict, lines = judged(tmp_path / "chain", source, "fusion-basics/whole-chain-fuses")
    assert "wrong output" in verdict.message and "out of their order" not in verdict.message


RUNNER = """

class GraphEntry:
    def __init__(self, shape, static_input, output, num_ops):
        self.shape, self.static_input, self.output, self.num_ops = shape, static_input, output, num_ops


class GraphRunner:
    def __init__(self, ops, capture_sizes=None, warmup_steps=0):
        self.ops = list(ops)
        self.sizes = sorted(capture_sizes) if capture_sizes else None
        self.graphs = {}

    @property
    def num_captured(self):
        return len(self.graphs)

    def pick(self, rows):
        if self.sizes is None:
            return rows
        for size in self.sizes:
            if size >= rows:
                return size
        return None

    def fill(self, static, x):
        static[: x.shape[0]] = x
        static[x.shape[0] :] = 0

    def key_for(self, x):
        rows = self.pick(x.shape[0])
        return None if rows is None else (rows, *x.shape[1:])

    def __call__(self, x):
        key = self.key_for(x)
        if key is None:
            return run_eager(self.ops, x)
        found = self.graphs.get(key)
        if found is not None:
            self.fill(found.static_input, x)
            y = found.static_input
            for op in self.ops:
                y = op(y)
            LaunchCounter.bump(1)
            return y[: x.shape[0]].copy()
        static = np.zeros((self.pick(x.shape[0]), *x.shape[1:]), dtype=x.dtype)
        self.fill(static, x)
        out = run_eager(self.ops, static)
        self.graphs[key] = GraphEntry(key, static, out, len(self.ops))
        return out[: x.shape[0]].copy()
"""


def test_a_path_chosen_by_a_key_that_is_not_the_one_due_names_where_its_batch_was_made(tmp_path):
    # a batch above every capture size is keyed by its own size (pick returns rows, not None):
    # the second call of 9 rows replays (one launch) where it was due to run eagerly (three);
    # the key (9, 8) was made from the batch 9, where none is due: pick's last return made it
    source = COUNTER + RUNNER.replace(
        "                return size\n        return None\n", "                return size\n        return rows\n"
    )
    verdict, lines = judged(tmp_path, source, "padding-basics/above-largest-runs-eagerly")
    assert "should cost 3 launches but cost 1" in verdict.message
    made = [i for i, text in enumerate(lines, 1) if text == "        return rows"][-1]
    assert verdict.origin == f"cudagraph.py:{made}", verdict.message
    assert "(the batch 9 the key was made from; the batch due: none)" in verdict.message


def test_a_right_key_keeps_the_lines_named_before(tmp_path):
    # a replay that pays one launch per op: its key is the one due, so its decision is not the cause
    source = COUNTER + RUNNER.replace(
        "                y = op(y)\n            LaunchCounter.bump(1)\n",
        "                y = op(y)\n                LaunchCounter.bump(1)\n",
    )
    verdict, lines = judged(tmp_path, source, "replay-basics/capture-then-one")
    assert "but cost 3" in verdict.message and "path was chosen by" not in verdict.message, verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, '                LaunchCounter.bump(1)')}", verdict.message


def test_a_raise_on_a_path_chosen_by_a_wrong_key_names_the_key_and_on_a_right_key_its_ownline_of(tmp_path):
    # keyed by the batch alone: a narrower input finds the wider graph and raises copying into
    # its buffer; the key (4,) is not the one due, (4, 6), and its batch is: the key's line
    wide = "return None if rows is None else (rows, *x.shape[1:])"
    source = COUNTER + RUNNER.replace(wide, "return None if rows is None else (rows,)")
    verdict, lines = judged(tmp_path, source, "shape-cache-edge/width-is-part-of-key")
    assert "raised ValueError" in verdict.message, verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, 'else (rows,)')}", verdict.message
    assert "(the key [4] the path was chosen by; the key due: [4, 6])" in verdict.message
    first, _ = judged(tmp_path / "first", source, "shape-cache-edge/width-is-part-of-key", trace=False)
    assert first.origin == f"cudagraph.py:{line_of(lines, 'static[: x.shape[0]] = x')}"  # untraced: the raise
    # rounds down: 3 rows get the size-2 graph's key and raise filling its buffer; the batch 2 the
    # key was made from is not the one due (4): the test that chose it
    source = COUNTER + RUNNER.replace(
        "for size in self.sizes:\n            if size >= rows:",
        "for size in reversed(self.sizes):\n            if size <= rows:",
    )
    verdict, lines = judged(tmp_path / "down", source, "padding-basics/round-up")
    assert "raised ValueError" in verdict.message, verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, 'if size <= rows:')}", verdict.message
    # the key is right and the copy is wrong (the buffer is filled unpadded): the raise line stays
    source = COUNTER + RUNNER.replace(
        "        static[: x.shape[0]] = x\n        static[x.shape[0] :] = 0\n", "        static[:] = x  # unpadded\n"
    )
    verdict, lines = judged(tmp_path / "copy", source, "padding-basics/padded-rows-zeroed")
    assert "raised ValueError" in verdict.message, verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, '# unpadded')}", verdict.message


def test_a_batch_a_test_chose_from_sizes_that_never_held_the_one_due_names_where_the_sizes_were_set(tmp_path):
    # sizes kept unsorted ([8, 2, 4, 1]): 3 rows take 8 (the first that holds them) and store the
    # graph under (8, 5); 7 rows then find it and replay where a capture was due. Step 4's key is
    # its own due key; step 2's was not, chosen by a test that walked [8] and never saw 4
    source = COUNTER + RUNNER.replace("self.sizes = sorted(capture_sizes)", "self.sizes = list(capture_sizes)")
    verdict, lines = judged(tmp_path, source, "padding-edge/unsorted-sizes")
    assert "should cost 2 launches but cost 1" in verdict.message, verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, 'self.sizes = list(capture_sizes)')}", verdict.message
    assert "step 2 chose its path by a key other than its own" in verdict.message
    assert "(the sizes a test walked, [8], to choose 8: never 4, the batch due)" in verdict.message
    # a strict test walks past the size due (4 rows: 1, 2, 4 rejected, 8 taken): the test is named
    source = COUNTER + RUNNER.replace("if size >= rows:", "if size > rows:")
    verdict, lines = judged(tmp_path / "strict", source, "padding-basics/round-up")
    assert verdict.status == "failed", verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, 'if size > rows:')}", verdict.message


def test_ops_that_never_ran_from_a_list_a_loop_found_empty_name_where_it_was_last_changed(tmp_path):
    # the group keeps the very list the fusion then clears: run_eager runs the one new op (one
    # launch, right), whose loop walks an empty list; no op of the chain ran
    shared = FUSE.replace("make_group(list(pending))", "make_group(pending)").replace(
        "    return out\n", "    pending.clear()\n    return out\n"
    )
    verdict, lines = judged(tmp_path, COUNTER + shared, "fusion-basics/whole-chain-fuses")
    assert "wrong output" in verdict.message, verdict.message
    assert verdict.origin == f"cudagraph.py:{line_of(lines, 'pending.clear()')}", verdict.message
    assert "(a loop of this step walked this list empty: ops never ran)" in verdict.message
    first, _ = judged(tmp_path / "first", COUNTER + shared, "fusion-basics/whole-chain-fuses", trace=False)
    assert first.origin != verdict.origin  # a first run does not follow the lists
    # the group copies the list before it is cleared: its ops run, the output is right
    copied = FUSE.replace("    return out\n", "    pending.clear()\n    return out\n")
    verdict, _ = judged(tmp_path / "copied", COUNTER + copied, "fusion-basics/whole-chain-fuses")
    assert verdict.status == "passed", verdict.message
