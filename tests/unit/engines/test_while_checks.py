"""The checks on a while loop the enumeration follows iteration by iteration: a loop whose condition's
values come back to an earlier state is refused at once as `non-terminating` (exact: it never ends);
an int32 wrap on its condition's path leaves it `WRAP_GRACE` iterations to end, else it is refused as
`wrapped-loop`; a counter that wraps and feeds an address is TL003 with its exact value; and what was
found before any of these refusals is kept beside it (the launch is never "analyzed").

The kernels are tests/conformance/bugs/while_*.py (their `# expect:` lines are checked there too) and
kernels/while_counter_wraps.py (conformance-checked against Triton's interpreter there); here each
behaviour is pinned by its figures, and the cycle detector against brute force."""

from __future__ import annotations

import random
import re
import time

import numpy as np
import pytest

from tests.support import REPO, codes, compile_file
from tilelens_lsp.engines.enumerate import control, loopstate
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.ttir import reader

BUGS = REPO / "tests" / "conformance" / "bugs"
KERNELS = REPO / "tests" / "conformance" / "kernels"


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")


def _launch(path):
    (launch,) = analyze_path(path, workspace_root=path.parent).launches
    return launch


def _refusal(launch):
    (d,) = [d for d in launch.diagnostics if d.code == "TL030"]
    return d


def test_a_counter_that_wraps_and_feeds_an_address_is_tl003_and_the_loop_is_refused_when_it_repeats():
    start = time.perf_counter()
    launch = _launch(BUGS / "while_stride_counter_wraps.py")
    assert time.perf_counter() - start < 30  # (it took the worker's 30 s timeout before)
    assert launch.status == "refused"
    assert sorted(set(codes(launch))) == ["TL001", "TL003", "TL030"]
    (tl003,) = [d for d in launch.diagnostics if d.code == "TL003"]
    assert tl003.witness.value == 2**31 and tl003.witness.iteration == (1,)
    refusal = _refusal(launch)
    assert refusal.kind == "non-terminating"
    # i: 0, 2**30, -2**31, -2**30, 0, ...: the state of iteration 2 returns at iteration 6
    assert "at iteration 6" in refusal.message and "of iteration 2" in refusal.message
    assert "wraps at iteration 1" in refusal.message
    # the out-of-bounds copy at i = 2**30 (iteration 1) is kept, with its concrete witness
    loads = [d for d in launch.diagnostics if d.code == "TL001" and "load" in d.message]
    assert loads and loads[0].witness.element == 2**30 and loads[0].witness.iteration == (1,)
    assert not launch.accesses  # a loop cut short is no footprint


def test_a_doubling_counter_that_feeds_no_address_is_refused_by_name_keeping_the_load_past_the_end():
    launch = _launch(BUGS / "while_doubling_never_ends.py")
    assert (launch.status, codes(launch)) == ("refused", ["TL001", "TL030"])
    refusal = _refusal(launch)
    # k = 2**30 doubles to 2**31 at iteration 30 (a wrap, no TL003: k is no address), then 0 forever
    assert refusal.kind == "non-terminating" and "wraps at iteration 30" in refusal.message
    assert refusal.line == 14


def test_a_program_that_never_advances_is_non_terminating_without_any_wrap():
    launch = _launch(BUGS / "while_zero_step.py")
    assert (launch.status, codes(launch)) == ("refused", ["TL001", "TL030"])
    refusal = _refusal(launch)
    assert refusal.kind == "non-terminating" and "wraps at iteration" not in refusal.message
    (tl001,) = [d for d in launch.diagnostics if d.code == "TL001"]
    assert tl001.witness.pid == (1, 0, 0) and tl001.witness.element == 32


def test_a_wrapped_counter_that_does_not_repeat_is_refused_wrap_grace_iterations_after_the_wrap(monkeypatch):
    launch = _launch(BUGS / "while_counter_wraps_runs_on.py")
    assert (launch.status, codes(launch)) == ("refused", ["TL001", "TL030"])
    refusal = _refusal(launch)
    assert refusal.kind == "wrapped-loop" and refusal.line == 18  # at the counter's update
    assert "wraps at iteration 2" in refusal.message and f"{control.WRAP_GRACE} iterations later" in refusal.message
    # with no grace the refusal comes at the iteration after the wrap, with the same findings
    monkeypatch.setattr(control, "WRAP_GRACE", 0)
    again = _launch(BUGS / "while_counter_wraps_runs_on.py")
    assert codes(again) == ["TL001", "TL030"] and _refusal(again).kind == "wrapped-loop"


