"""Property tests: no text makes the directive reader raise, and well-formed launches round-trip."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelens_lsp.launches.evaluator import eval_grid
from tilelens_lsp.launches.kernels import find_kernels
from tilelens_lsp.launches.scanner import parse_directives
from tilelens_lsp.launches.specs import DTYPES, EvalError, contiguous_strides
from tilelens_lsp.model import DirectiveError, LaunchSpec, ScalarSpec, TensorSpec

FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KERNELS = {"k", "add_kernel"}

TOKENS = [
    "k",
    "add_kernel",
    "nope",
    "[",
    "]",
    "(",
    ")",
    ",",
    "=",
    "lambda",
    "meta",
    "META",
    ":",
    "meta['B']",
    'meta["BLOCK"]',
    "fp32",
    "fp16",
    "bf16",
    "fp8e4nv",
    "u64",
    "fp33",
    "tensor",
    "strides=",
    "offset=",
    "storage=",
    ".T",
    ".x",
    "cdiv",
    "triton.cdiv",
    "min",
    "max",
    "i64",
    "+",
    "-",
    "*",
    "//",
    "%",
    "**",
    "/",
    "N",
    "M",
    "Q",
    "0",
    "-1",
    "1",
    "7",
    "2**64",
    "2**63",
    "10**30",
    "99999999999999999999999999",
    "1.5",
    "1e308",
    "True",
    "None",
    "'s'",
    '"#("',
    "__import__",
    "open",
    "os.system",
    "#",
    ";",
    "\n# tilelens:",
    "\n",
    "x",
    "[1]",
    "{",
    "}",
    "@",
    "\\",
    "'",
]


def check_result(text: str, result: tuple[list[Any], list[Any]]) -> None:
    launches, errors = result
    n_lines = len(re.split(r"\r\n|\r|\n", text))
    for launch in launches:
        assert isinstance(launch, LaunchSpec)
        assert LaunchSpec.from_json(launch.to_json()) == launch
        assert 1 <= launch.line <= n_lines
    for error in errors:
        assert isinstance(error, DirectiveError)
        assert error.message and not error.message.startswith("internal error"), error.message
        assert 1 <= error.line <= error.end_line <= n_lines and error.column >= 1


@FUZZ
@given(st.text())
def test_random_text_never_raises(text: str):
    check_result(text, parse_directives(text, KERNELS))
    assert isinstance(find_kernels(text), list)


@FUZZ
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_random_directive_body_never_raises(body: str):
    text = f"# tilelens: {body}"
    check_result(text, parse_directives(text, KERNELS))


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40), st.booleans())
def test_token_soup_from_the_grammar_never_raises(tokens: list[str], bind_first: bool):
    prelude = "# tilelens: N, M = 4, 8\n" if bind_first else ""
    text = prelude + "# tilelens: " + " ".join(tokens)
    check_result(text, parse_directives(text, KERNELS))


@settings(max_examples=120, deadline=None)
@given(
    st.integers(min_value=1, max_value=600),
    st.sampled_from(
        [
            "({})",
            "-{}",
            "cdiv({}, 2)",
            "fp32[{}]",
            "[{}]",
            "({},)",
            "min({})",
            "lambda meta: {}",
            "{}.T",
            "{} ** 2",
            "tensor(fp16, {})",
        ]
    ),
)
def test_deep_nesting_never_raises(depth: int, wrapper: str):
    expr = "1"
    for _ in range(depth):
        expr = wrapper.format(expr)
    for text in (f"# tilelens: k[(1,)]({expr})", f"# tilelens: k[{expr}](1)", f"# tilelens: X = {expr}"):
        check_result(text, parse_directives(text, KERNELS))


HUGE = st.one_of(
    st.integers(),
    st.integers(min_value=-(2**200), max_value=2**200),
    st.sampled_from([0, -1, 2**31 - 1, 2**31, 2**63, 2**64, 2**64 + 1, -(2**64) - 1]),
)


@FUZZ
@given(st.lists(HUGE, min_size=0, max_size=4), st.lists(HUGE, min_size=0, max_size=4), HUGE)
def test_huge_negative_and_zero_sizes_and_grids_never_raise(grid: list[int], shape: list[int], n: int):
    grid_text = "(" + "".join(f"{g}," for g in grid) + ")"
    shape_text = ", ".join(map(str, shape)) or "()"
    text = (
        f"# tilelens: k[{grid_text}](fp32[{shape_text}], i64({n}), {n}, "
        f"tensor(fp16, ({shape_text},), offset={n}), x={n} ** {n % 200})"
    )
    launches, errors = parse_directives(text, KERNELS)
    check_result(text, (launches, errors))
    valid_grid = 1 <= len(grid) <= 3 and all(0 <= g < 2**31 for g in grid)
    if launches:
        assert valid_grid and launches[0].grid == tuple(grid)
    if not valid_grid:  # an error inside the grid's brackets
        assert any(15 <= e.column < 15 + len(grid_text) for e in errors)


@FUZZ
@given(st.text(max_size=80), st.dictionaries(st.text(max_size=5), st.integers(), max_size=3))
def test_eval_grid_only_raises_eval_error(expr: str, meta: dict[str, int]):
    try:
        grid = eval_grid(expr, {"N": 10}, meta)
    except EvalError:
        return
    assert 1 <= len(grid) <= 3 and all(0 <= g < 2**31 for g in grid)


# ---------------------------------------------------------------- round trip

NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: (
        s
        not in {
            "lambda",
            "meta",
            "min",
            "max",
            "cdiv",
            "tensor",
            "triton",
            "bool",
            "if",
            "in",
            "is",
            "or",
            "and",
            "not",
            "for",
            "as",
            "def",
            "del",
            "try",
            "with",
        }
        and s not in DTYPES
    )
)


@st.composite
def tensors(draw: Any) -> tuple[str, TensorSpec]:
    dtype = draw(st.sampled_from(DTYPES))
    shape = tuple(draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=3)))
    spec = TensorSpec(dtype, shape, contiguous_strides(shape), 0, 0)
    storage = 0 if spec.numel == 0 else spec.numel
    spec = TensorSpec(dtype, shape, spec.strides, 0, storage)
    text = f"{dtype}[{', '.join(map(str, shape))}]"
    if len(shape) == 2 and draw(st.booleans()):
        return text + ".T", TensorSpec(dtype, shape[::-1], spec.strides[::-1], 0, storage)
    return text, spec


SCALARS = st.one_of(
    st.integers(-(2**63), 2**64 - 1).map(lambda v: (repr(v), ScalarSpec("int", v))),
    st.integers(-(2**63), 2**63 - 1).map(lambda v: (f"i64({v})", ScalarSpec("i64", v))),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: (repr(v), ScalarSpec("float", v))),
    st.booleans().map(lambda v: (repr(v), ScalarSpec("bool", v))),
    st.text(max_size=10).map(lambda v: (repr(v), ScalarSpec("str", v))),
    st.just(("None", ScalarSpec("none", None))),
)
ARGS = st.one_of(tensors(), SCALARS)


@pytest.mark.slow
@FUZZ
@given(
    st.sampled_from(sorted(KERNELS)),
    st.lists(st.integers(0, 2**31 - 1), min_size=1, max_size=3),
    st.lists(ARGS, max_size=5),
    st.dictionaries(NAMES, ARGS, max_size=4),
    st.booleans(),
    st.text(alphabet=" \t", max_size=3),
)
def test_well_formed_launches_round_trip(
    kernel: str, grid: list[int], args: list, kwargs: dict, multi_line: bool, indent: str
):
    parts = [text for text, _ in args] + [f"{name}={text}" for name, (text, _) in kwargs.items()]
    grid_text = "(" + "".join(f"{g}, " for g in grid) + ")"
    sep = f",\n{indent}# tilelens:   " if multi_line else ", "
    text = f"x = 1\n{indent}# tilelens: {kernel}[{grid_text}](" + sep.join(parts) + ")\n"
    launches, errors = parse_directives(text, KERNELS)
    assert errors == []
    (launch,) = launches
    assert launch.kernel == kernel and launch.line == 2 and launch.grid == tuple(grid)
    assert launch.args == tuple(spec for _, spec in args)
    assert launch.kwargs == tuple((name, spec) for name, (_, spec) in kwargs.items())
    assert LaunchSpec.from_json(launch.to_json()) == launch


@FUZZ
@given(st.integers(0, 2**40), st.integers(1, 2**20), st.integers(1, 4096), st.sampled_from(["meta", "META", "m"]))
def test_grid_lambdas_round_trip_through_eval_grid(n: int, block: int, rows: int, param: str):
    text = (
        f"# tilelens: N, R = {n}, {rows}\n"
        f"# tilelens: k[lambda {param}: (cdiv(N, {param}['BLOCK']), min(R, 65535))](fp32[R])\n"
    )
    launches, errors = parse_directives(text, KERNELS)
    assert errors == []
    (launch,) = launches
    expected = ((n + block - 1) // block, min(rows, 65535))
    if expected[0] < 2**31:
        assert eval_grid(launch.grid_expr or "", launch.grid_env, {"BLOCK": block}) == expected
