"""Similarity between submissions, for staff: which pairs to look at by hand.

Uses copydetect (maintained; winnowed k-gram fingerprints as in MOSS, over a
token stream where every variable, function and class name is one symbol and
comments and whitespace are gone, so renaming and re-commenting do not hide a
copy). Only copydetect's fingerprinting and pairwise comparison are used as a
library (``CodeFingerprint``, ``compare_files``): its ``CopyDetector`` compares
every ordered pair (twice the work) and its HTML report loads Bootstrap from a
CDN, so graphgrade renders its own self-contained side-by-side page.

- The student template's fingerprints are boilerplate: starter code every
  submission shares does not count.
- A pair's score is the larger of the two shares of each submission's
  fingerprinted tokens found in the other (so a copy that added code of its
  own is still found).
- The result goes to ``OUT/similarity.json`` and ``OUT/similarity.html`` and a
  "look at these pairs" block on ``OUT/summary.html``. It is never part of a
  score, and nothing of it reaches a student's report or results file.

copydetect is an optional extra (``pip install 'graphgrade[similarity]'``): it
pulls matplotlib, which a one-submission grading container has no use for.
Without it, a batch says so in one line and grades as before.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from grader import validation
from grader.commands.cli_common import Subcommand
from grader.commands.similarity_compare import (  # noqa: F401 - re-exported: the comparison's names
    DEFAULT_THRESHOLD,
    MAX_PAIRS_SHOWN,
    MISSING,
    NOISE_K,
    WINDOW,
    Comparison,
    ComparisonFailed,
    PairDetail,
    SimilarityUnavailable,
    SimilarPair,
    compare,
    covered_tokens,
    prints_of,
    stable_kgram_hashes,
)
from grader.commands.similarity_sources import MAX_SOURCE_CHARS, default_template, submission_source  # noqa: F401
from grader.errors import UsageError
from grader.validation import Invalid

FORMAT = 1
CACHE_FORMAT = 1  # of a comparison kept in grade's cache (comparison_to_json)


def to_json(result: Comparison) -> dict:
    return {
        "format": FORMAT,
        "tool": result.tool,
        "noise_tokens": NOISE_K,
        "window": WINDOW,
        "threshold": result.threshold,
        "submissions": result.n,
        "not_compared": list(result.skipped),
        "note": "For staff: pairs to read by hand. Never part of a score, never shown to students.",
        "pairs": [asdict(p) for p in result.pairs],
    }


def write_outputs(result: Comparison, out: Path, reports=None, report_dirs=None) -> None:
    """OUT/similarity.json, OUT/similarity.html, and summary.html again with the pairs on it
    (when the batch's reports are given)."""
    from reports import report_link, write_batch_outputs, write_file
    from reports.similarity_html import render_similarity, summary_rows

    write_file(out / "similarity.json", json.dumps(to_json(result), indent=1) + "\n")
    write_file(
        out / "similarity.html",
        render_similarity(result.details[:MAX_PAIRS_SHOWN], result.n, result.threshold, len(result.details)),
    )
    if reports is not None:
        links = {Path(d).name: report_link(d, out) for d in report_dirs}
        write_batch_outputs(
            reports,
            report_dirs,
            out,
            similar_pairs=summary_rows(result.pairs[:MAX_PAIRS_SHOWN], links, len(result.pairs)),
        )


def _check_threshold(value: float) -> float:
    if not 0 < value <= 1:
        raise UsageError(f"--similarity-threshold is a share from 0 to 1 (0.5 = half the code), not {value:g}")
    return value


def _existing_path(text: str) -> Path:
    """argparse type for the starter code: a path that is not there would count it as copied."""
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{text}: no such file or directory")
    return path


def _threshold(text: str) -> float:
    """argparse type: refused before any grading starts."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1:  # NaN fails too
        raise argparse.ArgumentTypeError(f"a share from 0 to 1 (0.5 = half the code), not {text!r}")
    return value


def _compare_paths(
    sources: dict[str, Path], template: Path | None, threshold: float, cache_dir: Path | None = None
) -> Comparison:
    """:func:`compare` on the submissions' files (read here) with the starter code as boilerplate.

    With ``cache_dir`` (grade's observation cache), a batch compared before, with the same
    sources, names, starter code, threshold and copydetect, is read back instead: a regrade after
    a spec edit changes no source, and fingerprinting is most of the comparison's time."""
    texts = {name: submission_source(path) for name, path in sources.items()}
    boilerplate = submission_source(template or default_template())
    cache = key = None
    if cache_dir is not None:
        from grader.run.cache import ObservationCache

        try:
            cache = ObservationCache(cache_dir)
        except UsageError:
            cache = None
        key = comparison_key(texts, boilerplate, threshold)
        text = cache.get_text(key) if cache is not None else None
        if text is not None:
            try:
                return comparison_from_json(text)
            except (Invalid, ValueError, RecursionError):
                pass  # a damaged or foreign entry: compared again, and written anew
    result = compare(texts, boilerplate, threshold)
    if cache is not None:
        cache.put(key, {"text": json.dumps(comparison_to_json(result))})
    return result


def comparison_key(texts: dict[str, str], boilerplate: str, threshold: float) -> str:
    """A batch's comparison in the cache: everything its result depends on."""
    import hashlib
    from importlib import metadata

    try:
        version = metadata.version("copydetect")
    except metadata.PackageNotFoundError:
        version = "?"
    digest = hashlib.sha256()
    header = f"similarity {CACHE_FORMAT} copydetect {version} {NOISE_K} {WINDOW} {MAX_PAIRS_SHOWN} {threshold!r}"
    for part in (header, boilerplate, *itertools.chain.from_iterable(texts.items())):
        digest.update(len(part).to_bytes(8, "big") + part.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def comparison_to_json(result: Comparison) -> dict:
    """A comparison as the cache keeps it (every field; read back by :func:`comparison_from_json`)."""
    return {
        "format": CACHE_FORMAT,
        "n": result.n,
        "threshold": result.threshold,
        "seconds": result.seconds,
        "skipped": list(result.skipped),
        "tool": result.tool,
        "details": [
            {
                "pair": asdict(d.pair),
                "a_code": d.a_code,
                "b_code": d.b_code,
                "a_spans": [list(s) for s in d.a_spans],
                "b_spans": [list(s) for s in d.b_spans],
            }
            for d in result.details
        ],
    }


def comparison_from_json(text: str) -> Comparison:
    """A cached comparison, every field checked; raises :class:`grader.validation.Invalid`."""
    data = validation.known_keys(json.loads(text), _CACHED_KEYS, "comparison")
    if data.get("format") != CACHE_FORMAT:
        raise Invalid("another format", "comparison.format")
    n = validation.required(data, "n", int, "comparison", 0)
    threshold = validation.required(data, "threshold", float, "comparison", 0)
    seconds = validation.required(data, "seconds", float, "comparison", 0)
    tool = validation.required(data, "tool", str, "comparison", 200)
    skipped = tuple(
        validation.text(s, f"comparison.skipped[{i}]", 1000)
        for i, s in enumerate(validation.bounded_list(data.get("skipped"), "comparison.skipped", n))
    )
    details = []
    for i, raw in enumerate(validation.bounded_list(data.get("details"), "comparison.details", n * n)):
        at = f"comparison.details[{i}]"
        detail = validation.known_keys(raw, _DETAIL_KEYS, at)
        pair = validation.known_keys(detail.get("pair"), _PAIR_KEYS, f"{at}.pair")
        spans = [
            tuple(
                _span(span, f"{at}.{side}[{j}]")
                for j, span in enumerate(validation.bounded_list(detail.get(side), f"{at}.{side}", MAX_SOURCE_CHARS))
            )
            for side in ("a_spans", "b_spans")
        ]
        details.append(
            PairDetail(
                SimilarPair(
                    validation.required(pair, "a", str, f"{at}.pair", 1000),
                    validation.required(pair, "b", str, f"{at}.pair", 1000),
                    validation.required(pair, "score", float, f"{at}.pair", 0),
                    validation.required(pair, "a_share", float, f"{at}.pair", 0),
                    validation.required(pair, "b_share", float, f"{at}.pair", 0),
                    validation.required(pair, "tokens", int, f"{at}.pair", 0),
                ),
                validation.required(detail, "a_code", str, at, MAX_SOURCE_CHARS),
                validation.required(detail, "b_code", str, at, MAX_SOURCE_CHARS),
                spans[0],
                spans[1],
            )
        )
    return Comparison(n, threshold, tuple(details), seconds, skipped, tool, from_cache=True)


def _span(value, where: str) -> tuple[int, int]:
    """A copied span, ``[start, end]`` in the source's characters, as copydetect gave it (it may
    give one that ends before it starts; the page's renderer reads that as empty)."""
    if not isinstance(value, list) or len(value) != 2:
        raise Invalid("expected [start, end]", where)
    start, end = (validation.integer(v, f"{where}[{k}]", 0, MAX_SOURCE_CHARS + 1) for k, v in enumerate(value))
    return start, end


_CACHED_KEYS = frozenset({"format", "n", "threshold", "seconds", "skipped", "tool", "details"})
_DETAIL_KEYS = frozenset({"pair", "a_code", "b_code", "a_spans", "b_spans"})
_PAIR_KEYS = frozenset({"a", "b", "score", "a_share", "b_share", "tokens"})


def _compare_in_child(
    send, sources: dict[str, Path], template: Path | None, threshold: float, cache_dir: Path | None
) -> None:
    """The background process's whole job: compare, send back the result or the error, exit."""
    try:
        os.nice(10)  # the grading comes first; this takes the CPU time grading leaves idle
    except OSError:
        pass
    try:
        outcome: object = _compare_paths(sources, template, threshold, cache_dir)
    except SimilarityUnavailable as exc:
        outcome = exc
    except Exception as exc:  # noqa: BLE001 - sent back as text: the grader reports it in one line
        outcome = ComparisonFailed(f"{type(exc).__name__}: {exc}")
    send.send(outcome)
    send.close()


class BackgroundComparison:
    """The similarity of a batch, computed in a process of its own while the batch is graded.

    Nothing in it depends on a grade, only on the submissions' files, and it is pure Python
    (copydetect tokenises with pygments): after the grading, it held up the batch's end by
    about 0.1 s of CPU per submission, plus copydetect's import (matplotlib). Started first and
    niced, it takes the CPU time the grading leaves idle. A fresh interpreter ("spawn"), never a
    fork of the grader: it holds no spec, no case and no worker's descriptor, and it runs no
    submission code (it only reads the files, as the grader's copy step does), and imports
    nothing from the current folder (:mod:`grader.trusted_path`)."""

    def __init__(
        self, sources: dict[str, Path], template: Path | None, threshold: float, cache_dir: Path | None = None
    ) -> None:
        import multiprocessing

        from grader.trusted_path import StartedInSafeFolder

        # its paths are whole: on Python 3.10 it starts in another folder (trusted_path)
        sources = {name: Path(os.path.abspath(path)) for name, path in sources.items()}
        template = Path(os.path.abspath(template)) if template is not None else None
        cache_dir = Path(os.path.abspath(cache_dir)) if cache_dir is not None else None
        context = multiprocessing.get_context("spawn")
        self._receive, send = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_compare_in_child,
            args=(send, sources, template, threshold, cache_dir),
            name="graphgrade-similarity",
            daemon=True,
        )
        with StartedInSafeFolder():  # its interpreter imports nothing from the current folder
            self._process.start()
        send.close()  # only the child writes: its end closing is how a crash shows (EOFError)

    def result(self) -> Comparison:
        """The comparison; raises SimilarityUnavailable or ComparisonFailed."""
        try:
            outcome = self._receive.recv()
        except EOFError:
            self._process.join()
            raise ComparisonFailed(
                f"the comparing process ended without a result (exit status {self._process.exitcode})"
            ) from None
        finally:
            self._receive.close()
        self._process.join()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    @property
    def pid(self) -> int | None:
        return self._process.pid

    def cancel(self) -> None:
        """Stop it (the grading was interrupted)."""
        self._process.kill()
        self._process.join()
        self._receive.close()


def start_for_batch(
    args: argparse.Namespace, names: Sequence[str], paths: Sequence[Path], cache_dir: Path | None = None
) -> BackgroundComparison | None:
    """Called by `graphgrade grade` (before grading) and `graphgrade merge`: start comparing the
    batch's submissions, named as their output folders, when asked and there are two or more.
    ``cache_dir``: grade's cache, where a comparison is kept for the next regrade."""
    if not getattr(args, "similarity", False) or len(paths) < 2:
        return None
    _check_threshold(args.similarity_threshold)
    return BackgroundComparison(
        dict(zip(names, map(Path, paths))), args.similarity_template, args.similarity_threshold, cache_dir
    )


def after_grading(args: argparse.Namespace, graded: Sequence, background: BackgroundComparison | None) -> None:
    """Called by `graphgrade grade` after a batch: write what ``background`` found."""
    if background is None:
        return
    threshold = args.similarity_threshold
    try:
        result = background.result()
        write_outputs(result, args.out, [g.report for g in graded], [g.out_dir for g in graded])
    except SimilarityUnavailable as exc:
        print(f"graphgrade: {exc}", file=sys.stderr)
        return
    except ComparisonFailed as exc:
        print(f"graphgrade: similarity check failed ({exc}); the grades and reports are complete", file=sys.stderr)
        return
    except Exception as exc:  # noqa: BLE001 - the grades are written already: never lose them for this
        print(
            f"graphgrade: similarity check failed ({type(exc).__name__}: {exc}); the grades and reports are complete",
            file=sys.stderr,
        )
        return
    took = "from the cache" if result.from_cache else f"{result.seconds:.1f} s, beside the grading"
    print(
        f"similarity: {len(result.details)} pair{'s' if len(result.details) != 1 else ''} at or above {threshold:g} among {result.n} submissions "
        f"({took}); see {args.out}/similarity.html (staff only)",
        file=sys.stderr,
    )


def run(args: argparse.Namespace) -> int:
    from grader.commands.grade import unique_names
    from grader.judging.report_reading import ReportError, read_report

    paths = [Path(p) for p in args.submissions]
    for p in paths:
        if not p.exists():
            raise UsageError(f"{p}: no such file or directory")
    if len(paths) < 2:
        raise UsageError("give two or more submissions to compare")
    threshold = _check_threshold(args.similarity_threshold)
    names = unique_names(paths)  # the names `graphgrade grade` gives the same list
    try:
        result = _compare_paths(dict(zip(names, paths)), args.similarity_template, threshold)
    except SimilarityUnavailable as exc:
        raise UsageError(str(exc)) from None
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot make the folder ({exc.strerror or exc})") from None
    dirs = [args.out / n for n in names]
    reports = None
    if all((d / "report.json").is_file() for d in dirs):  # a graded batch: put the pairs on its summary
        try:
            reports = [read_report(d / "report.json") for d in dirs]
        except ReportError as exc:
            print(f"graphgrade: {exc}; summary.html left as it was", file=sys.stderr)
            reports = None
    try:
        write_outputs(result, args.out, reports, dirs if reports is not None else None)
    except OSError as exc:
        raise UsageError(f"--out {args.out}: cannot write the similarity files ({exc.strerror or exc})") from None
    for p in result.pairs:
        print(f"{p.score:.2f}  {p.a}  {p.b}")
    print(
        f"{len(result.details)} pairs at or above {threshold:g} among {result.n} submissions in {result.seconds:.1f} s; "
        f"wrote {args.out}/similarity.json and similarity.html",
        file=sys.stderr,
    )
    return 0


def _common_options(p, template_flag: str) -> None:
    p.add_argument(
        "--similarity-threshold",
        type=_threshold,
        default=DEFAULT_THRESHOLD,
        metavar="SHARE",
        help=f"list pairs where at least this share of one submission's code is found in the other (default: {DEFAULT_THRESHOLD})",
    )
    p.add_argument(
        template_flag,
        dest="similarity_template",
        type=_existing_path,
        default=None,
        metavar="PATH",
        help="starter code every student got, ignored when comparing (default: the bundled student_template/)",
    )


def add_grade_options(g) -> None:
    """The similarity options of `graphgrade grade` (a batch of two or more)."""
    g.add_argument(
        "--similarity",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="for a batch of two or more, compare submissions with each other and write OUT/similarity.json, "
        "OUT/similarity.html and 'look at these pairs' on summary.html, for staff (default: on; needs graphgrade[similarity])",
    )
    _common_options(g, "--similarity-template")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "submissions", nargs="+", metavar="SUBMISSION", help="the submissions, as given to `graphgrade grade`"
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("graphgrade-out"),
        help="output directory, the batch's --out (default: graphgrade-out)",
    )
    _common_options(p, "--template")


COMMAND = Subcommand(
    "similarity",
    help="compare submissions with each other (copydetect) and list the pairs to look at, for staff",
    description=(
        "Compare every pair of submissions (winnowed fingerprints, names and comments ignored, the student template "
        "as boilerplate) and write OUT/similarity.json and OUT/similarity.html; when OUT holds the graded batch, "
        "summary.html gets a 'look at these pairs' block. Never part of a score."
    ),
    add_arguments=add_arguments,
    run=run,
)
