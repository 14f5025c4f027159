"""The affine summary: box images checked against brute force, program lattices, and whole launches
whose cost must not grow with the grid (a 16384³ matmul answered exactly, like the 256³ one)."""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import REPO
from tilelens_lsp.engines import select
from tilelens_lsp.engines.affine import handlers
from tilelens_lsp.engines.affine.box import box_image, factor, unique_rows
from tilelens_lsp.engines.enumerate import AccessGraph
from tilelens_lsp.engines.values import merge_intervals
from tilelens_lsp.pipeline import analyze_path


def brute(rows, coef, ext, C) -> set[int]:
    out: set[int] = set()
    for row in rows:
        for v in itertools.product(*(range(n) for n in ext)):
            v = np.array(v, dtype=np.int64)
            if all(row[1 + j] + int(C[j] @ v) >= 0 for j in range(C.shape[0])):
                out.add(int(row[0] + coef @ v))
    return out


def image_set(rows, coef, ext, C) -> set[int]:
    s, e = box_image(
        np.array(rows, dtype=np.int64),
        np.array(coef, dtype=np.int64),
        np.array(ext, dtype=np.int64),
        np.array(C, dtype=np.int64).reshape(len(C), len(coef)),
        lambda n: None,
    )
    if s.size == 0:
        return set()
    s, e = merge_intervals([s], [e])
    return {x for a, b in zip(s.tolist(), e.tolist()) for x in range(a, b)}


def test_a_masked_tail_of_fused_program_and_lane_is_one_interval():
    # 97 programs × 64 lanes, mask pid*64 + lane < 6200: [0, 6200)
    s, e = box_image(np.array([[0, 6199]]), np.array([64, 1]), np.array([97, 64]), np.array([[-64, -1]]), lambda n: None)
    assert (s.tolist(), e.tolist()) == ([0], [6200])


def test_rows_of_a_tile_become_one_interval_each():
    # a 4 × 8 tile of a matrix with 100 columns: 4 runs of 8
    s, e = box_image(
        np.array([[10]]), np.array([100, 1]), np.array([4, 8]), np.zeros((0, 2), dtype=np.int64), lambda n: None
    )
    assert sorted(zip(s.tolist(), e.tolist())) == [(10, 18), (110, 118), (210, 218), (310, 318)]


def test_a_triangular_mask_is_split_and_stays_exact():
    rows, coef, ext = [[0, 0]], [16, 1], [8, 16]
    C = [[1, -1]]  # col <= row
    assert image_set(rows, coef, ext, C) == brute(np.array(rows), np.array(coef), ext, np.array(C))


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.data())
def test_box_image_equals_brute_force(data):
    nv = data.draw(st.integers(1, 3))
    ext = data.draw(st.lists(st.integers(1, 5), min_size=nv, max_size=nv))
    coef = data.draw(st.lists(st.sampled_from([-8, -4, -1, 0, 1, 2, 3, 4, 5, 8, 20]), min_size=nv, max_size=nv))
    m = data.draw(st.integers(0, 2))
    C = data.draw(st.lists(st.lists(st.integers(-3, 3), min_size=nv, max_size=nv), min_size=m, max_size=m))
    nrows = data.draw(st.integers(1, 3))
    rows = data.draw(
        st.lists(st.lists(st.integers(-10, 30), min_size=1 + m, max_size=1 + m), min_size=nrows, max_size=nrows)
    )
    Carr = np.array(C, dtype=np.int64).reshape(m, nv)
    assert image_set(rows, coef, ext, Carr) == brute(np.array(rows), np.array(coef), ext, Carr)


def test_program_constants_on_a_full_lattice_factor_into_box_variables():
    pm, pn = np.meshgrid(np.arange(3), np.arange(4), indexing="ij")
    rows = np.stack([pm.ravel() * 1000 + pn.ravel() * 10, 99 - pm.ravel() * 8], axis=1)
    rows = unique_rows(rows[np.random.default_rng(0).permutation(len(rows))])
    x0, atoms = factor(rows)
    assert x0.tolist() == [0, 99]
    assert sorted((d.tolist(), n) for d, n in atoms) == [([10, 0], 4), ([1000, -8], 3)]


