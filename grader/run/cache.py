"""The observation cache: instant regrades.

What a worker observes in a case is a function of the submission's files, the case's steps
and the runtime (grader version, Python and numpy versions, backend, isolation mode, limits,
trusted import paths); a case's checks and points play no part in it. So observations are
kept under that key, and a regrade judges them again without running anything: editing a
check, an expected value or points rejudges the whole class from the cache; editing one
spec's steps reruns only that spec's cases.

Only cases that were *observed* are kept (a timeout or a crash may be the machine's fluke,
and is cheap to run again), and only for submissions that imported. A submission's cases are
kept together, in one JSON file per submission and runtime: its format version, its own key,
the submission's output tail and, under each case's key, the case id, the worker's
observation frame, which is validated again by :func:`grader.observations.decode_observations`
when read, and the digest of what judging reads of it (:func:`case_digest`: a regrade that
finds its inputs unchanged compares digests and decodes nothing). One file per submission, not per case: a cold run writes one file where it wrote a
hundred (each a temporary file, a rename and a directory entry, which cost more than judging
the case), and a regrade reads one. A file that is unreadable, of another format or filed
under a key that is not its own is ignored whole; a case entry that does not decode is ignored
alone; either is rewritten once its cases have run again.

The cache holds hidden cases' observations (what a submission returned for hidden inputs),
so it is staff-only: its directory is made mode 0700 and must belong to the grader's user;
the grader refuses a directory anyone else can enter. Only the grader process reads and
writes it, and its report writers read it (forked from it before any thread starts, running no
submission code: see grader.commands.report_writers); workers (other uids, confined by Landlock to their submission and scratch) never
see it.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import platform
import stat
import sys
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy
import orjson

import grader
from grader import framing, observations
from grader.errors import UsageError
from grader.run.copying import SubmissionProblem, module_file_name, walk_submission
from grader.run.runner import CaseRun, RunSettings, SubmissionRun, run_submission
from grader.spec_model import Case

FORMAT = 2  # 2: a submission's cases in one file (1: a file per case, no longer read)
BACKEND = "numpy-cpu"  # the workers run the submission on numpy, on the CPU
MAX_ENTRY_BYTES = 2 * framing.MAX_FRAME_BYTES  # a text entry (see get_text)
# A case whose observation frame is larger is not kept (it runs again on every regrade), so that
# a submission's file stays small enough to read whole: at most MAX_SUBMISSION_BYTES, cases
# beyond it are not kept either.
MAX_CACHED_FRAME = 1 << 20
MAX_SUBMISSION_BYTES = 16 << 20


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "graphgrade"


def source_digest(package: Path) -> str:
    """A digest of every Python file under ``package``, by path and bytes."""
    h = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        h.update(path.relative_to(package).as_posix().encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def grader_source_digest() -> str:
    """The grader's own source, in the cache key: a version number stays the same across the
    changes made between releases (an editable install, a checkout being worked on), and an
    observation recorded by other worker code must never be used."""
    return source_digest(Path(grader.__file__).resolve().parent)


def lab_digest(lab=None) -> str:
    """The active lab's ``lab.yaml`` and its pack's Python (the values, entry points and probes a
    worker uses): an observation made under another lab, or another version of it, is never used."""
    from grader.lab import active as active_lab

    lab = lab if lab is not None else active_lab()
    h = hashlib.sha256(b"graphgrade lab 1\0")
    hash_part(h, (lab.root / "lab.yaml").read_bytes())
    hash_part(h, (source_digest(lab.paths.pack) if lab.paths.pack is not None else "").encode())
    return h.hexdigest()


def runtime_key(settings: RunSettings) -> str:
    """Everything besides the submission and the case that can change what a worker observes."""
    facts = {
        "format": FORMAT,
        "grader": grader.__version__,
        "grader_source": grader_source_digest(),
        "lab": lab_digest(),
        "observation": framing.OBSERVATION_VERSION,  # what a worker records (2: the submission's own lines; 3: each graph entry's identity)
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "numpy": numpy.__version__,
        "backend": BACKEND,
        "isolation": settings.isolation,
        "limits": settings.limits.__dict__,
        "import_paths": list(settings.import_paths),
        # a lower time limit must not pass a case that ran long under a higher one
        "case_timeout_s": settings.case_timeout_s,
        "import_timeout_s": settings.import_timeout_s,
        "submission_budget_s": settings.submission_budget_s,
        "landlock": settings.landlock,
        "tail_bytes": settings.tail_bytes,
    }
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def hash_part(h, data: bytes, tag: bytes = b"") -> None:
    """Feed one part of a digest's input: its tag, its length, then its bytes, so that no part's
    bytes can spell another's (the one place a hash input is length-prefixed)."""
    h.update(tag + len(data).to_bytes(8, "little") + data)


