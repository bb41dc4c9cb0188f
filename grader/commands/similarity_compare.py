"""The comparison itself: copydetect's fingerprints of each submission's source, and every
unordered pair scored at once (see :mod:`grader.commands.similarity` for what it is for).

Memory is bounded by the class, never by one submission: each source is at most
:data:`grader.commands.similarity_sources.MAX_SOURCE_CHARS`, and :func:`covered_tokens` works
through a submission's fingerprints in blocks of at most :data:`BLOCK_ELEMENTS` cells of its
(positions x submissions) matrices, so a padded submission costs time in proportion to its
size, not a matrix as large as it times the class.
"""

from __future__ import annotations

import io
import os
import tempfile
import time
from dataclasses import dataclass

DEFAULT_THRESHOLD = 0.5
NOISE_K = 25  # copydetect's default noise threshold: matches shorter than 25 tokens never count
WINDOW = 4  # winnowing window: any match of NOISE_K + WINDOW - 1 tokens is guaranteed to be found
MAX_PAIRS_SHOWN = 50  # on summary.html and similarity.html; similarity.json lists them all
MISSING = "similarity check skipped: copydetect is not installed (pip install 'graphgrade[similarity]')"
BLOCK_ELEMENTS = 1 << 20  # cells of one block of covered_tokens' matrices (8 MiB as int64)


class SimilarityUnavailable(RuntimeError):
    pass


class ComparisonFailed(RuntimeError):
    """The background comparison failed or its process ended; the text says how, in one line."""


@dataclass(frozen=True)
class SimilarPair:
    a: str
    b: str
    score: float  # max(a_share, b_share)
    a_share: float  # share of a's fingerprinted tokens also in b
    b_share: float
    tokens: int  # tokens of a that overlap b


@dataclass(frozen=True)
class PairDetail:
    """A flagged pair with what the side-by-side page needs: both sources and the copied spans."""

    pair: SimilarPair
    a_code: str
    b_code: str
    a_spans: tuple[tuple[int, int], ...]
    b_spans: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Comparison:
    n: int
    threshold: float
    details: tuple[PairDetail, ...]  # score order, highest first
    seconds: float
    skipped: tuple[str, ...] = ()  # submissions with nothing to compare
    tool: str = ""  # "copydetect <version>", as similarity.json names it
    from_cache: bool = False  # read back from the cache (see _compare_paths)

    @property
    def pairs(self) -> tuple[SimilarPair, ...]:
        return tuple(d.pair for d in self.details)


def _copydetect():
    try:
        os.environ.setdefault("MPLBACKEND", "Agg")  # copydetect imports pyplot; never a display
        if "MPLCONFIGDIR" not in os.environ:  # no warning where HOME is not writable (a container user)
            os.environ["MPLCONFIGDIR"] = os.path.join(tempfile.gettempdir(), f"graphgrade-mpl-{os.geteuid()}")
        import copydetect
        import copydetect.utils
    except ImportError:
        raise SimilarityUnavailable(MISSING) from None
    copydetect.utils.hashed_kgrams = stable_kgram_hashes  # see its docstring
    return copydetect


def stable_kgram_hashes(string: str, k: int):
    """copydetect's ``hashed_kgrams`` with a hash that is the same in every process.

    copydetect hashes each k-gram with Python's ``hash()``, which is salted per process
    (PYTHONHASHSEED): winnowing then keeps other fingerprints in every run, and a pair's
    score moves (99% in one run, 100% in the next), so a regrade would not reproduce its
    summary. An 8-byte BLAKE2b of each k-gram keeps copydetect's algorithm and makes it
    reproducible."""
    import hashlib

    import numpy as np

    digests = b"".join(
        hashlib.blake2b(string[i : i + k].encode("utf-8", "surrogatepass"), digest_size=8).digest()
        for i in range(len(string) - k + 1)
    )
    return np.frombuffer(digests, dtype="<i8").astype(np.int64)


def _spans(slices) -> tuple[tuple[int, int], ...]:
    starts, ends = slices
    return tuple((int(s), int(e)) for s, e in zip(starts, ends))


@dataclass(frozen=True)
class _Prints:
    """One submission's copydetect fingerprint as arrays: each winnowed position and its hash,
    in position order."""

    fp: object  # copydetect.CodeFingerprint
    pos: object  # numpy int64, sorted
    hash_at: object  # numpy int64, the hash at each position
    unique: object  # numpy int64, its distinct hashes
    coverage: float  # copydetect's token coverage: the denominator of a share


def prints_of(fp) -> _Prints:
    import numpy as np

    keys = list(fp.hash_idx)
    counts = [len(fp.hash_idx[h]) for h in keys]
    hash_at = np.repeat(np.array(keys, dtype=np.int64), counts) if keys else np.array([], dtype=np.int64)
    pos = (
        np.concatenate([np.asarray(fp.hash_idx[h], dtype=np.int64) for h in keys])
        if keys
        else np.array([], dtype=np.int64)
    )
    order = np.argsort(pos, kind="stable")
    return _Prints(fp, pos[order], hash_at[order], np.unique(hash_at), float(fp.token_coverage))


