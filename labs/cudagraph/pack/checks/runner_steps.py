"""What a step of the CUDA-graph lab does, read from the trusted steps, and where its launches
were counted: the runner's vocabulary of this lab's check kinds (``launches``, ``output``).

:func:`step_kind` tells an eager run from a warm-up, a capture and a replay (each message speaks
of the right one); :func:`padded_batch` is the batch a runner call pads to; :func:`bumps_at` and
:func:`eager_run_at` name the lines where the launch counter's bumps were counted.
"""

from __future__ import annotations

from grader.observations import StepObservation
from grader.spec_model import ArrayValue, Case, MaskValue, PlainValue, Step, contract_names
from grader.suite.case_draft import padded_shape
from grader.suite.locating import MAX_SHOWN_SITES, bounded, frame_text, site_lines


def step_kind(case: Case, index: int) -> str:
    """What a step does, read from the trusted steps, so that every message speaks of the right
    thing (an eager run is not a replay, a warm-up call is not a capture):

    ``eager`` (run_eager), ``oversize`` (a batch above every capture size: eager, never captured),
    ``uncapturable`` (a PiecewiseGraphRunner with no capturable op: every call eager), ``warmup``,
    ``capture``, ``replay``, ``piecewise-capture``, ``piecewise-replay`` or ``other``.

    A runner call's key is its input's shape, padded to the runner's literal capture sizes; the
    first ``warmup_steps`` calls of a key warm up, the next captures, later ones replay. Where an
    input's shape is not known (a ``ref``), the first call of a runner is taken as its capture."""
    step = case.steps[index]
    if step.action == "call" and step.target == "run_eager":
        return "eager"
    if step.action != "call" or step.target in contract_names():
        return "other"
    build = runner_build(case, index)
    calls = [s for s in case.steps[: index + 1] if s.action == "call" and s.target == step.target]
    if build is None:
        return "replay" if len(calls) > 1 else "capture"
    piecewise = build.target == "PiecewiseGraphRunner"
    mask = given_arg(build, 1, "is_capturable") if piecewise else None
    if isinstance(mask, MaskValue) and not any(mask.mask):
        return "uncapturable"
    sizes = _int_tuple(given_arg(build, 2 if piecewise else 1, "capture_sizes"))
    warmup = 0 if piecewise else _int_value(given_arg(build, 2, "warmup_steps"))
    keys = [_call_key(c, sizes) for c in calls]
    prefix = "piecewise-" if piecewise else ""
    if keys[-1] == "oversize":
        return "oversize"
    if any(k is None for k in keys):
        return prefix + ("replay" if len(calls) > 1 else "capture")
    earlier = sum(1 for k in keys[:-1] if k == keys[-1])
    if earlier < warmup:
        return "warmup"
    return prefix + ("capture" if earlier == warmup else "replay")


def padded_batch(case: Case, index: int) -> int | None:
    """The batch a runner call with a literal input pads to under the runner's literal capture
    sizes; None without capture sizes, above every size, or where it cannot be told."""
    step = case.steps[index]
    build = runner_build(case, index) if step.action == "call" and step.target not in contract_names() else None
    if build is None:
        return None
    sizes = _int_tuple(given_arg(build, 2 if build.target == "PiecewiseGraphRunner" else 1, "capture_sizes"))
    key = _call_key(step, sizes) if sizes else None
    return key[0] if isinstance(key, tuple) and key else None


def due_key(case: Case, index: int) -> tuple[int, ...] | str | None:
    """The graph key a GraphRunner call with a literal input is due (its input's shape, padded
    to the runner's literal capture sizes: the handout's key), "oversize" where none is due (a
    batch above every capture size runs eagerly); None where it cannot be told."""
    step = case.steps[index]
    build = runner_build(case, index) if step.action == "call" and step.target not in contract_names() else None
    if build is None or build.target != "GraphRunner":
        return None
    sizes = given_arg(build, 1, "capture_sizes")
    if sizes is not None and _int_tuple(sizes) is None:
        return None  # capture sizes not given literally
    return _call_key(step, _int_tuple(sizes))


def runner_build(case: Case, index: int) -> Step | None:
    """The step that built the runner step ``index`` calls (the latest build of that name before it)."""
    target = case.steps[index].target
    return next(
        (s for s in reversed(case.steps[:index]) if s.action == "build" and s.name == target),
        None,
    )


def given_arg(step: Step, position: int, keyword: str) -> object:
    """The value a step passes by keyword, else at ``position``; None when not given."""
    for name, value in step.kwargs:
        if name == keyword:
            return value
    return step.args[position] if len(step.args) > position else None


def _int_tuple(value: object) -> tuple[int, ...] | None:
    if isinstance(value, PlainValue) and isinstance(value.value, tuple) and value.value:
        if all(type(v) is int for v in value.value):
            return value.value
    return None


def _int_value(value: object) -> int:
    return value.value if isinstance(value, PlainValue) and type(value.value) is int else 0


def _call_key(call: Step, sizes: tuple[int, ...] | None) -> tuple[int, ...] | str | None:
    """The graph key of a runner call with a literal input (:func:`padded_shape`; "oversize"
    above every capture size)."""
    x = given_arg(call, 0, "x")
    if not isinstance(x, ArrayValue):
        return None
    if sizes and x.shape and x.shape[0] > max(sizes):
        return "oversize"
    return padded_shape(x.shape, sizes)


