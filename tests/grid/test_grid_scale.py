"""Production-size launches answered by the grid engine, with the default engine choice.

The kernels under `kernels/` reproduce what used to fail at these sizes: a rotary embedding over
10^6 tokens (ran the workers out of memory), copies over 540,000 programs (timed out, or were refused
as `launch-too-large`), and their int64-fixed twins (refused, so a fix could never be shown clean).
Verdicts are checked against arithmetic done here, independently of the engines: the witness
program's int32 product really leaves int32, and the twins are clean.
"""

from __future__ import annotations

from pathlib import Path

from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path

KERNELS = Path(__file__).resolve().parent / "kernels"
I32_MAX = (1 << 31) - 1


def _launch(name: str):
    result = analyze_path(KERNELS / name, workspace_root=KERNELS)
    (launch,) = result.launches
    return launch


def _codes(launch) -> dict[str, list]:
    out: dict[str, list] = {}
    for d in launch.diagnostics:
        out.setdefault(d.code, []).append(d)
    return out


def test_rotary_over_a_million_tokens_overflows_int32_with_a_concrete_witness():
    launch = _launch("rotary_i32.py")
    assert launch.engine == "grid" and launch.status == "analyzed"
    codes = _codes(launch)
    lines = {d.line for d in codes["TL003"]}
    assert lines == {15, 20}  # pid * row_stride and b * batch_stride
    for d in codes["TL003"]:
        pid = d.witness.pid[0]
        # recompute the witness's product here: it leaves int32
        value = pid * 4096 if d.line == 15 else (pid // 250000) * 1024000000
        assert value == d.witness.value and value > I32_MAX
    # the wrapped offsets really leave the tensor, as the concrete run of the witness program shows
    assert {d.line for d in codes["TL001"]} == {16, 17, 21, 22}
    assert all(d.witness.element < 0 for d in codes["TL001"])


def test_rotary_int64_twin_is_clean_and_race_free():
    launch = _launch("rotary_i64.py")
    assert launch.engine == "grid" and launch.status == "analyzed"
    assert launch.diagnostics == ()
    assert not [n for n in launch.notes if "races" in n]  # disjoint programs were proven
    loads = {a.line: a for a in launch.accesses if a.pointer == "x_ptr"}
    assert loads[16].elements[-1][1] <= 10**6 * 4096 and not loads[16].exact


def test_padded_copy_over_540000_programs():
    launch = _launch("padded_copy_i32.py")
    assert launch.engine == "grid"
    codes = _codes(launch)
    assert {d.line for d in codes["TL003"]} == {15, 16}
    for d in codes["TL003"]:
        pid = d.witness.pid[0]
        assert (pid // 2 if d.line == 15 else pid) * 8192 == d.witness.value > I32_MAX
    # both the load and the store are shown out of bounds by a concretely evaluated program
    assert {d.line for d in codes["TL001"]} == {21, 22}
    twin = _launch("padded_copy_i64.py")
    assert twin.engine == "grid" and twin.status == "analyzed" and twin.diagnostics == ()


def test_megablocks_style_copy_with_loaded_indices_is_analysed_not_refused():
    launch = _launch("megablocks_padded_copy.py")
    assert launch.engine == "grid" and launch.status == "analyzed"
    codes = _codes(launch)
    assert {d.line for d in codes["TL003"]} == {19, 20}
    assert "TL030" not in codes and "TL050" not in codes
    assert "TL001" not in codes  # the wrapped addresses depend on loaded data: possible, not definite
    assert {d.line for d in codes["TL002"]} == {25, 26}


def test_a_loose_bound_is_a_possible_out_of_bounds_never_a_definite_one(monkeypatch):
    monkeypatch.setenv(select.ENGINE_ENV, "grid")
    launch = _launch("loose_bound.py")
    assert launch.engine == "grid"
    codes = _codes(launch)
    assert [d.line for d in codes.get("TL002", [])] == [12] and "TL001" not in codes
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    assert "TL002" not in _codes(_launch("loose_bound.py"))  # the enumeration: no program does it


def test_engine_choice_is_decided_by_size_before_computing():
    small = _launch("loose_bound.py")
    assert small.engine in ("enumerate", "affine")


def _chunks_end(programs: int, stride: int) -> tuple[int, int]:
    """(last element written, the program writing it) of the `pid % 7 == 3 | k < 2` chunk kernels,
    by brute force over every program and chunk (8 lanes each), independently of the engines."""
    best = (-1, -1)
    for pid in range(programs - 8, programs):  # the highest elements: the last programs' chunks
        for k in range(3):
            if pid % 7 == 3 or k < 2:
                best = max(best, (pid * stride + k * 8 + 7, pid))
    return best


def test_a_pid_residue_guard_in_a_loop_is_bounded_by_programs_that_exist():
    # the box over pid // 7 and pid % 7 named element 8000048 of program "499999": no program writes it
    last, _ = _chunks_end(500000, 16)
    assert last == 8000007
    launch = _launch("pidmod_guard_loop.py")
    assert launch.engine == "grid" and launch.status == "analyzed"
    codes = _codes(launch)
    assert not set(codes) & {"TL001", "TL002", "TL003"}, [d.message for d in launch.diagnostics]
    (store,) = launch.accesses
    assert store.elements[-1][1] - 1 == last  # the bound's end is the element the last program writes
    # neighbouring programs overlap by a chunk: a real race, left undecided at this size, never clean
    assert [n for n in launch.notes if n.startswith("races on x not decided")]


def test_a_pid_residue_guard_in_a_loop_still_finds_the_short_storage():
    last, program = _chunks_end(500000, 16)
    launch = _launch("pidmod_guard_loop_short.py")
    assert launch.engine == "grid"
    (d,) = _codes(launch)["TL001"]
    assert d.witness.pid[0] == program == 499999 and d.witness.element == last - 7 == 8000000
    assert d.witness.iteration == (2,)


def test_an_or_guard_is_bounded_case_by_case():
    last, _ = _chunks_end(500001, 24)
    assert last == 500001 * 24 - 9  # one short of the storage (500001 * 24 - 8)
    launch = _launch("pidmod_guard_or.py")
    assert launch.engine == "grid" and launch.status == "analyzed"
    assert launch.diagnostics == (), [d.message for d in launch.diagnostics]
    (store,) = launch.accesses
    assert store.elements[-1][1] - 1 == last


def test_a_trip_count_of_pid_mod_6_is_bounded_per_remainder():
    last = max(p * 32 + k * 8 + 7 for p in range(2000003 - 12, 2000003) for k in range(p % 6))
    assert last == 64000095  # the storage holds 64000096 elements
    launch = _launch("piptrip_pidmod.py")
    assert launch.engine == "grid" and launch.status == "analyzed"
    assert launch.diagnostics == (), [d.message for d in launch.diagnostics]
    # program p's chunks reach p * 32 + 39 only when p % 6 == 5, and then program p + 1 stores nothing:
    # told apart per remainder (tests/grid/test_grid_residue_races.py holds that rule to brute force)
    assert not [n for n in launch.notes if "races" in n], launch.notes
    (store,) = launch.accesses
    assert store.elements[-1][1] - 1 == last


def test_a_where_of_int32_lanes_zero_extended_keeps_its_width():
    # `tl.where` on a tensor condition prints `: tensor<64xi1>, tensor<64xi32>`; its result was read as
    # i1, so the zero extension of -1 became [0, 1] and this read of element 2^32 - 1 passed as clean
    launch = _launch("where_unsigned_index.py")
    assert launch.engine == "grid" and launch.status == "analyzed"
    (d,) = _codes(launch)["TL001"]
    assert d.line == 11 and d.witness.element == (1 << 32) - 1
    offs = d.witness.pid[0] * 64 + d.witness.lane[0]
    assert offs >= 63999990  # a masked-off lane of the tail: its index really is -1
