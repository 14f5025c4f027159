"""Launch directives fuzzed through the whole pipeline (directives → import → bind → compile → graph).

The parser alone is fuzzed in tests/unit/launches/test_scanner_fuzz.py; here hypothesis writes absurd but
syntactically plausible launches into a real kernel file and `pipeline.analyze_path` analyses it in
this process: huge and negative numbers, empty tensors, zero and enormous grids, block sizes Triton
rejects. Every answer must be a FileResult with precise diagnostics, never an exception, in bounded
time.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
import relfig
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilelens_lsp import pipeline
from tilelens_lsp.model import FileResult
from tilelens_lsp.settings import Settings

KERNELS = """
@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def tile_kernel(a_ptr, M, N, stride_m, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    a = tl.load(a_ptr + rm[:, None] * stride_m + rn[None, :], mask=mask)
    tl.store(a_ptr + rm[:, None] * stride_m + rn[None, :], a * 2, mask=mask)
"""
HEADER = "import triton\nimport triton.language as tl\n\n"

ALLOWED = {"TL001", "TL002", "TL003", "TL004", "TL005", "TL006", "TL010", "TL020", "TL030", "TL100"}
STATUSES = {"analyzed", "refused", "compile-error", "directive-error"}
# what each code's message starts with: a precise statement, never a bare exception text
PREFIX = {
    "TL001": r"(out-of-bounds|\[)",
    "TL002": r"(possible out-of-bounds|\[)",
    "TL003": r"(i\d+ overflow|\[)",
    "TL004": r"(load|store|atomic) outside its view: program",
    "TL005": r"race between (programs: program|lanes: lanes)",
    "TL006": r"possible race( between lanes: lanes|: program)",
    "TL010": r"(Triton compile error: \S|importing this module failed: \S|\[)",
    "TL020": r"\S",
    "TL030": r"(not analyzed: [a-z-]+: \S|\[)",
    "TL100": r"\w+ has no declared launch",
}
SECONDS_PER_EXAMPLE = 60.0  # bounded: an enormous launch is refused, never enumerated to the end
FUZZ_BUDGET = 1 << 22  # a smaller enumeration budget keeps the suite fast; same code paths

# numbers a directive may hold, as source text: mostly plausible (so launches reach the compiler and
# the graph), often absurd: huge, negative, zero, off-by-one around the int widths
SANE = st.one_of(st.integers(1, 5000).map(str), st.sampled_from(["N", "1000", "4096", "cdiv(N, 2)"]))
ABSURD = st.one_of(
    st.sampled_from(
        [
            "0",
            "-1",
            "65536",
            "2**31-1",
            "2**31",
            "2**32",
            "2**40",
            "2**62",
            "2**63-1",
            "2**63",
            "2**64",
            "-(2**31)",
            "10**30",
        ]
    ),
    st.integers(-(2**70), 2**70).map(str),
)
SIZES = st.one_of(SANE, SANE, ABSURD)
GRID_DIMS = st.one_of(
    st.integers(0, 3000).map(str),
    st.integers(0, 3000).map(str),
    st.sampled_from(["0", "1", "2**31-1", "65535", "2**31", "-1", "2**16", "cdiv(N, 128)"]),
    st.integers(0, 2**31 - 1).map(str),
)
BLOCKS = st.one_of(
    st.sampled_from(["16", "64", "128", "256", "1024"]),
    st.sampled_from(["0", "1", "2", "3", "2**20", "2**21", "2**31", "-4", "2**64", "1.5", "True", "'x'", "None"]),
)
DTYPES = st.one_of(
    st.sampled_from(["fp32", "fp16"]), st.sampled_from(["bf16", "fp64", "i8", "i32", "i64", "u8", "fp8e4nv", "fp8e5", "i1"])
)


@st.composite
def grids(draw, wild: bool) -> str:
    dims_of = GRID_DIMS if wild else st.integers(0, 3000).map(str)
    kind = draw(st.sampled_from(["tuple", "int", "lambda"]))
    if kind == "int":
        return draw(dims_of)
    if kind == "lambda":
        block = draw(st.sampled_from(["BLOCK", "BLOCK_M", "NOPE"] if wild else ["BLOCK", "BLOCK_M"]))
        return f'lambda meta: (cdiv({draw(SIZES if wild else SANE)}, meta["{block}"]), {draw(dims_of)})'
    dims = draw(st.lists(dims_of, min_size=1, max_size=3))
    return "(" + "".join(f"{d}, " for d in dims) + ")"


@st.composite
def tensors(draw, ndim: int, wild: bool) -> str:
    dtype = draw(DTYPES)
    sizes = SIZES if wild else SANE
    shape = [draw(sizes) for _ in range(ndim)]
    form = draw(st.sampled_from(["short", "short", "short", "transposed", "long", "empty"]))
    if form == "empty":
        return f"{dtype}[0]" if ndim == 1 else f"{dtype}[0, {shape[-1]}]"
    if form == "transposed" and ndim == 2:
        return f"{dtype}[{', '.join(shape)}].T"
    if form == "long":
        strides = [draw(sizes) for _ in range(ndim)]
        return (
            f"tensor({dtype}, ({', '.join(shape)},), strides=({', '.join(strides)},), "
            f"offset={draw(sizes)}, storage={draw(sizes)})"
        )
    return f"{dtype}[{', '.join(shape)}]"


@st.composite
def scalars(draw, wild: bool) -> str:
    value = draw(SIZES if wild else SANE)
    if not wild:
        return value
    return draw(st.one_of(st.just(value), st.just("N"), st.sampled_from([f"i64({value})", "1.5", "True", "None", "'s'"])))


@st.composite
def launches(draw) -> str:
    kernel = draw(st.sampled_from(["add_kernel", "tile_kernel"]))
    wild = draw(st.booleans())  # half the launches plausible, so they reach the graph
    blocks = BLOCKS if wild else st.sampled_from(["16", "64", "128", "256", "1024"])
    grid = draw(grids(wild))
    if kernel == "add_kernel":
        args = [draw(tensors(1, wild)), draw(tensors(1, wild)), draw(tensors(1, wild)), draw(scalars(wild))]
        kwargs = {"BLOCK": draw(blocks)}
    else:
        args = [draw(tensors(2, wild)), draw(scalars(wild)), draw(scalars(wild)), draw(scalars(wild))]
        kwargs = {"BLOCK_M": draw(blocks), "BLOCK_N": draw(blocks)}
    if draw(st.booleans()):  # some as keywords, some positional
        names = {"add_kernel": ["x_ptr", "y_ptr", "out_ptr", "n"], "tile_kernel": ["a_ptr", "M", "N", "stride_m"]}[kernel]
        cut = draw(st.integers(0, len(args)))
        kwargs = {**dict(zip(names[cut:], args[cut:])), **kwargs}
        args = args[:cut]
    drop = draw(st.integers(0, 6))  # sometimes an argument missing: wrong arity
    parts = args + [f"{k}={v}" for k, v in kwargs.items()]
    if wild and drop < len(parts) and draw(st.integers(0, 2)) == 0:
        del parts[drop]
    return f"{kernel}[{grid}](" + ", ".join(parts) + ")"


@st.composite
def kernel_files(draw) -> tuple[str, int]:
    lines = [f"# tilelens: N = {draw(st.one_of(SANE, ABSURD))}"]
    n = draw(st.integers(1, 3))
    for _ in range(n):
        lines.append(f"# tilelens: {draw(launches())}")
    return HEADER + "\n".join(lines) + "\n" + KERNELS, n


def _check(result: FileResult, text: str) -> list[str]:
    assert isinstance(result, FileResult)
    n_lines = len(text.splitlines())
    seen = []
    for launch in result.launches:
        assert launch.status in STATUSES, launch.status
    for d in result.all_diagnostics():
        assert d.code in ALLOWED, f"{d.code}: {d.message}"
        assert d.message and "Traceback" not in d.message and "internal error" not in d.message, d.message
        assert re.match(PREFIX[d.code], d.message), f"{d.code}: imprecise message {d.message!r}"
        assert 1 <= d.line <= n_lines and d.column >= 1, (d.code, d.line, d.message)
        seen.append(d.code)
    return seen


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz-pipeline")


@pytest.fixture(autouse=True)
def no_disk_cache(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    # differential: every launch the affine summary answers is enumerated too, and a disagreement
    # is a TL050, which _check fails on
    monkeypatch.setenv("TILELENS_ENGINE", "compare")


_FILES = iter(range(1, 10**9))


def _analyze(folder: Path, text: str, settings: Settings, key: str) -> tuple[FileResult, float]:
    relfig.bump(key, "examples")
    path = folder / f"k{next(_FILES)}.py"  # a new module each time: nothing is reused
    path.write_text(text)
    t0 = time.monotonic()
    try:
        result = pipeline.analyze_path(path, folder, settings)
    except BaseException:
        relfig.bump(key, "exceptions")
        raise
    return result, time.monotonic() - t0


# CI runs a fixed sample (derandomized); TILELENS_FUZZ_EXAMPLES=N explores N fresh random examples.
_EXPLORE = int(os.environ.get("TILELENS_FUZZ_EXAMPLES", "0"))


@settings(
    max_examples=_EXPLORE or 60,
    deadline=None,
    derandomize=not _EXPLORE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(kernel_files())
def test_fuzzed_launches_always_get_precise_diagnostics(folder: Path, case: tuple[str, int]):
    text, n_directives = case
    result, elapsed = _analyze(folder, text, Settings(enumeration_budget=FUZZ_BUDGET), "fuzz")
    codes = _check(result, text)
    fig = relfig.FIGURES["fuzz"]
    fig["directives"] = fig.get("directives", 0) + n_directives
    fig["launches"] = fig.get("launches", 0) + len(result.launches)
    fig["slowest"] = max(fig.get("slowest", 0.0), elapsed)
    counts = fig.setdefault("codes", {})
    for c in codes:
        counts[c] = counts.get(c, 0) + 1
    assert elapsed < SECONDS_PER_EXAMPLE, f"{elapsed:.1f} s for:\n{text}"


ENORMOUS = [
    # (directive, what must come back)
    ("add_kernel[(2**31-1,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)", {"TL030", "TL001", "TL003"}),
    # pid * BLOCK wraps in i32 (TL003), and the wrapped offsets point before the tensor (TL001)
    ("add_kernel[(2**31-1,)](fp32[2**40], fp32[2**40], fp32[2**40], 2**40, BLOCK=2**20)", {"TL030", "TL001", "TL003"}),
    (
        "add_kernel[(2**31-1, 65535, 65535)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)",
        {"TL030", "TL001", "TL003"},
    ),
    # 2**93 programs: the affine summary takes program ids as variables and proves the masked
    # accesses stay in [0, 10) (no i32 overflow: pid * 1 < 2**31); enumeration would refuse it
    ("add_kernel[(2**31-1, 2**31-1, 2**31-1)](fp32[10], fp32[10], fp32[10], 10, BLOCK=1)", set()),
    ("add_kernel[(2**31,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)", {"TL020"}),
    ("add_kernel[(0,)](fp32[0], fp32[0], fp32[0], 0, BLOCK=256)", set()),
    ("add_kernel[(0, 2**31-1, 2**31-1)](fp32[0], fp32[0], fp32[0], 0, BLOCK=256)", set()),
    (
        "tile_kernel[(2**31-1, 65535)](fp16[2**20, 2**20], 2**20, 2**20, 2**20, BLOCK_M=1024, BLOCK_N=1024)",
        {"TL030", "TL001", "TL003"},
    ),
    # absurd block sizes: Triton's own limits, reported as compile errors at the kernel's line
    ("add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=2**21)", {"TL010"}),
    ("add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=3)", {"TL010"}),
    ("add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=0)", {"TL010"}),
    ("add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=-4)", {"TL010"}),
    ("add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 2**64, BLOCK=256)", {"TL020"}),
    ("add_kernel[(4,)](fp32[-1], fp32[1000], fp32[1000], 1000, BLOCK=256)", {"TL020"}),
    ("add_kernel[(4,)](fp32[0], fp32[0], fp32[0], 0, BLOCK=256)", set()),
    ("add_kernel[(4,)](fp32[0], fp32[0], fp32[0], 1, BLOCK=256)", {"TL001"}),
]

NO_ACCESS = """
@triton.jit
def empty_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)       # dead: Triton drops the load, no access is left
"""


@pytest.mark.parametrize("directive,expected", ENORMOUS, ids=[d.split("](")[0] for d, _ in ENORMOUS])
def test_enormous_grids_are_answered_with_the_default_budget(folder: Path, directive: str, expected: set):
    text = HEADER + f"# tilelens: {directive}\n" + KERNELS
    result, elapsed = _analyze(folder, text, Settings(), "grids")
    codes = set(_check(result, text)) - {"TL100"}
    if "TL030" in expected:
        # a partial enumeration reports the races among the programs it reached (here wrapped row
        # offsets make two programs store one element): whether it reaches them depends on the budget
        codes.discard("TL005")
    relfig.bump("grids", "tried")
    fig = relfig.FIGURES["grids"]
    fig["slowest"] = max(fig.get("slowest", 0.0), elapsed)
    assert codes == expected, [d.message for d in result.all_diagnostics()]
    if "TL030" in expected:
        assert any("launch-too-large" in d.message for d in result.all_diagnostics())
    assert elapsed < SECONDS_PER_EXAMPLE
    relfig.bump("grids", "answered")


def test_a_launch_without_accesses_over_a_huge_grid_is_refused_not_walked(folder: Path, monkeypatch):
    """A kernel whose accesses all disappear walked every program of the grid: 2**62 of them would
    never end. The programs count against the budget too. (The enumeration alone: the affine
    summary answers this launch at once, with no access and nothing to report.)"""
    text = HEADER + "# tilelens: empty_kernel[(2**31-1, 65535, 65535)](fp32[16], 16, BLOCK=16)\n" + NO_ACCESS
    monkeypatch.setenv("TILELENS_ENGINE", "auto")
    result, elapsed = _analyze(folder, text, Settings(), "grids")
    assert not list(result.all_diagnostics()) and elapsed < SECONDS_PER_EXAMPLE
    monkeypatch.setenv("TILELENS_ENGINE", "enumerate")
    result, elapsed = _analyze(folder, text, Settings(), "grids")
    relfig.bump("grids", "tried")
    assert {d.code for d in result.all_diagnostics()} == {"TL030"}
    assert "launch-too-large" in result.all_diagnostics()[0].message
    assert elapsed < SECONDS_PER_EXAMPLE
    relfig.bump("grids", "answered")