def covered_tokens(prints: list[_Prints], k: int = NOISE_K, block: int = BLOCK_ELEMENTS):
    """``covered[i, j]``: how many of submission i's tokens lie in a k-gram whose fingerprint j
    also has, exactly what copydetect.compare_files counts (the union of [p, p + k) over i's
    matched positions p, its get_copied_slices), for every pair at once.

    compare_files loops over shared hashes in Python, ~1 ms a pair: 125,000 pairs of a class of
    500 took minutes. Here each submission's matched positions against all others form one
    boolean matrix (positions x submissions), and the union of intervals is sum(min(k, next
    matched position - p)): a few numpy passes per submission. The matrix is taken in blocks
    of rows (at most ``block`` cells), last block first, each carrying on from the first
    matched position after it, so that memory does not grow with one submission's size."""
    import numpy as np

    n = len(prints)
    covered = np.zeros((n, n), dtype=np.int64)
    if n == 0:
        return covered
    # every (hash, submission) once, sorted by hash: which submissions have a given hash
    all_hashes = np.concatenate([p.unique for p in prints])
    owners = np.concatenate([np.full(p.unique.size, i, dtype=np.int64) for i, p in enumerate(prints)])
    order = np.argsort(all_hashes, kind="stable")
    all_hashes, owners = all_hashes[order], owners[order]
    big = np.iinfo(np.int64).max // 4
    rows_per_block = max(1, block // n)
    for i, p in enumerate(prints):
        after = np.full(n, big, dtype=np.int64)  # per submission: its first matched position past the block
        for start in range(((p.pos.size - 1) // rows_per_block) * rows_per_block, -1, -rows_per_block):
            pos = p.pos[start : start + rows_per_block]
            hashes = p.hash_at[start : start + rows_per_block]
            lo = np.searchsorted(all_hashes, hashes, "left")
            counts = np.searchsorted(all_hashes, hashes, "right") - lo
            rows = np.repeat(np.arange(pos.size), counts)
            starts = np.cumsum(counts) - counts
            cols = owners[np.arange(counts.sum()) - np.repeat(starts - lo, counts)]
            mask = np.zeros((pos.size, n), dtype=bool)
            mask[rows, cols] = True
            mask[:, i] = False
            at = np.where(mask, pos[:, None], big)
            # the first matched position at or after each row, this block's or a later one's
            following = np.minimum(np.minimum.accumulate(at[::-1], axis=0)[::-1], after[None, :])
            nxt = np.vstack([following[1:], after[None, :]])
            covered[i] += np.where(mask, np.minimum(k, nxt - pos[:, None]), 0).sum(axis=0)
            after = following[0]
    return covered


def compare(
    sources: dict[str, str],
    boilerplate: str = "",
    threshold: float = DEFAULT_THRESHOLD,
    detail_limit: int = MAX_PAIRS_SHOWN,
) -> Comparison:
    """Fingerprint every source, score every unordered pair, keep pairs scoring >= threshold;
    the ``detail_limit`` highest get copydetect's spans for the side-by-side page."""
    cd = _copydetect()
    import numpy as np

    started = time.monotonic()
    bp = np.array([], dtype=np.int64)
    if boilerplate.strip():
        bp = np.unique(
            np.array(
                list(cd.CodeFingerprint("template.py", NOISE_K, 1, fp=io.StringIO(boilerplate)).hashes), dtype=np.int64
            )
        )
    names, prints, skipped = [], [], []
    for name, code in sources.items():
        fp = cd.CodeFingerprint(f"{name}.py", NOISE_K, WINDOW, boilerplate=bp, fp=io.StringIO(code))
        if fp.token_coverage > 0 and fp.hashes:
            names.append(name)
            prints.append(prints_of(fp))
        else:
            skipped.append(name)  # empty, or nothing but the template
    covered = covered_tokens(prints)
    coverage = np.array([p.coverage for p in prints], dtype=float)
    share = covered / coverage[:, None] if len(prints) else covered.astype(float)  # share[i, j]: of i's code, in j
    found = []
    for i, j in zip(*np.nonzero(np.triu(np.maximum(share, share.T) >= threshold, k=1) & (covered > 0))):
        a, b = float(share[i, j]), float(share[j, i])
        found.append(SimilarPair(names[i], names[j], round(max(a, b), 4), round(a, 4), round(b, 4), int(covered[i, j])))
    found.sort(key=lambda p: (-p.score, p.a, p.b))
    details = []
    index = {n: k for k, n in enumerate(names)}
    for rank, pair in enumerate(found):
        if rank < detail_limit:  # the spans in the raw code, from copydetect itself
            fa, fb = prints[index[pair.a]].fp, prints[index[pair.b]].fp
            _, _, (slices_a, slices_b) = cd.compare_files(fa, fb)
            details.append(PairDetail(pair, fa.raw_code, fb.raw_code, _spans(slices_a), _spans(slices_b)))
        else:
            details.append(PairDetail(pair, "", "", (), ()))
    return Comparison(
        len(sources),
        threshold,
        tuple(details),
        time.monotonic() - started,
        tuple(skipped),
        f"copydetect {getattr(cd, '__version__', '?')}",
    )