def test_program_constants_off_a_lattice_are_not_factored():
    assert factor(unique_rows(np.array([[0], [1], [3]]))) is None
    assert factor(unique_rows(np.array([[0, 0], [1, 0], [2, 5]]))) is None
    # the first run is regular, a later block is not: every block must be checked
    assert factor(unique_rows(np.array([[0], [1], [2], [10], [11], [13]]))) is None


MATMUL = REPO / "tests" / "conformance" / "kernels" / "matmul_grouped.py"  # tutorial 03's one copy
MATMUL_LAUNCH = """
# tilelens: M = {size}
# tilelens: N = {size}
# tilelens: K = {size}
# tilelens: matmul_kernel[(cdiv(M, 64) * cdiv(N, 64),)](
# tilelens:     fp16[M, K], fp16[K, N], fp16[M, N], M, N, K, K, 1, N, 1, N, 1,
# tilelens:     BLOCK_M=64, BLOCK_N=64, BLOCK_K=32, GROUP_M=8)
"""


def matmul_source(size: int, edit=lambda text: text) -> str:
    """Tutorial 03's grouped matmul (the corpus copy, its own launches dropped) launched with
    M = N = K = size and fixed 64x64x32 blocks, as the bench launches it at 512."""
    body = [line for line in MATMUL.read_text().splitlines() if not line.startswith("# tilelens:")]
    text = "\n".join(body).rstrip() + "\n\n" + MATMUL_LAUNCH.format(size=size)
    assert text.count("# tilelens: matmul_kernel") == 1
    return edit(text)


def _matmul(tmp_path: Path, size: int, engine: str, monkeypatch, edit=lambda text: text) -> tuple:
    path = tmp_path / engine / f"mm{size}.py"
    path.parent.mkdir(exist_ok=True, parents=True)
    path.write_text(matmul_source(size, edit))
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    before = dict(select.ENGINES)
    (launch,) = analyze_path(path, workspace_root=path.parent).launches
    used = {k: select.ENGINES[k] - before.get(k, 0) for k in ("summary", "enumeration")}
    return launch, used


def test_a_16384_cubed_matmul_is_summarized_exactly(tmp_path, monkeypatch):
    launch, used = _matmul(tmp_path, 16384, "auto", monkeypatch)
    assert used == {"summary": 1, "enumeration": 0}
    assert launch.status == "analyzed" and not launch.diagnostics
    assert {(a.pointer, a.elements, a.exact) for a in launch.accesses} == {
        (p, ((0, 16384 * 16384),), True) for p in ("a_ptr", "b_ptr", "c_ptr")
    }


def test_the_summary_and_the_enumeration_agree_on_a_ragged_matmul(tmp_path, monkeypatch):
    # 200 is no multiple of 64: the `% M` wrap of the last row block takes a quotient variable;
    # 256 needs none. Both engines must give the same verdicts and footprints.
    for size in (200, 256):
        ours, _ = _matmul(tmp_path, size, "compare", monkeypatch)
        theirs, _ = _matmul(tmp_path, size, "enumerate", monkeypatch)
        assert ours.accesses == theirs.accesses and ours.diagnostics == theirs.diagnostics


TAIL = """
import triton
import triton.language as tl

# tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y)
"""


def test_an_out_of_bounds_launch_gets_the_enumerations_witness(tmp_path, monkeypatch):
    path = tmp_path / "tail.py"
    path.write_text(textwrap.dedent(TAIL))
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    results = {}
    for engine in ("auto", "enumerate"):
        monkeypatch.setenv(select.ENGINE_ENV, engine)
        (results[engine],) = analyze_path(path, workspace_root=tmp_path).launches
    assert [d.code for d in results["auto"].diagnostics] == ["TL001"]
    assert results["auto"].diagnostics == results["enumerate"].diagnostics
    assert results["auto"].accesses == results["enumerate"].accesses


