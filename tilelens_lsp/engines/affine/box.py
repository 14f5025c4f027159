"""Box images: the element intervals {base + coef·v : 0 <= v < ext, constraints} of an access, exactly.

Pure numpy on per-row problems (one row per distinct program constant): lattice factoring of program
rows, fusing of variables whose strides tile, dropping of implied constraints, splitting of rows on
coupling variables. Knows nothing of TTIR or of the summary's values.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from tilelens_lsp.engines.affine.forms import NotAffine


def unique_rows(rows: np.ndarray) -> np.ndarray:
    """Distinct rows in lexicographic order (np.unique(axis=0) sorts byte views, far slower)."""
    if len(rows) <= 1:
        return rows
    rows = rows[np.lexsort(rows.T[::-1])]
    keep = np.ones(len(rows), dtype=bool)
    keep[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    return rows[keep]


def factor(rows: np.ndarray) -> tuple[np.ndarray, list[tuple[np.ndarray, int]]] | None:
    """Recognize sorted unique rows as a lattice x0 + Σ i_j·d_j over a full box of i_j, or None."""
    atoms: list[tuple[np.ndarray, int]] = []
    cur = rows
    while len(cur) > 1:
        d = cur[1] - cur[0]
        L = len(cur)
        ok = (cur == cur[0] + np.arange(L, dtype=np.int64)[:, None] * d).all(axis=1)
        n = L if ok.all() else int(np.argmin(ok))
        if L % n:
            return None
        blocks = cur.reshape(L // n, n, -1)
        if not (blocks == blocks[:, :1] + np.arange(n, dtype=np.int64)[None, :, None] * d).all():
            return None
        atoms.append((d, n))
        cur = blocks[:, 0]
    return cur[0].copy(), atoms


def box_image(
    rows: np.ndarray,
    coef: np.ndarray,
    ext: np.ndarray,
    C: np.ndarray,
    spend: Callable[[int], None],
    tags: np.ndarray | None = None,
    extremes: bool = False,
    with_tags: bool = False,
) -> tuple[np.ndarray, ...]:
    """Intervals of {rows[b,0] + coef·v : 0 <= v < ext, rows[b,1+j] + C[j]·v >= 0 for all j} over rows b.
    With `extremes`: instead, the lowest and highest value of each non-empty piece and its row's tag.

    Exact: every step is a bijection (fusing variables whose strides tile), an implication (dropping
    constraints the box satisfies, fixing a variable that only constraints see at its best value), or
    a split into more rows (enumerating a variable that couples constraints)."""
    base = rows[:, 0].astype(np.int64)
    K = rows[:, 1:].astype(np.int64)  # (B, m) constraint constants
    tags = np.arange(base.size) if tags is None else tags
    coef, ext, C = coef.copy(), ext.copy(), C.copy()
    for _ in range(64):
        # -- constraints with no variable, or implied by the box, or unsatisfiable in it
        if C.shape[0]:
            lo = K + np.minimum(C * (ext - 1), 0).sum(axis=1)
            hi = K + np.maximum(C * (ext - 1), 0).sum(axis=1)
            live = (hi >= 0).all(axis=1)
            base, K, lo, tags = base[live], K[live], lo[live], tags[live]
            keep = ~(lo >= 0).all(axis=0)
            C, K = C[keep], K[:, keep]
        if base.size == 0:
            return (np.zeros(0, dtype=np.int64),) * 3 if extremes or with_tags else (np.zeros(0, dtype=np.int64),) * 2
        # -- variables of extent 1, or seen by nothing
        drop = (ext <= 1) | ((coef == 0) & ~(C != 0).any(axis=0))
        if drop.any():
            coef, ext, C = coef[~drop], ext[~drop], C[:, ~drop]
            continue
        # -- variables only constraints see: fixed where every constraint is loosest, when they agree
        hidden = np.flatnonzero(coef == 0)
        fixed = False
        for h in hidden:
            signs = np.sign(C[:, h])
            if (signs >= 0).all() or (signs <= 0).all():
                best = ext[h] - 1 if (signs > 0).any() else 0
                K = K + C[:, h] * best
                coef, ext, C = np.delete(coef, h), np.delete(ext, h), np.delete(C, h, axis=1)
                fixed = True
                break
        if fixed:
            continue
        # -- negative strides: v -> ext-1-v
        neg = coef < 0
        if neg.any():
            base = base + (coef * (ext - 1) * neg).sum()
            K = K + (C * (ext - 1) * neg).sum(axis=1)
            coef, C = np.where(neg, -coef, coef), np.where(neg, -C, C)
        # -- fuse i (stride s, extent n) with j (stride s·n) when every constraint sees them alike
        order = np.argsort(coef, kind="stable")
        fused = False
        for a, b in zip(order[:-1], order[1:]):
            if coef[a] and coef[b] == coef[a] * ext[a] and (C[:, b] == C[:, a] * ext[a]).all():
                ext[a] = ext[a] * ext[b]
                coef, ext, C = np.delete(coef, b), np.delete(ext, b), np.delete(C, b, axis=1)
                fused = True
                break
        if fused:
            continue
        if hidden.size:
            v = int(hidden[0])  # seen by constraints of both signs
        else:
            multi = (C != 0).sum(axis=1) > 1
            if not multi.any():
                break
            seen = np.flatnonzero((C[multi] != 0).any(axis=0))
            v = int(seen[np.argmax(coef[seen])])  # the outermost variable coupling constraints
        base, K = split_variable(base, K, coef[v], C[:, v], int(ext[v]), spend)
        tags = np.repeat(tags, int(ext[v]))
        coef, ext, C = np.delete(coef, v), np.delete(ext, v), np.delete(C, v, axis=1)
    else:
        raise NotAffine("the footprint does not reduce to a box")
    # every constraint now bounds one variable: per-row ranges
    B = base.size
    lo = np.zeros((B, ext.size), dtype=np.int64)
    hi = np.broadcast_to(ext, (B, ext.size)).copy()
    for j in range(C.shape[0]):
        (only,) = np.flatnonzero(C[j])
        v = int(only)
        a = int(C[j, v])
        if a > 0:
            lo[:, v] = np.maximum(lo[:, v], -(K[:, j] // a))
        else:
            hi[:, v] = np.minimum(hi[:, v], K[:, j] // (-a) + 1)
    live = (hi > lo).all(axis=1)
    base, lo, hi, tags = base[live], lo[live], hi[live], tags[live]
    if extremes:  # strides are >= 0 here: the corners of each row's box
        return base + (lo * coef).sum(axis=1), base + ((hi - 1) * coef).sum(axis=1), tags
    order = np.argsort(coef, kind="stable")
    inner = int(order[0]) if ext.size and coef[order[0]] == 1 else None
    outer = [int(v) for v in order if v != inner]
    count = base.size * int(np.prod(ext[outer], dtype=np.int64)) if outer else base.size
    spend(count)
    B = base.size
    starts = base
    ok = np.ones(B, dtype=bool)
    for v in outer:
        vals = np.arange(int(ext[v]), dtype=np.int64)
        lead = (B,) + (1,) * starts.ndim
        starts = starts[..., None] + coef[v] * vals
        ok = ok[..., None] & (vals >= lo[:, v].reshape(lead)) & (vals < hi[:, v].reshape(lead))
    if inner is not None:
        lead = (B,) + (1,) * (starts.ndim - 1)
        starts = starts + lo[:, inner].reshape(lead)
        ends = starts + (hi[:, inner] - lo[:, inner]).reshape(lead)
    else:
        ends = starts + 1
    if with_tags:
        owner = np.broadcast_to(tags.reshape((B,) + (1,) * (starts.ndim - 1)), starts.shape)
        return starts[ok], ends[ok], owner[ok]
    return starts[ok], ends[ok]


def split_variable(
    base: np.ndarray, K: np.ndarray, a: int, cv: np.ndarray, n: int, spend: Callable[[int], None]
) -> tuple[np.ndarray, np.ndarray]:
    """Enumerate one variable: every row becomes n rows with the variable's value folded in."""
    spend(base.size * n)
    vals = np.arange(n, dtype=np.int64)
    base = (base[:, None] + a * vals[None, :]).reshape(-1)
    K = (K[:, None, :] + cv[None, None, :] * vals[None, :, None]).reshape(-1, K.shape[1])
    return base, K
