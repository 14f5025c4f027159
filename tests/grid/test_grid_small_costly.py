"""Launches of few programs with much work each: the grid engine answers where enumerating them would
likely run past the budget, and only where a program evaluated concretely shows each out-of-bounds.

A paged-attention decode at a serving size (`kernels/paged_decode*.py`: 8,192 programs, each looping
over up to 256 loaded block numbers) used to be enumerated until its budget ran out (about 40 s on a
laptop) and refused as `launch-too-large`. Pinned here: the correct decode is clean with bounded
footprints, each buggy twin gets its TL002 at the line and with the index value that takes it out of
its storage, and a launch whose grid bound no program reaches (`pid % 4 + (pid + 1) % 4`, which the
grid engine bounds by two intervals) is still left to the enumeration, never reported from the grid's
bound alone. A launch whose size estimate fits the budget but whose loop runs as often as its loaded
data allows (`kernels/token_slots_serving*.py`: 64 trips a program) is refused by the enumeration as
soon as the trips left cannot fit, and answered by the grid engine; one whose trip count grows with
the program (`kernels/rows_growing_with_program.py`) is not judged by its last programs' cost, and
a race the enumeration showed before it stopped (`kernels/token_slots_pairs_race.py`) stands.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelens_lsp.engines import select
from tilelens_lsp.engines.enumerate import AccessGraph
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.settings import Settings

KERNELS = Path(__file__).resolve().parent / "kernels"


def _launch(path: Path, settings: Settings | None = None):
    (launch,) = analyze_path(path, workspace_root=path.parent, settings=settings).launches
    return launch


def test_a_paged_decode_at_serving_size_is_answered_clean_by_the_grid_engine():
    launch = _launch(KERNELS / "paged_decode.py")
    assert launch.grid == (256, 32, 1)
    assert (launch.engine, launch.status, launch.diagnostics) == ("grid", "analyzed", ())
    caches = [a for a in launch.accesses if a.pointer in ("k_cache", "v_cache")]
    assert len(caches) == 2
    for access in caches:
        assert not access.exact
        assert max(e for _, e in access.elements) <= 20000 * 16 * 32 * 128


@pytest.mark.parametrize(
    "name,pointer,value",
    [("paged_decode_blocks_past_cache.py", "k_cache", 20000), ("paged_decode_lens_past_table.py", "block_tables", None)],
)
def test_its_bugs_get_their_possible_out_of_bounds_from_the_grid_engine(name, pointer, value):
    launch = _launch(KERNELS / name)
    assert (launch.engine, launch.status) == ("grid", "analyzed")
    found = [d for d in launch.diagnostics if d.code == "TL002"]
    assert found and {d.code for d in launch.diagnostics} == {"TL002"}, [d.message for d in launch.diagnostics]
    assert f" of {pointer}," in found[0].message, found[0].message
    assert found[0].witness.value == value


def test_a_grid_bound_no_program_reaches_leaves_the_launch_to_the_enumeration(monkeypatch):
    # a launch out of the affine summary whose grid bound is one element loose, with a budget below its
    # size: the grid engine is tried and bounds the load past the storage; no program shows that, so
    # the enumeration answers, clean
    path = KERNELS / "loose_bound_loaded.py"
    before = select.ENGINES["grid"]
    launch = _launch(path, Settings(enumeration_budget=100))
    assert select.ENGINES["grid"] == before + 1, "the grid engine was tried"
    assert (launch.engine, launch.status, launch.diagnostics) == ("enumerate", "analyzed", ())
    monkeypatch.setenv(select.ENGINE_ENV, "grid")
    assert [d.code for d in _launch(path).diagnostics] == ["TL002"], "the grid engine's bound alone is loose"


def test_a_loop_whose_trips_come_from_data_is_answered_by_the_grid_engine_past_the_budget():
    # `token_slots_serving.py`: counted with its loop once, the launch fits the enumeration's budget;
    # its loop runs up to 64 times a program, which does not. The enumeration stops at its budget
    # and the grid engine answers, clean, where the launch used to be refused
    launch = _launch(KERNELS / "token_slots_serving.py")
    assert (launch.engine, launch.status, launch.diagnostics) == ("grid", "analyzed", ())
    (store,) = [a for a in launch.accesses if a.op == "store"]
    assert max(e for _, e in store.elements) <= 4096 * 32768


def test_its_bug_gets_its_possible_out_of_bounds_there():
    launch = _launch(KERNELS / "token_slots_serving_one_past.py")
    assert (launch.engine, launch.status) == ("grid", "analyzed")
    (found,) = launch.diagnostics
    assert (found.code, found.line) == ("TL002", 22), found.message
    assert f"writes element {4096 * 32768} of out," in found.message
    assert found.witness.value == 4096 * 32768 - 32768 + 1, "the offset that leaves a full row one slot short"


def test_the_enumeration_refuses_as_soon_as_the_trips_left_cannot_fit(monkeypatch):
    # the refusal comes after two trips of the first programs, from what they cost, not after
    # running the budget out (20 s here); the message says what was left
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    launch = _launch(KERNELS / "token_slots_serving.py")
    assert launch.status == "refused"
    (refusal,) = [d for d in launch.diagnostics if d.code == "TL030"]
    assert "launch-too-large" in refusal.message and "62 trips to go, then 2,048 more programs" in refusal.message


def test_a_loop_growing_with_the_program_is_not_extrapolated_from_the_last_programs(monkeypatch):
    # the last programs (visited first) loop longest (about half again the average): charging every
    # program what they cost would refuse a launch whose enumeration fits a budget a tenth above it
    path = KERNELS / "rows_growing_with_program.py"
    spent: list[int] = []
    run = AccessGraph.run

    def counted(graph: AccessGraph) -> None:
        run(graph)
        spent.append(graph.work)

    monkeypatch.setattr(AccessGraph, "run", counted)
    assert _launch(path).engine == "enumerate"
    (work,) = spent
    launch = _launch(path, Settings(enumeration_budget=work + work // 10))
    assert (launch.engine, launch.status, launch.diagnostics) == ("enumerate", "analyzed", ())
    assert len(spent) == 2, "enumerated once, never stopped early and run again"
    assert all(a.exact for a in launch.accesses if a.pointer in ("idx", "y"))  # the enumeration's, exact


def test_what_the_enumeration_showed_before_its_budget_stopped_it_stands(monkeypatch):
    # pairs of requests store one length each without an atomic: the enumeration's first programs
    # show that race (TL005) before its budget stops it; the grid engine's bounds only leave the race
    # undecided, so its answer would drop a definite finding and is not taken
    path = KERNELS / "token_slots_pairs_race.py"
    launch = _launch(path)
    assert (launch.engine, launch.status) == ("enumerate", "refused")
    assert {(d.code, d.line) for d in launch.diagnostics} == {("TL005", 20), ("TL030", 21)}
    monkeypatch.setenv(select.ENGINE_ENV, "grid")
    assert [d.code for d in _launch(path).diagnostics] == [], "the grid engine alone has no race to show"