GATHER = """
import triton
import triton.language as tl

# tilelens: gather_kernel[({programs},)](i32[{steps}], fp32[{rows}, 32], fp32[{programs}, 32], 0.5, STEPS={steps}, BLOCK=32)
@triton.jit
def gather_kernel(ids_ptr, x_ptr, out_ptr, scale, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for t in range(STEPS):
        idx = tl.load(ids_ptr + t)
        row = tl.load(x_ptr + idx * BLOCK + offs)  # through a loaded index: no engine bounds it
        near = tl.load(x_ptr + (offs * scale).to(tl.int32))  # through a float: no engine computes it
        acc += row + near
    tl.store(out_ptr + pid * BLOCK + offs{shift}, acc)
"""


def _gather(tmp_path: Path, engine: str, monkeypatch, programs: int, steps: int, shift: str = "") -> tuple:
    path = tmp_path / engine / f"gather{programs}_{steps}{len(shift)}.py"
    path.parent.mkdir(exist_ok=True, parents=True)
    path.write_text(textwrap.dedent(GATHER.format(programs=programs, steps=steps, rows=steps, shift=shift)))
    monkeypatch.setenv(select.ENGINE_ENV, engine)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    before = dict(select.ENGINES)
    (launch,) = analyze_path(path, workspace_root=path.parent).launches
    return launch, {k: select.ENGINES[k] - before.get(k, 0) for k in ("summary", "enumeration")}


@pytest.mark.parametrize("shift", ["", " + 1"], ids=["in-bounds", "one-past"])
def test_addresses_no_engine_computes_are_refused_by_the_summary_as_the_enumeration_refuses_them(
    tmp_path, monkeypatch, shift
):
    # the two loads are refused whichever engine runs; the rest of the launch keeps the summary's
    # exact answer, equal to the enumeration's, instead of sending the whole launch to be enumerated
    ours, used = _gather(tmp_path, "compare", monkeypatch, 8, 64, shift)
    theirs, _ = _gather(tmp_path, "enumerate", monkeypatch, 8, 64, shift)
    # an out-of-bounds launch this small is enumerated for its witness (the summary's trial)
    assert used == ({"summary": 0, "enumeration": 1} if shift else {"summary": 1, "enumeration": 0})
    assert ours.status == theirs.status == "refused"
    assert ours.diagnostics == theirs.diagnostics and ours.accesses == theirs.accesses
    kinds = sorted(d.kind for d in ours.diagnostics if d.code == "TL030")
    assert kinds == ["indirect-address", "out-of-vocabulary"]
    assert [d.code for d in ours.diagnostics if d.code != "TL030"] == (["TL001"] if shift else [])


def test_a_launch_too_large_to_enumerate_keeps_its_verdicts_beside_such_addresses(tmp_path, monkeypatch):
    # 65,536 programs x 4096 iterations x 32 lanes is far past the enumeration's budget: the launch
    # was refused whole (launch-too-large); now only the two loads are, the rest is exact
    launch, used = _gather(tmp_path, "auto", monkeypatch, 1 << 16, 4096)
    assert used == {"summary": 1, "enumeration": 0}
    kinds = sorted(d.kind for d in launch.diagnostics if d.code == "TL030")
    assert kinds == ["indirect-address", "out-of-vocabulary"] and len(launch.diagnostics) == 2
    exact = {a.pointer: (a.elements, a.exact) for a in launch.accesses if a.pointer != "x_ptr"}
    assert exact == {"ids_ptr": (((0, 4096),), True), "out_ptr": (((0, (1 << 16) * 32),), True)}


EARLY = """
import triton
import triton.language as tl

# tilelens: early_kernel[(4,)](fp32[4096 * 32], fp32[4, 32], STEPS=4096, BLOCK=32)
@triton.jit
def early_kernel(x_ptr, out_ptr, STEPS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for t in range(STEPS):
        acc += tl.load(x_ptr + (STEPS - t) * BLOCK + offs)  # one block past the end at t = 0 only
    tl.store(out_ptr + tl.program_id(0) * BLOCK + offs, acc)
"""


