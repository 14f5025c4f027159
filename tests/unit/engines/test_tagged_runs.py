"""`recording.tagged_runs`: the per-program runs of elements that the race check keeps, against a
plain reading of the (program, element) pairs."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tilelens_lsp.engines.enumerate.recording import tagged_runs

ELEMENT = st.one_of(st.integers(-8, 40), st.integers(-(1 << 62), 1 << 62))


def _by_hand(elems: list[int], progs: list[int]) -> list[tuple[int, int, int]]:
    runs: list[tuple[int, int, int]] = []
    for p, e in sorted(set(zip(progs, elems))):
        if runs and runs[-1][2] == p and runs[-1][1] == e:
            runs[-1] = (runs[-1][0], e + 1, p)
        else:
            runs.append((e, e + 1, p))
    return runs


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ELEMENT, st.integers(0, 5)), min_size=1, max_size=40), st.integers(0, 1 << 40))
def test_runs_are_the_distinct_pairs_merged_where_consecutive(pairs, base):
    elems = np.array([e for e, _ in pairs], dtype=np.int64)
    progs = np.array([p + base for _, p in pairs], dtype=np.int64)
    starts, ends, owners = tagged_runs(elems, progs)
    got = [(int(s), int(e), int(p)) for s, e, p in zip(starts, ends, owners)]
    assert got == _by_hand(elems.tolist(), progs.tolist())