def test_a_wrapped_counter_whose_loop_then_ends_is_followed_exactly():
    # i wraps three times and the loop ends after 10 trips: the same footprint as the interpreter's
    # (tests/conformance checks it against TRITON_INTERPRET=1); nothing to report
    launch = _launch(KERNELS / "while_counter_wraps.py")
    assert (launch.status, codes(launch)) == ("analyzed", [])
    assert [(a.op, a.elements, a.exact) for a in launch.accesses] == [
        ("load", ((0, 160),), True),
        ("store", ((0, 32),), True),
    ]


def test_without_the_checks_the_loop_runs_to_the_limit_and_still_keeps_its_findings(monkeypatch):
    monkeypatch.setattr(control, "WHILE_CHECKS", False)
    monkeypatch.setattr(control, "WHILE_LIMIT", 300)
    launch = _launch(BUGS / "while_zero_step.py")
    assert (launch.status, codes(launch)) == ("refused", ["TL001", "TL030"])
    assert _refusal(launch).kind == "control-flow" and "300 iterations" in _refusal(launch).message


def test_the_condition_slice_reads_each_name_in_its_own_region():
    # the two regions both define `%0` and both name their argument `%i_3`: read as one scope, the
    # condition's `%0` would be the do-region's splat and the counter would drop out of the state,
    # so a loop that advances would look repeated at once
    (c,) = compile_file(BUGS / "while_stride_counter_wraps.py")
    module = reader.parse_module(c.text)
    op = next(o for f in module.funcs.values() for o in f.body.blocks[0].ops if o.name == "scf.while")
    names = [n for n, _ in re.findall(r"(%[\w$.\-]+)\s*=\s*(%[\w$.\-#]+)", op.text.split(":")[0])]
    assert len(names) == 1
    s = loopstate.condition_slice(op, names)
    assert (s.carried, s.pure, s.signed) == ((0,), True, True)
    kinds = sorted(o.name for r in op.regions for o in r.blocks[0].ops if id(o) in s.ops)
    assert kinds == ["arith.addi", "arith.cmpi"]  # the compare and `i += step`, not the address


def _brute(f, x0, steps):
    xs = [x0]
    for _ in range(steps):
        xs.append(f[xs[-1]])
    first = {}
    for t, x in enumerate(xs):
        if x in first:
            return first[x], t - first[x]  # mu (start of the cycle), lambda (its length)
        first[x] = t
    raise AssertionError("no cycle within the steps")


@pytest.mark.parametrize("seed", range(40))
def test_the_cycle_detector_reports_only_equal_states_and_soon_after_the_cycle_starts(seed):
    rng = random.Random(seed)
    size = rng.choice([1, 2, 5, 30, 200])
    f = [rng.randrange(size) for _ in range(size)]
    x0 = rng.randrange(size)
    mu, lam = _brute(f, x0, size + 1)
    cycle = loopstate.Cycle()
    states, x = [], x0
    for t in range(8 * (mu + lam) + 8):
        state = (np.array([True]), np.array([x, 7 * x]))
        states.append(state)
        earlier = cycle.seen(state, t)
        if earlier is not None:
            assert earlier < t and all(np.array_equal(a, b) for a, b in zip(states[earlier], state))
            assert t <= 4 * (mu + lam) + 2, (mu, lam, t)
            break
        x = f[x]
    else:
        raise AssertionError(f"no repeat found (mu={mu}, lambda={lam})")


def test_the_cycle_detector_never_reports_a_sequence_that_does_not_repeat():
    cycle = loopstate.Cycle()
    for t in range(5000):
        # the same counter with another set of running programs is another state
        assert cycle.seen((np.array([t % 2 == 0, True]), np.array([t // 2])), t) is None


NESTED = """
import triton
import triton.language as tl


@triton.jit
def rows_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    for r in range(0, 2):
        k = 1
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        while k < n:
            acc += tl.load(x_ptr + r * BLOCK + tl.arange(0, BLOCK))
            k *= 2
        tl.store(out_ptr + r * BLOCK + tl.arange(0, BLOCK), acc)


# tilelens: rows_kernel[(1,)](fp32[16], fp32[32], {n}, BLOCK=16)
"""


def test_a_while_loop_inside_a_for_loop_names_its_own_iteration_and_ends_when_it_should(tmp_path):
    path = tmp_path / "rows.py"
    path.write_text(NESTED.format(n=2**31 - 1))
    launch = _launch(path)
    # row 0's loop never ends: refused there, its own iteration named (not the outer row's)
    assert _refusal(launch).kind == "non-terminating" and "wraps at iteration 30" in _refusal(launch).message
    assert launch.status == "refused"
    # below the wrap the same loop ends (k: 1 .. 2**20, 20 trips); row 1 reads past x: TL001, analyzed
    path.write_text(NESTED.format(n=2**20))
    launch = _launch(path)
    assert (launch.status, codes(launch)) == ("analyzed", ["TL001"])