def test_a_witness_program_stops_at_its_first_out_of_bounds_lane(tmp_path, monkeypatch):
    # the witness of a launch too large for the trial enumeration comes from one program; its first
    # out-of-bounds lane is at iteration 0, so the 4095 iterations after it are never evaluated
    path = tmp_path / "early.py"
    path.write_text(textwrap.dedent(EARLY))
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    (theirs,) = analyze_path(path, workspace_root=tmp_path).launches
    runs = []
    real = AccessGraph.run_programs

    def counted(graph, start, count, until=None):
        real(graph, start, count, until)
        runs.append(graph.work)

    monkeypatch.setattr(AccessGraph, "run_programs", counted)
    monkeypatch.setattr(select, "WITNESS_SHARE", 1 << 62)  # the trial enumeration never fits
    monkeypatch.setenv(select.ENGINE_ENV, "auto")
    (ours,) = analyze_path(path, workspace_root=tmp_path).launches
    assert [d.code for d in ours.diagnostics] == ["TL001"] and ours.diagnostics == theirs.diagnostics
    assert ours.diagnostics[0].witness.iteration == (0,)
    (work,) = runs
    assert work < 4 * 32 * 10  # a few ops of one iteration, not 4096 iterations of 32 lanes


@pytest.mark.slow
def test_a_16384_cubed_matmul_that_reads_past_its_matrices_gets_exact_verdicts(tmp_path, monkeypatch):
    # one loop iteration too many, unmasked: too large to enumerate, so the summary keeps its exact
    # footprint and a witness comes from enumerating the one program found for each access
    def bug(text: str) -> str:
        text = text.replace("range(0, tl.cdiv(K, BLOCK_K))", "range(0, tl.cdiv(K, BLOCK_K) + 1)")
        text = text.replace(", mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0", "")
        return text.replace(", mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0", "")

    small, _ = _matmul(tmp_path / "small", 256, "auto", monkeypatch, bug)
    big, used = _matmul(tmp_path / "big", 16384, "auto", monkeypatch, bug)
    assert used == {"summary": 1, "enumeration": 0}
    for launch, n in ((small, 256), (big, 16384)):
        assert sorted(d.code for d in launch.diagnostics) == ["TL001", "TL001"], launch.diagnostics
        assert launch.status == "analyzed" and all(a.exact for a in launch.accesses)
        for d in launch.diagnostics:
            assert not 0 <= d.witness.element < n * n
            assert d.witness.iteration == (n // 32,)  # the extra iteration
    spans = {a.pointer: a.elements for a in big.accesses}
    assert spans["a_ptr"] == ((0, 16384 * 16384 + 32),)  # the last row reads 32 past the end
    assert spans["b_ptr"] == ((0, 16384 * 16384 + 32 * 16384),)
    assert spans["c_ptr"] == ((0, 16384 * 16384),)


BUGS = REPO / "tests" / "conformance" / "bugs"


@pytest.mark.parametrize("path", sorted(BUGS.glob("*.py")), ids=lambda p: p.name)
def test_witnesses_from_one_program_agree_with_the_enumeration(path, tmp_path, monkeypatch):
    """Force the path a launch too large to enumerate takes (summary + one program enumerated per
    out-of-bounds access) on the bug corpus: the same diagnostics at the same lines, every witness a
    real out-of-bounds element of a real program, the same footprints."""
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    theirs = analyze_path(path, workspace_root=path.parent)
    monkeypatch.setenv(select.ENGINE_ENV, "auto")
    monkeypatch.setattr(select, "WITNESS_SHARE", 1 << 62)  # the enumeration trial never fits
    ours = analyze_path(path, workspace_root=path.parent)
    for a, b in zip(ours.launches, theirs.launches, strict=True):
        assert sorted((d.code, d.line) for d in a.diagnostics) == sorted((d.code, d.line) for d in b.diagnostics)
        assert a.accesses == b.accesses
        for d in a.diagnostics:
            if d.code == "TL001":
                access = next((x for x in a.accesses if x.line == d.line and not x.in_bounds), None)
                if access is None:  # a launch cut short keeps its findings but has no footprint
                    assert a.status == "refused" and not a.accesses
                else:
                    assert not -access.view_offset <= d.witness.element < access.storage - access.view_offset
                assert all(0 <= p < g for p, g in zip(d.witness.pid, a.grid))


def test_a_ragged_matmul_wraps_rows_through_quotient_variables(tmp_path, monkeypatch):
    # 16001 is no multiple of 64: `(pid_m * 64 + arange(64)) % M` wraps the last row block around to
    # row 0. The remainder becomes an affine form in the lanes and a quotient variable; the launch
    # stays summarized and exact, and a small ragged launch agrees with the enumeration.
    launch, used = _matmul(tmp_path / "big", 16001, "auto", monkeypatch)
    assert used == {"summary": 1, "enumeration": 0}
    assert launch.status == "analyzed" and not launch.diagnostics
    assert {(a.pointer, a.elements, a.exact) for a in launch.accesses} == {
        (p, ((0, 16001 * 16001),), True) for p in ("a_ptr", "b_ptr", "c_ptr")
    }
    ours, used = _matmul(tmp_path / "small", 200, "compare", monkeypatch)
    assert used["summary"] == 1


HUGE = """
import triton
import triton.language as tl

# tilelens: copy_kernel[(2**25,)](fp32[2**33], fp32[2**33], 2**33, BLOCK=256)
# tilelens: copy_kernel[(2**25,)](fp32[2**33], fp32[2**33 - 1], 2**33, BLOCK=256)
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
"""


@pytest.mark.slow
def test_grids_past_per_program_arrays_take_program_ids_as_variables(tmp_path, monkeypatch):
    # 2**25 programs: too many for per-program constants, so the program id is a box variable; the
    # clean launch is answered exactly, the one whose output is one element short goes to the
    # enumeration for its witness (truncated there, but the tail bug is found first)
    path = tmp_path / "huge.py"
    path.write_text(textwrap.dedent(HUGE))
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    before = dict(select.ENGINES)
    clean, short = analyze_path(path, workspace_root=tmp_path).launches
    assert select.ENGINES["summary"] - before.get("summary", 0) == 1
    assert clean.status == "analyzed" and not clean.diagnostics
    assert {(a.pointer, a.elements, a.exact) for a in clean.accesses} == {
        ("x_ptr", ((0, 2**33),), True),
        ("y_ptr", ((0, 2**33),), True),
    }
    assert "TL001" in [d.code for d in short.diagnostics]


def test_a_crash_in_the_summary_falls_back_to_the_enumeration(tmp_path, monkeypatch):
    path = tmp_path / "tail.py"
    path.write_text(textwrap.dedent(TAIL))
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the summary")

    monkeypatch.setitem(handlers.HANDLERS, "tt.make_range", broken)
    monkeypatch.setenv(select.ENGINE_ENV, "auto")
    (launch,) = analyze_path(path, workspace_root=tmp_path).launches
    assert [d.code for d in launch.diagnostics] == ["TL001"]  # the enumeration's verdict
    monkeypatch.setenv(select.ENGINE_ENV, "compare")  # tests see the bug
    (launch,) = analyze_path(path, workspace_root=tmp_path).launches
    assert [d.code for d in launch.diagnostics] == ["TL050"]


CLAMPS = """
import triton
import triton.language as tl

# tilelens: clamp_kernel[(2,)](fp32[256], fp32[256], fp32[256], BLOCK=32)
@triton.jit
def clamp_kernel(x_ptr, y_ptr, z_ptr, BLOCK: tl.constexpr):
    r = tl.arange(0, BLOCK)
    base = tl.program_id(0) * 7
    a = base + tl.minimum(r * 3, 40)
    b = tl.maximum(r * 2, 50) - base
    c = tl.where((r >= 5) & (r < 20), 100 + r, r)
    tl.store(y_ptr + a, tl.load(x_ptr + a))
    tl.store(z_ptr + b, tl.load(x_ptr + b))
    tl.store(z_ptr + 128 + c, tl.load(x_ptr + c))
"""


def _elements(access) -> set[int]:
    return {e for s, t in access.elements for e in range(s, t)}


def test_lane_varying_min_max_and_select_become_exact_pieces(tmp_path, monkeypatch):
    path = tmp_path / "clamps.py"
    path.write_text(textwrap.dedent(CLAMPS))
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, "auto")
    before = select.ENGINES["summary"]
    (launch,) = analyze_path(path, workspace_root=tmp_path).launches
    # the two programs' clamped stores overlap (program 0 writes y[40], program 1 y[7 + ...]): a race,
    # and the only verdict (the clamped lanes of one program store one element, each the value it loaded
    # from that element: no race between lanes, so the summary keeps the launch)
    assert select.ENGINES["summary"] == before + 1 and [d.code for d in launch.diagnostics] == ["TL005", "TL005"]
    r = np.arange(32)
    want_a = {int(v) for p in range(2) for v in p * 7 + np.minimum(r * 3, 40)}
    want_b = {int(v) for p in range(2) for v in np.maximum(r * 2, 50) - p * 7}
    want_c = {int(v) for v in np.where((r >= 5) & (r < 20), 100 + r, r)}
    by = {(a.op, a.pointer, a.line): a for a in launch.accesses}
    lines = sorted({a.line for a in launch.accesses})
    assert _elements(by[("load", "x_ptr", lines[0])]) == want_a
    assert _elements(by[("store", "y_ptr", lines[0])]) == want_a
    assert _elements(by[("load", "x_ptr", lines[1])]) == want_b
    assert _elements(by[("store", "z_ptr", lines[1])]) == want_b
    assert _elements(by[("load", "x_ptr", lines[2])]) == want_c
    assert _elements(by[("store", "z_ptr", lines[2])]) == {128 + v for v in want_c}
    assert all(a.exact for a in launch.accesses)


