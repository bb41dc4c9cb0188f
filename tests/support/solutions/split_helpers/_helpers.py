"""Padding helpers, kept apart from the runner."""

import bisect


def bucket_for(sizes, n):
    """Smallest bucket holding n rows, or None when n is above every bucket."""
    i = bisect.bisect_left(sizes, n)
    return sizes[i] if i < len(sizes) else None


def pad_rows(buf, x):
    """Write x into the first rows of buf and zero the rest, in place."""
    n = x.shape[0]
    buf[:n] = x
    buf[n:] = 0
    return buf
