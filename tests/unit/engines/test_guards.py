"""Guards narrow declared-range values, value sets are unions, trip counts may be data, and races are
found from bounds and between lanes.

The guarded kernels are the conformance corpus's (`tests/conformance/kernels/`, where each one is also
run under Triton's interpreter and must stay inside the product's bounds) and their buggy twins
(`tests/conformance/bugs/`); here their verdicts are pinned: clean and analysed, or TL002 with the
element (and index value) that leaves the storage. `refine` is held to brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import FIXTURES, REPO, line_of
from tilelens_lsp.engines import ranges
from tilelens_lsp.engines.values import IntV
from tilelens_lsp.launches.scanner import parse_directives
from tilelens_lsp.pipeline import analyze_path

KERNELS = REPO / "tests" / "conformance" / "kernels"
BUGS = REPO / "tests" / "conformance" / "bugs"

CLEAN = [
    "guarded_gather.py",
    "csr_row_sum_guarded.py",
    "moe_rows_guarded.py",
    "labels_ignore_union.py",
    "varlen_cu_seqlens_loop.py",
    "moe_expert_loop.py",
    "token_count_loop.py",
    "while_search_cu_seqlens.py",
    "gather_rows_nested_k_loop.py",
    "paged_blocks_masked_by_length.py",
]
# twin: (element the witness names, index value it names or None)
TWINS = {
    "guarded_gather_off_by_one.py": (64, 64),
    "csr_guard_off_by_one.py": (40, None),
    "moe_rows_offsets_past_tokens.py": (1024, None),
    "labels_union_past_classes.py": (1600, 100),
    "varlen_loop_unmasked.py": (50, None),
    "moe_loop_offsets_past_tokens.py": (1024, None),
    "token_count_past_slab.py": (128, None),
    "while_search_short_cu_seqlens.py": (4, None),
    "segment_heads_past_end.py": (59, None),
    "paged_blocks_past_cache.py": (320, None),
}


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")


def _launch(path):
    result = analyze_path(path, workspace_root=path.parent)
    assert len(result.launches) == 1, result
    return result.launches[0]


@pytest.mark.parametrize("name", CLEAN)
def test_a_correct_guarded_or_data_bounded_kernel_is_analysed_clean(name):
    launch = _launch(KERNELS / name)
    assert launch.status == "analyzed", launch.diagnostics
    assert [d.code for d in launch.diagnostics] == [], [d.message for d in launch.diagnostics]
    assert launch.value_ranges, "the bound rests on a declared range"
    assert any(not a.exact for a in launch.accesses), "a footprint from loaded data is a bound"


@pytest.mark.parametrize("name", sorted(TWINS))
def test_its_buggy_twin_is_a_possible_out_of_bounds_with_a_witness(name):
    launch = _launch(BUGS / name)
    assert launch.status == "analyzed"
    found = [d for d in launch.diagnostics if d.code == "TL002"]
    assert found and {d.code for d in launch.diagnostics} == {"TL002"}, launch.diagnostics
    element, value = TWINS[name]
    assert found[0].witness.element == element, found[0].message
    if value is not None:
        assert found[0].witness.value == value, found[0].message
    assert "data-dependent-bound" not in " ".join(d.message for d in launch.diagnostics)


def _by_line(path):
    result = analyze_path(path, workspace_root=path.parent)
    return {launch.kernel: launch for launch in result.launches}


def test_a_mask_on_loaded_ids_bounds_the_pointers_a_loop_advances():
    # vLLM's fused MoE GEMM: a_ptrs starts at the token's row and advances by BLOCK_K per iteration
    launch = _launch(KERNELS / "moe_sorted_tokens_k_loop.py")
    assert launch.status == "analyzed"
    # token ids declared as a range may repeat across programs: a possible race, nothing out of bounds
    assert {d.code for d in launch.diagnostics} == {"TL006"}, [d.message for d in launch.diagnostics]
    bug = _launch(BUGS / "moe_sorted_tokens_mask_off_by_one.py")
    found = [d for d in bug.diagnostics if d.code == "TL002"]
    assert [(d.line, d.witness.element, d.witness.value) for d in found] == [(25, 144, 12), (31, 96, 12)]


@pytest.mark.parametrize(
    "kernel,needle,value",
    [
        ("g_ok", None, None),
        ("g_nested", None, None),
        ("g_off_by_one", "row n passes the mask", 512),
        ("g_loaded_step", "a loaded step", None),
        ("g_reassigned", "set anew from tok2", None),
        ("g_nested_bad", "40 past a 64-wide row", 511),
    ],
)
def test_a_fact_follows_a_loop_carried_pointer_only_where_the_loop_adds_a_known_amount(kernel, needle, value):
    path = FIXTURES / "loop_guard_kernels.py"
    launch = _by_line(path)[kernel]
    assert launch.status == "analyzed"
    if needle is None:
        assert launch.diagnostics == (), [d.message for d in launch.diagnostics]
        return
    assert [(d.code, d.line) for d in launch.diagnostics] == [("TL002", line_of(path, needle))]
    if value is not None:
        assert launch.diagnostics[0].witness.value == value, launch.diagnostics[0].message


def test_a_narrowing_holds_inside_its_branch_and_on_its_edge_only():
    path = FIXTURES / "guard_scopes.py"
    launches = _by_line(path)
    after = launches["after_join_kernel"]
    assert [(d.code, d.line) for d in after.diagnostics] == [("TL002", line_of(path, "after the join"))]
    assert after.diagnostics[0].witness.value == -100
    edge = launches["wrong_edge_kernel"]
    assert [(d.code, d.line) for d in edge.diagnostics] == [("TL002", line_of(path, "y is -100 exactly"))]


def test_an_early_return_s_narrowing_stops_where_another_edge_joins():
    path = FIXTURES / "guard_join.py"
    (launch,) = analyze_path(path, workspace_root=path.parent).launches
    assert [(d.code, d.line) for d in launch.diagnostics] == [("TL002", line_of(path, "after the join"))]
    assert launch.diagnostics[0].witness.value == -100


def test_a_refusal_names_what_would_decide_it_for_arithmetic_the_range_does_not_bound(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def k(idx_ptr, t_ptr, out_ptr):\n    i = tl.load(idx_ptr)\n    v = tl.load(t_ptr + i * i)\n"
        "    tl.store(out_ptr, v)\n\n\n# tilelens: k[(1,)](i32[1].values(-70000, 70000), fp32[16], fp32[1])\n"
    )
    (launch,) = analyze_path(path, workspace_root=tmp_path).launches
    (refusal,) = [d for d in launch.diagnostics if d.code == "TL030"]
    assert "idx_ptr" in refusal.message and ".values(" in refusal.message, refusal.message


def test_a_lane_fact_reaches_an_address_only_through_the_lanes_its_mask_stands_for():
    path = FIXTURES / "guard_scopes.py"
    launches = _by_line(path)
    trans = launches["transposed_guard_kernel"]
    assert [(d.code, d.line) for d in trans.diagnostics] == [("TL002", line_of(path, "not its transpose"))]
    where = launches["where_guard_kernel"]
    assert [(d.code, d.line) for d in where.diagnostics] == [("TL002", line_of(path, "idx may be 16..19"))]


def test_a_loop_bound_from_undeclared_data_is_refused_naming_the_tensor_and_the_directive_form():
    launch = _by_line(FIXTURES / "guard_scopes.py")["unranged_loop_kernel"]
    assert launch.status == "refused"
    (refusal,) = [d for d in launch.diagnostics if d.code == "TL030"]
    assert "data-dependent-bound" in refusal.message and "cu_ptr" in refusal.message
    assert ".values(LO, HI)" in refusal.message


def test_races_from_bounds_and_between_lanes():
    path = FIXTURES / "races_bounds_lanes.py"
    launches = _by_line(path)
    codes = {name: [d.code for d in launch.diagnostics] for name, launch in launches.items()}
    assert codes == {
        "histogram_kernel": ["TL006"],
        "histogram_block_kernel": ["TL006"],
        "histogram_atomic_kernel": [],
        "pairs_kernel": ["TL005"],
        "pairs_data_kernel": ["TL006"],
        "pairs_same_kernel": [],
        "embedding_backward_kernel": ["TL006"],
    }, codes
    lanes = launches["pairs_kernel"].diagnostics[0]
    assert "lanes [0] and [1]" in lanes.message and "values 0 and 1" in lanes.message
    assert lanes.witness.element == 0
    assert all(launch.status == "analyzed" for launch in launches.values())


# ---------------------------------------------------------------- value sets


def _values(text: str):
    launches, errors = parse_directives(f"# tilelens: k[(1,)]({text})")
    assert not errors, errors
    return launches[0].args[0].values


def test_a_value_set_is_a_union_of_intervals_and_points_in_both_forms():
    assert _values("i64[8].values([(0, 100), -100])") == ((-100, -99), (0, 100))
    assert _values("tensor(i64, (8,), values=[(0, 100), -100])") == ((-100, -99), (0, 100))
    assert _values("i64[8].values((0, 100), -100)") == ((-100, -99), (0, 100))
    assert _values("i64[8].values([(0, 10), 10, (11, 20)])") == (0, 20)  # parts that touch merge
    assert _values("i64[8].values(0, 100)") == (0, 100)


@pytest.mark.parametrize(
    "text, message",
    [
        ("i32[8].values([(3, 3)])", "is empty"),
        ("i32[8].values([(0, 1, 2)])", "each part is an interval"),
        ("i32[8].values(7)", "two arguments"),
        ("k2 = [1, 2]", "a list is not allowed"),
    ],
)
def test_a_bad_value_set_is_a_precise_directive_error(text, message):
    source = f"# tilelens: {text}" if "=" in text else f"# tilelens: k[(1,)]({text})"
    _, errors = parse_directives(source)
    assert errors and message in errors[0].message, errors


def test_the_toml_form_reads_a_union(tmp_path):
    (tmp_path / "k.py").write_text((KERNELS / "labels_ignore_union.py").read_text().split("# tilelens:")[0])
    (tmp_path / "tilelens.toml").write_text(
        '[[launch]]\nfile = "k.py"\nlaunch = "ce_pick_kernel[(16,)](fp32[16, 100], 100, '
        'i64[16].values([(0, 100), -100]), fp32[16], 100, -100, BLOCK_SIZE=64)"\n'
    )
    result = analyze_path(tmp_path / "k.py", workspace_root=tmp_path)
    (launch,) = result.launches
    assert launch.status == "analyzed" and launch.diagnostics == ()
    assert launch.value_ranges == {"Y_ptr": [[-100, -99], [0, 100]]}


# ---------------------------------------------------------------- refine, by brute force

PREDS = ["slt", "sle", "sgt", "sge", "eq", "ne", "ult", "ule", "ugt", "uge"]


def _holds(pred: str, x: int, y: int, bits: int = 32) -> bool:
    if pred.startswith("u"):
        x, y = x % (1 << bits), y % (1 << bits)
    return {
        "slt": x < y,
        "sle": x <= y,
        "sgt": x > y,
        "sge": x >= y,
        "eq": x == y,
        "ne": x != y,
        "ult": x < y,
        "ule": x <= y,
        "ugt": x > y,
        "uge": x >= y,
    }[pred]


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.sampled_from(PREDS), st.integers(-20, 20), st.integers(0, 30), st.integers(-25, 25), st.integers(0, 3), st.booleans()
)
def test_refine_keeps_every_value_the_fact_allows(pred, lo, width, c, cwidth, with_point):
    """Every declared value x with `x pred y` for some y in y's interval stays inside the narrowed
    interval, and a lane called empty has no such x (the union's gap is honoured too)."""
    decl = ((lo, lo + width + 1),)
    if with_point:
        decl = ((lo - 40, lo - 39),) + decl
    members = [v for a, b in decl for v in range(a, b)]
    x = ranges.loaded(decl, (1,), 32, "x", None, None)
    y = IntV(np.array([c]), 32) if cwidth == 0 else ranges.RangeV(np.array([c]), np.array([c + cwidth]), 32)
    ys = [c] if cwidth == 0 else list(range(c, c + cwidth + 1))
    out, empty = ranges.refine(x, pred, y)
    allowed = [v for v in members if any(_holds(pred, v, w) for w in ys)]
    if empty[0]:
        assert not allowed
        return
    assert all(int(out.lo[0]) <= v <= int(out.hi[0]) for v in allowed), (allowed, out)


class _FakeTensor:
    """What capture reads of an integer tensor: min, max, numel, unique."""

    def __init__(self, values):
        self.v = np.array(values)

    def min(self):
        return self.v.min()

    def max(self):
        return self.v.max()

    def numel(self):
        return self.v.size

    def unique(self):
        return np.unique(self.v)


def test_capture_records_the_few_separate_parts_of_the_values_it_saw():
    from tilelens_lsp.capture.hook import observed_values
    from tilelens_lsp.capture.runner import values_text

    labels = observed_values(_FakeTensor([-100, -100] + list(range(3, 991, 7)) + [990]))
    assert labels == [[-100, -99], [3, 991]]
    assert values_text(labels) == "[-100, (3, 991)]"
    assert _values(f"i64[7].values({values_text(labels)})") == ((-100, -99), (3, 991))
    assert observed_values(_FakeTensor([0, 5, 9])) == [0, 10]  # one part
    assert observed_values(_FakeTensor(list(range(0, 1000, 100)))) == [0, 901]  # too many parts
    assert values_text([0, 10], pair=True) == "(0, 10)"


def test_the_hover_shows_a_union_and_a_launch_s_refusal_with_what_would_decide_it():
    from tilelens_lsp.lsp.hover import hover_markdown

    path = KERNELS / "labels_ignore_union.py"
    result = analyze_path(path, workspace_root=path.parent)
    line = line_of(path, "x_y = tl.load(X_ptr + y)")
    text = hover_markdown(result, result.launches[0].accesses[0].path or path.name, line)
    assert text is not None and "{-100} ∪ [0, 100)" in text, text
    scopes = FIXTURES / "guard_scopes.py"
    result = analyze_path(scopes, workspace_root=scopes.parent)
    directive = line_of(scopes, "unranged_loop_kernel[")
    text = hover_markdown(result, scopes.name, directive, scopes.read_text().splitlines()[directive - 1])
    assert text is not None and "cu_ptr" in text and ".values(LO, HI)" in text, text