def submission_hash(submission: Path) -> str | None:
    """What a worker sees of a submission, or None when it cannot be read (the run reports why):
    its form (a lone file, or a folder), every entry the copy makes (each folder by its name,
    empty ones included, and each regular file by its name and bytes), as
    ``copying.copy_submission`` selects them. Every part is tagged and length-prefixed, so no
    file's bytes can spell another tree's key material: two submissions share an entry only
    when their workers would find the same tree."""
    h = hashlib.sha256(b"graphgrade submission tree 2\0")

    def part(tag: bytes, data: bytes) -> None:
        hash_part(h, data, tag)

    try:
        if submission.is_file():
            part(b"form", b"file")
            part(b"file", module_file_name().encode())
            part(b"data", submission.resolve().read_bytes())
            return h.hexdigest()
        part(b"form", b"folder")
        folders, regular = walk_submission(submission)  # bounded and iterative, as the copy is
        for rel in sorted(folders):
            part(b"dir", rel.encode("utf-8", "surrogateescape"))
        for rel in sorted(regular):
            part(b"file", rel.encode("utf-8", "surrogateescape"))
            part(b"data", (submission / rel).read_bytes())
    except (OSError, SubmissionProblem):
        return None
    return h.hexdigest()


@dataclass(frozen=True)
class StoredSubmission:
    """What the cache holds of one submission: its output tail (None: nothing usable) and, per
    case key, the case's entry as stored (checked when it is used, by :meth:`ObservationCache.case_run`)."""

    output_tail: str | None
    cases: dict[str, dict]
    # the time a grading's report gave for the whole run, per set of cases (see runs_key)
    durations: dict[str, float] = field(default_factory=dict)

    def run_duration(self, keys: list[str], found) -> float:
        """The whole run's time as the grading of these cases that stored it reported it (so a
        regrade's report says what that grading's said, and is written again only when
        something else changed), else the sum of its cases'."""
        held = self.durations.get(runs_key(keys))
        return held if held is not None else sum(r.duration_s for r in found)


MAX_DURATIONS = 8  # sets of cases (suites, --visibility) whose run time a submission's entry keeps


def runs_key(keys: list[str]) -> str:
    """The set of cases a grading judged, as a key of :attr:`StoredSubmission.durations`."""
    return hashlib.sha256("\0".join(keys).encode()).hexdigest()[:32]


NOTHING_STORED = StoredSubmission(None, {})


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    ignored: int = 0  # corrupted or foreign entries