def bumps_at(obs: StepObservation) -> str:
    """Lines naming where this step's ``LaunchCounter.bump`` calls were made, each site with the
    number of calls and the launches they added ("" when none were observed)."""
    if not obs.bumps:
        return ""
    by_site: dict[int, list[int]] = {}
    for bump in obs.bumps:
        by_site.setdefault(bump.site, []).append(bump.amount)
    located = [(site, amounts) for site, amounts in by_site.items() if obs.site(site)]
    if not located:
        return ""
    calls = len(obs.bumps)
    text = f"\n  LaunchCounter.bump was called {calls} time{'s' if calls != 1 else ''} during this step:"
    for site, amounts in located[:MAX_SHOWN_SITES]:
        added = sum(a for a in amounts if a >= 0)
        times = f"{len(amounts)} call{'s' if len(amounts) != 1 else ''}, {added} launch{'es' if added != 1 else ''}"
        text += site_lines(obs.site(site), "counted at", f"   ({times})")
    if len(located) > MAX_SHOWN_SITES:
        text += f"\n  and {len(located) - MAX_SHOWN_SITES} more places"
    return bounded(text)


def eager_run_at(obs: StepObservation) -> str:
    """When the step's launches were counted inside the submission's ``run_eager`` (its bump's
    innermost frame is in ``run_eager``), the line that called it: on a replay, the cause of one
    launch per op. "" otherwise: extra launches from anywhere else (a bump counted twice, say)
    are named by :func:`bumps_at` alone, never blamed on the ops being called, which every
    replay does to recompute them."""
    for bump in obs.bumps:
        frames = obs.site(bump.site)
        if len(frames) > 1 and frames[0].function == "run_eager":
            return bounded(
                "\n  the ops ran through run_eager on this replay, one launch per op:"
                + site_lines(frames[1:], "called at")
            )
    return ""


def key_at(obs: StepObservation, due: tuple[int, ...] | str | None) -> str:
    """A call whose path was chosen by a test that compared a value a function of the submission
    returned (a failed case's traced re-run notes it, with that value: ``compared``, else
    ``looked-up``, grader.observe.origins) when that value is not the key ``due`` (:func:`due_key`):
    where it was made; or, when it was computed from a batch size that is not the one due either
    (``return (batch, *x.shape[1:])`` with ``batch`` 9 where none fits), where that batch was made.
    "" when the key was the one due, or the call was not traced, or what is due is not known."""
    by_kind = {o.kind: o for o in obs.origin}
    made = by_kind.get("compared") or by_kind.get("looked-up")
    decided = by_kind.get("decided")
    if due is None or made is None or not made.valued or decided is None:
        return ""
    batch = due[0] if isinstance(due, tuple) and due else None  # "oversize": no key, no batch is due
    key = due if isinstance(due, tuple) else None
    value = made.value
    if (value == key if not isinstance(value, int) else value == batch) and not (
        due == "oversize" and value is not None
    ):
        return ""  # the key (or the batch it names) is the one due: the decision is not the cause
    operand = by_kind.get("operand")
    due_text = f"{list(key)}" if key is not None else "none (the batch is above every capture size)"
    if operand is not None and operand.valued and isinstance(operand.value, int) and operand.value != batch:
        lead, what = (
            operand.frame,
            f"the batch {operand.value} the key was made from; the batch due: {batch if batch is not None else 'none'}",
        )
    elif isinstance(value, int):  # a batch size the key is made of
        lead, what = (
            made.frame,
            f"the batch {value} the path was chosen by; the batch due: {batch if batch is not None else 'none'}",
        )
    else:
        shown = list(value) if isinstance(value, tuple) else value
        lead, what = made.frame, f"the key {shown} the path was chosen by; the key due: {due_text}"
    walked = by_kind.get("iterated")
    chosen = value if lead is made.frame else operand.value if operand is not None else None
    verb = "returned at" if lead.source.startswith("return") else "decided at"
    if walked is not None and isinstance(walked.value, tuple) and isinstance(batch, int) and isinstance(chosen, int):
        if batch not in walked.value:  # the test chose from values that never held the one due: their order or set
            lead, verb = walked.frame, "last set at"
            what = f"the sizes a test walked, {list(walked.value)}, to choose {chosen}: never {batch}, the batch due"
    return bounded(f"\n  {verb} {frame_text(lead)}   ({what})\n    then decided at {frame_text(decided.frame)}")


def earlier_key_at(case: Case, obs: tuple[StepObservation, ...], index: int) -> str:
    """A call of a GraphRunner whose path was chosen by the key due, yet cost the wrong launches:
    the first earlier call of the same runner whose path was chosen by a key other than its own
    due key (:func:`key_at`; it stored or looked up a graph under that key), named as that call's
    key; "" when there is none, or this call's key is not known to be the one due."""
    mine = {o.kind: o for o in obs[index].origin}
    made = mine.get("compared") or mine.get("looked-up")
    due = due_key(case, index)
    if made is None or not made.valued or not isinstance(due, tuple) or made.value != due:
        return ""
    target = case.steps[index].target
    for step in case.steps[:index]:
        if step.action == "call" and step.target == target:
            found = key_at(obs[step.index], due_key(case, step.index))
            if found:
                return bounded(f"\n  step {step.index + 1} chose its path by a key other than its own:" + found)
    return ""
