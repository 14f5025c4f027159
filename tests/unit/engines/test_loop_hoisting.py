"""Loop-invariant ops evaluated once before a loop (`control.hoist_invariants`): the enumeration must answer
exactly as when it follows every op on every iteration (fixtures/graph_kernels.py,
`hoisted_loop_kernel`)."""

from __future__ import annotations

import pytest

from tests.support import FIXTURES, launch_at, line_of, only
from tilelens_lsp.engines.enumerate import control
from tilelens_lsp.pipeline import analyze_path

KERNELS = FIXTURES / "graph_kernels.py"
CLEAN = "hoisted_loop_kernel[(2,)]"
WRAPS = "hoisted_loop_kernel[(3,)]"


def _launches(monkeypatch, hoist: bool, seen: list | None = None):
    monkeypatch.setenv("TILELENS_ENGINE", "enumerate")
    original = control.hoist_invariants

    def hoisted(g, op, env, first):
        outer, body = original(g, op, env, first) if hoist else (env, op.regions[0].blocks[0])
        if seen is not None:
            seen.append([o.name for o in op.regions[0].blocks[0].ops if o not in body.ops])
        return outer, body

    monkeypatch.setattr(control, "hoist_invariants", hoisted)
    result = analyze_path(KERNELS, FIXTURES)
    return [launch_at(result, line_of(KERNELS, needle)) for needle in (CLEAN, WRAPS)]


def test_the_fixture_loop_has_its_mask_and_row_offset_hoisted(monkeypatch):
    seen: list = []
    _launches(monkeypatch, True, seen)
    names = [n for ops in seen for n in ops]
    assert "arith.andi" in names and "arith.muli" in names


@pytest.mark.parametrize("which", [0, 1])
def test_hoisting_changes_no_verdict_footprint_or_witness(monkeypatch, which):
    followed = _launches(monkeypatch, False)[which]
    hoisted = _launches(monkeypatch, True)[which]
    assert hoisted.engine == followed.engine == "enumerate"
    assert (hoisted.diagnostics, hoisted.accesses) == (followed.diagnostics, followed.accesses)


def test_an_invariant_wrap_is_reported_on_the_first_iteration(monkeypatch):
    clean, wraps = _launches(monkeypatch, True)
    assert [d.code for d in clean.diagnostics] == []
    diag = only(wraps, "TL003")
    assert (diag.witness.pid, diag.witness.iteration, diag.witness.value) == ((2, 0, 0), (0,), 2**31)