class ObservationCache:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.stats = CacheStats()
        self._lock = threading.Lock()
        _private_dir(directory)
        try:
            (directory / f"v{FORMAT}").mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"--cache {directory}: cannot write to the cache directory ({exc.strerror})") from None

    def holds(self, key: str) -> bool:
        """Whether a submission's entry is stored under ``key`` (whole or not: a reader checks)."""
        return self._path(key).is_file()

    def _path(self, key: str) -> Path:
        return self.dir / f"v{FORMAT}" / key[:2] / f"{key}.json"

    def read_submission(self, key: str, looked_up: int) -> StoredSubmission:
        """The entry of one submission; :data:`NOTHING_STORED` when there is none, or when it is
        unreadable, of another format or not filed under its own key (then the ``looked_up``
        cases the caller wanted from it count as ignored)."""
        try:
            with open(self._path(key), "rb") as f:
                raw = f.read(MAX_SUBMISSION_BYTES + 1)
        except OSError:
            return NOTHING_STORED
        try:
            entry = json.loads(raw)
            if (
                len(raw) > MAX_SUBMISSION_BYTES
                or not isinstance(entry, dict)
                or entry.get("format") != FORMAT
                or entry.get("key") != key
                or not isinstance(entry.get("output_tail"), str)
                or not isinstance(entry.get("cases"), dict)
            ):
                raise ValueError("not an entry for this key")
        except (ValueError, RecursionError):
            self._ignored(looked_up)
            return NOTHING_STORED
        durations = entry.get("durations")
        if not isinstance(durations, dict):
            durations = {}
        durations = {
            k: float(d)
            for k, d in list(durations.items())[:MAX_DURATIONS]
            if isinstance(d, (int, float)) and not isinstance(d, bool) and 0 <= d < float("inf")
        }
        return StoredSubmission(entry["output_tail"], entry["cases"], durations)

    def case_run(self, entry: object, case: Case) -> CaseRun | None:
        """The observed run of ``case`` from its stored entry; None when there is none, or when
        it is not whole (counted as ignored: the case runs again)."""
        if entry is None:
            return None
        try:
            if not isinstance(entry, dict) or entry.get("case") != case.uid:
                raise ValueError("not an entry for this case")
            frame = base64.b64decode(entry["frame"], validate=True)
            observation = observations.decode_observations(frame, case.uid, len(case.steps))
            tail, duration = entry["output_tail"], entry["duration_s"]
            if not isinstance(tail, str) or not isinstance(duration, (int, float)) or isinstance(duration, bool):
                raise ValueError("bad fields")
        except (ValueError, TypeError, KeyError, RecursionError, observations.ProtocolError):
            self._ignored(1)
            return None
        return CaseRun(
            uid=case.uid,
            status="observed",
            observation=observation,
            message="",
            output_tail=tail,
            duration_s=float(duration),
            frame=frame,
        )

    def _ignored(self, n: int) -> None:
        with self._lock:
            self.stats.ignored += n

    def get_text(self, key: str) -> str | None:
        try:
            with open(self._path(key), "rb") as f:
                raw = f.read(MAX_ENTRY_BYTES + 1)
            if len(raw) > MAX_ENTRY_BYTES:  # not one the grader wrote: ignored, like a damaged one
                return None
            entry = json.loads(raw)
            if (
                isinstance(entry, dict)
                and entry.get("format") == FORMAT
                and entry.get("key") == key
                and isinstance(entry.get("text"), str)
            ):
                return entry["text"]
        except (OSError, ValueError, RecursionError):
            pass
        return None

    def put(self, key: str, entry: dict) -> None:
        path = self._path(key)
        whole = {"format": FORMAT, "key": key, **entry}
        try:  # a submission's entry is ~0.5 MB of JSON: orjson writes it 30x faster than json
            data = orjson.dumps(whole)
        except orjson.JSONEncodeError:  # a lone surrogate (an output tail), an integer past 64 bits
            data = json.dumps(whole).encode()
        try:
            path.parent.mkdir(mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError:
            pass  # a full or read-only cache costs speed, never a grade


def case_digest(frame: bytes, output_tail: str, duration_s: float) -> bytes:
    """What judging reads of one case's run (see grader.commands.rejudging)."""
    h = hashlib.sha256(b"case\0")
    hash_part(h, frame)
    hash_part(h, output_tail.encode("utf-8", "surrogateescape"))
    hash_part(h, repr(float(duration_s)).encode())
    return h.digest()


def case_entry(run: CaseRun) -> dict | None:
    """What the cache keeps of a case that ran: only an observed one, with a frame of bounded size,
    and :func:`case_digest` of it, so that a regrade that finds its inputs unchanged need not
    decode the frame to know it (an entry without one, of an older grader, is decoded for it)."""
    if run.status != "observed" or not run.frame or len(run.frame) > MAX_CACHED_FRAME:
        return None
    return {
        "case": run.uid,
        "frame": base64.b64encode(run.frame).decode(),
        "output_tail": run.output_tail,
        "duration_s": run.duration_s,
        "digest": case_digest(run.frame, run.output_tail, run.duration_s).hex(),
    }


def within_budget(cases: dict[str, object], first: list[str]) -> dict[str, dict]:
    """``cases`` as one submission's file keeps them: the keys in ``first`` (this run's cases)
    first, then at most as many others (a run with other specs, the kit's visible ones say,
    finds its own again; older ones go), each while the file stays under MAX_SUBMISSION_BYTES
    (counting every character of an output tail as JSON's longest escape)."""
    current = set(first)
    kept: dict[str, dict] = {}
    size = others = 0
    for key in dict.fromkeys([*first, *cases]):
        entry = cases.get(key)
        if not isinstance(entry, dict):
            continue  # not this run's, and not an entry: dropped
        if key not in current:
            if others == len(current):
                break
            others += 1
        size += 256 + len(key) + sum(6 * len(v) for v in entry.values() if isinstance(v, str))
        if size > MAX_SUBMISSION_BYTES:
            break
        kept[key] = entry
    return kept


def _private_dir(directory: Path) -> None:
    """Make (or check) the cache directory: owned by this user, mode 0700."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.stat(directory)
    except OSError as exc:
        raise UsageError(f"--cache {directory}: cannot make the cache directory ({exc.strerror})") from None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise UsageError(
            f"--cache {directory}: not a directory of this user; the cache holds hidden cases' observations and must be private (or use --no-cache)"
        )
    if st.st_mode & 0o077:
        try:
            os.chmod(directory, 0o700)
        except OSError as exc:
            raise UsageError(f"--cache {directory}: cannot make it private (mode 0700): {exc.strerror}") from None


def case_key(runtime: str, submission: str, message: bytes, hidden: bool = False) -> str:
    """A case's entry: its runtime, submission and steps, and whether it ran as a hidden case.
    Hidden cases run last, after others, so what one observed (its output tail) may hold other
    hidden cases' inputs; were its spec made visible, it must run again, not be shown from here."""
    return hashlib.sha256(
        b"case\0" + runtime.encode() + b"\0" + submission.encode() + b"\0" + (b"h\0" if hidden else b"v\0") + message
    ).hexdigest()


def submission_key(runtime: str, submission: str) -> str:
    """A submission's entry: everything its cases' keys share."""
    return hashlib.sha256(b"submission\0" + runtime.encode() + b"\0" + submission.encode()).hexdigest()


def cache_keys(submission: Path, settings: RunSettings, messages, redacted) -> tuple[str, list[str]] | None:
    """The key of a submission's entry and of each of its cases; None when the submission cannot
    be read (nothing is stored for it)."""
    digest = submission_hash(submission)
    if digest is None:
        return None
    runtime = runtime_key(settings)
    hidden = redacted if redacted is not None else (False,) * len(messages)
    keys = [case_key(runtime, digest, message, h) for message, h in zip(messages, hidden)]
    return submission_key(runtime, digest), keys


def run_with_cache(
    cache: ObservationCache,
    zygote,
    area,
    slot: int,
    submission: Path,
    cases: tuple[Case, ...],
    settings: RunSettings,
    messages,
    look_ahead,
    redacted,
    judged_apart: bool = False,
    count: bool = True,
) -> SubmissionRun | None:
    """:func:`grader.run.runner.run_submission`, running only the cases the cache does not hold.

    With ``judged_apart`` (a report process judges from the cache: see grader.commands.grade),
    the stored cases are not decoded here: once the missing ones have run and been stored, None
    says that the cache now holds the submission whole; a run is returned as usual when it does
    not (a case that timed out, crashed or sent too large a frame is never stored; a submission
    that no longer imports). ``count``: False when this submission's cases were already counted
    in the cache's statistics (a second pass)."""
    keyed = cache_keys(submission, settings, messages, redacted)
    if keyed is None:  # nothing will be stored: no raw frame is kept past decoding
        return run_submission(zygote, area, slot, submission, cases, settings, messages, look_ahead, redacted)
    entry_key, keys = keyed
    stored = cache.read_submission(entry_key, len(cases))
    found: list[CaseRun | None]
    if judged_apart:  # decoded later, by the report process; an entry it cannot decode, it says so
        found = [None] * len(cases)
        missing = [i for i, key in enumerate(keys) if not isinstance(stored.cases.get(key), dict)]
    else:
        found = [cache.case_run(stored.cases.get(key), case) for key, case in zip(keys, cases)]
        missing = [i for i, run in enumerate(found) if run is None]
    with cache._lock:
        if count:
            cache.stats.hits += len(cases) - len(missing)
            cache.stats.misses += len(missing)
        else:  # a second pass: every case was counted as held; those that did not decode were not
            cache.stats.hits -= len(missing)
            cache.stats.misses += len(missing)
    if not missing and stored.output_tail is not None:
        if judged_apart:
            return None
        return SubmissionRun("", tuple(found), stored.output_tail, stored.run_duration(keys, found))
    if len(missing) == len(cases):
        fresh = run_submission(
            zygote, area, slot, submission, cases, settings, messages, look_ahead, redacted, MAX_CACHED_FRAME
        )
    else:
        wanted = set(missing)
        sub_look = tuple(look_ahead[i] and i + 1 in wanted for i in missing) if look_ahead is not None else None
        fresh = run_submission(
            zygote, area, slot, submission, tuple(cases[i] for i in missing), settings,
            tuple(messages[i] for i in missing), sub_look, tuple(redacted[i] for i in missing) if redacted is not None else None,
            MAX_CACHED_FRAME,
        )  # fmt: skip
    if fresh.problem:  # the submission does not import (now): nothing is kept, the run stands alone
        if len(missing) != len(cases):  # (nor stored: no raw frame kept)
            return run_submission(zygote, area, slot, submission, cases, settings, messages, look_ahead, redacted)
        return fresh
    entries = dict(stored.cases)  # other specs' cases stay, for a run with those specs
    stored_all = True
    for i, run in zip(missing, fresh.cases):
        entry = case_entry(run)
        if entry is None:
            entries.pop(keys[i], None)  # a damaged entry goes; a timeout is not kept
            stored_all = False
        else:
            entries[keys[i]] = entry
        # a stored case keeps its frame until judged: what it was judged from is recorded (rejudging)
        found[i] = run if entry is not None else replace(run, frame=b"")
    kept = within_budget(entries, keys)
    this = runs_key(keys)  # this grading's first, then older ones
    durations = {this: fresh.duration_s, **{k: d for k, d in stored.durations.items() if k != this}}
    durations = dict(list(durations.items())[:MAX_DURATIONS])
    cache.put(entry_key, {"output_tail": fresh.output_tail, "durations": durations, "cases": kept})
    if judged_apart:
        if stored_all and all(key in kept for key in keys):
            return None
        wanted = set(missing)  # decoded here after all: the report process could not judge from the cache
        for i, (key, case) in enumerate(zip(keys, cases)):
            if i not in wanted:
                found[i] = cache.case_run(stored.cases.get(key), case)
        if any(run is None for run in found):  # an entry that does not decode: that case runs again
            return run_with_cache(
                cache, zygote, area, slot, submission, cases, settings, messages, look_ahead, redacted, count=False
            )
    return SubmissionRun("", tuple(found), fresh.output_tail, fresh.duration_s)  # type: ignore[arg-type]