# ---------------------------------------------------------------- programs kept apart (race check)


def _programs_meet(bases, coef, ext) -> bool:
    """Brute force: some element is touched by two different programs."""
    owner: dict[int, int] = {}
    for p, base in enumerate(bases):
        for v in itertools.product(*(range(n) for n in ext)):
            element = int(base + sum(c * x for c, x in zip(coef, v)))
            if owner.setdefault(element, p) != p:
                return True
    return False


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(-40, 40), min_size=1, max_size=6),
    st.lists(st.tuples(st.integers(-20, 20), st.integers(1, 4)), min_size=0, max_size=3),
)
def test_programs_apart_is_never_claimed_where_two_programs_meet(bases, lanes):
    from tilelens_lsp.engines.affine.footprints import programs_apart

    coef = np.array([c for c, _ in lanes], dtype=np.int64)
    ext = np.array([n for _, n in lanes], dtype=np.int64)
    if programs_apart(np.array(bases, dtype=np.int64), coef, ext):
        assert not _programs_meet(bases, coef.tolist(), ext.tolist())


def test_programs_apart_proves_tiles_and_refuses_overlaps_and_repeats():
    from tilelens_lsp.engines.affine.footprints import programs_apart

    # 4 × 4 programs storing 8 × 8 tiles of a 32-column matrix (pid_m·8·32 + pid_n·8 + i·32 + j)
    bases = np.array([pm * 8 * 32 + pn * 8 for pm in range(4) for pn in range(4)])
    assert programs_apart(bases, np.array([32, 1]), np.array([8, 8]))
    assert not programs_apart(bases, np.array([32, 1]), np.array([8, 9]))  # one column into the next tile
    assert not programs_apart(np.array([0, 8, 8]), np.array([1]), np.array([8]))  # two programs, one base
    assert not programs_apart(np.array([0, 8, 24]), np.array([1]), np.array([8]))  # not a lattice: runs instead
    # a lane stride of 0 repeats an element within one program, which is no race between programs
    assert programs_apart(np.array([0, 8, 16]), np.array([1, 0]), np.array([8, 4]))


