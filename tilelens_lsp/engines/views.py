"""The elements a declared view covers, as sorted disjoint intervals, for the view check (TL004).

A strided view of a larger storage (a slice, a padded row) covers only some of its storage's
elements; an access inside the storage but outside those elements reads or writes a neighbour's data
(a wrong answer, invisible to compute-sanitizer). This module turns (shape, strides) into the runs
of covered elements, relative to the view's first element, when that is affordable.
"""

from __future__ import annotations

import math

import numpy as np

MAX_RUNS = 1 << 20  # views with more separate runs are not checked (no TL004, never a guess)


def covered_runs(
    shape: tuple[int, ...], strides: tuple[int, ...], storage_span: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(starts, ends) of the elements {Σ i_k·strides_k} the view covers, or None when the view covers
    every element of its storage span or has too many runs to list."""
    dims = [(n, s) for n, s in zip(shape, strides) if n > 1 and s != 0]
    if any(n == 0 for n in shape):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    numel = math.prod(n for n, _ in dims)
    if numel >= 1 << 62 or storage_span >= 1 << 62 or any(abs(s) * n >= 1 << 62 for n, s in dims):
        return None  # past int64 element indices: not checked
    inner = next(((n, s) for n, s in dims if s == 1), None)
    outer = [(n, s) for n, s in dims if (n, s) != inner] if inner else dims
    runs = numel // (inner[0] if inner else 1)
    if runs > MAX_RUNS:
        return None
    starts = np.zeros(1, dtype=np.int64)
    for n, s in outer:
        starts = (starts[:, None] + s * np.arange(n, dtype=np.int64)[None, :]).reshape(-1)
    length = inner[0] if inner else 1
    starts = np.sort(starts)
    ends = starts + length
    # merge overlapping or adjacent runs (overlapping views such as sliding windows)
    reach = np.maximum.accumulate(ends)
    new = np.ones(starts.size, dtype=bool)
    new[1:] = starts[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.concatenate((first[1:] - 1, [starts.size - 1]))
    starts, ends = starts[first], reach[last]
    if starts.size == 1 and starts[0] <= 0 and ends[0] >= storage_span:
        return None
    return starts, ends


def first_outside(starts: np.ndarray, ends: np.ndarray, view: tuple[np.ndarray, np.ndarray], lo: int, hi: int) -> int | None:
    """The lowest element of the intervals [starts, ends) that lies in [lo, hi) but outside the view."""
    vs, ve = view
    s = np.maximum(starts, lo)
    e = np.minimum(ends, hi)
    keep = s < e
    s, e = s[keep], e[keep]
    if not s.size:
        return None
    idx = np.searchsorted(vs, s, side="right") - 1
    inside = (idx >= 0) & (ve[np.maximum(idx, 0)] >= e) & (vs[np.maximum(idx, 0)] <= s)
    if inside.all():
        return None
    best = None
    for a, b, i in zip(s[~inside][:256].tolist(), e[~inside][:256].tolist(), idx[~inside][:256].tolist()):
        # the first element of [a, b) no view run holds
        x = a
        while x < b:
            j = int(np.searchsorted(vs, x, side="right")) - 1
            if j < 0 or ve[j] <= x:
                break
            x = int(ve[j])
        if x < b and (best is None or x < best):
            best = x
    return best