TWO_STORES = """
import triton
import triton.language as tl

# tilelens: two_stores[(4,)](fp32[64], BLOCK=8)
@triton.jit
def two_stores(x_ptr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0)
    tl.store(x_ptr + offs + BLOCK, 2.0)
"""


def test_two_stores_each_keeping_programs_apart_still_race_with_each_other(tmp_path, monkeypatch):
    # each store alone keeps its programs apart (no per-program runs needed); program p's second store
    # hits program p + 1's first, so the race check must compute the runs it deferred, and find it
    path = tmp_path / "two_stores.py"
    path.write_text(TWO_STORES)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, "auto")
    before = select.ENGINES["summary"]
    (launch,) = analyze_path(path, workspace_root=tmp_path).launches
    assert select.ENGINES["summary"] == before + 1
    assert [d.code for d in launch.diagnostics] == ["TL005"]
    assert "program (0, 0, 0)" in launch.diagnostics[0].message and "program (1, 0, 0)" in launch.diagnostics[0].message


# ---------------------------------------------------------------- races where programs are too many to list

SYMBOLIC_RACES = """
import triton
import triton.language as tl

# tilelens: copy_tail[(cdiv(1000, 8),)](fp32[1000], fp32[1000], 1000, BLOCK=8)
@triton.jit
def copy_tail(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

# tilelens: in_place[(cdiv(1000, 8),)](fp32[1000], 1000, BLOCK=8)
@triton.jit
def in_place(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)

# tilelens: shifted[(cdiv(1000, 8),)](fp32[1000], 1000, BLOCK=8)
@triton.jit
def shifted(x, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, tl.load(x + offs + 1, mask=offs + 1 < n), mask=offs < n)

# tilelens: axis_unused[(cdiv(1000, 8), 2)](fp32[1000], fp32[1000], 1000, BLOCK=8)
@triton.jit
def axis_unused(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

# tilelens: two_stores[(16,)](fp32[136], BLOCK=8)
@triton.jit
def two_stores(x, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x + offs, 1.0)
    tl.store(x + offs + BLOCK, 2.0)
"""


def test_races_past_per_program_arrays_are_decided_from_one_address_or_noted(tmp_path, monkeypatch):
    # the same launches with programs as box variables (the summary's threshold lowered below their
    # grids) and with per-program arrays: where the symbolic summary shows no race and says nothing,
    # the per-program check finds none either; every racing launch gets a note, never a silent clean
    path = tmp_path / "symbolic_races.py"
    path.write_text(SYMBOLIC_RACES)
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, "affine")
    listed = {r.kernel: r for r in analyze_path(path, workspace_root=tmp_path).launches}
    monkeypatch.setattr("tilelens_lsp.engines.affine.summary.SUMMARY_ARRAY_PROGRAMS", 4)
    symbolic = {r.kernel: r for r in analyze_path(path, workspace_root=tmp_path).launches}
    races = {k: [d.code for d in r.diagnostics] for k, r in listed.items()}
    assert races == {
        "copy_tail": [],
        "in_place": [],
        "shifted": ["TL005"],
        "axis_unused": ["TL005"],
        "two_stores": ["TL005"],
    }
    for kernel, result in symbolic.items():
        assert result.engine == "affine" and result.status == "analyzed", kernel
        noted = [n for n in result.notes if n.startswith("races on")]
        if races[kernel]:
            assert noted or "TL005" in [d.code for d in result.diagnostics], kernel
        else:
            assert not noted and not result.diagnostics, (kernel, noted)
    # the note says why, and never blames loaded data the kernel does not have
    (note,) = symbolic["shifted"].notes
    assert "do not all share one address" in note and "loaded" not in note
    (note,) = symbolic["axis_unused"].notes
    assert "not shown to keep programs apart" in note
