"""Differential fuzzing of control flow against Triton's interpreter: random kernels with early
returns (program-uniform, data-dependent, nested with values joined after them, inside noinline
helpers) and pointers chosen per program or per lane. Every access footprint the product reports
must equal what `TRITON_INTERPRET=1` touched (or cover it, where the product reports a bound).

The kernels are generated from a fixed seed and run through the oracle in one batch;
`TILELENS_FUZZ_EXAMPLES` sets how many (default 60)."""

from __future__ import annotations

import os
import random
import textwrap
from pathlib import Path

import pytest

from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path

from oracle_runner import run_oracle_files
from test_conformance import FALSE_ALARMS, _config_matches, compare

EXAMPLES = int(os.environ.get("TILELENS_FUZZ_EXAMPLES", "60"))
SEED = 20261130

EXITS = [
    "if pid {cmp} {K}:\n    return",
    "if pid * BLOCK >= n:\n    return",
    "if tl.load(f_ptr + pid) == {V}:\n    return",
    "if pid > {K}:\n    if pid % {M} == {R}:\n        return\n    s = {A}\nelse:\n    s = {B}",
    "if tl.load(f_ptr + pid) != {V}:\n    if pid > {K}:\n        return\n    s = {A}\nelse:\n    s = {B}",
]
POINTERS = ["p = x_ptr", "p = tl.where(pid % {M} == {R}, x_ptr, w_ptr)",
            "if pid < {K}:\n    p = x_ptr\nelse:\n    p = w_ptr"]
STORES = ["dst = y_ptr + offs", "dst = tl.where(offs % {M} == {R}, y_ptr + offs, z_ptr + offs)",
          "dst = tl.where(tl.load(f_ptr + pid) == {V}, y_ptr + offs, z_ptr + offs)"]
HELPER = '''
@triton.jit(noinline=True)
def {name}(f_ptr, pid, n, BLOCK: tl.constexpr):
    s = 0
{exits}
    return s + 1
'''


def _fill(template: str, rng: random.Random) -> str:
    m = rng.randint(2, 4)
    return template.format(cmp=rng.choice(["<", ">", ">=", "=="]), K=rng.randint(0, 7), V=rng.randint(0, 2),
                           M=m, R=rng.randint(0, m - 1), A=rng.randint(0, 2), B=rng.randint(0, 2))


def _indent(code: str, n: int = 4) -> str:
    return textwrap.indent(code, " " * n)


def kernel_source(rng: random.Random) -> str:
    exits = [_fill(rng.choice(EXITS), rng) for _ in range(rng.randint(1, 2))]
    in_helper = rng.random() < 0.3
    helper = ""
    if in_helper:
        exits = [e.replace("return", "return 0") for e in exits]     # a helper's returns carry a value
        helper = HELPER.format(name="gate", exits=_indent("\n".join(exits)))
        prelude = "s = gate(f_ptr, pid, n, BLOCK)"
    else:
        prelude = "s = 0\n" + "\n".join(exits)
    body = "\n".join([
        "pid = tl.program_id(0)", prelude, _fill(rng.choice(POINTERS), rng),
        "offs = (pid + s) * BLOCK + tl.arange(0, BLOCK)", "mask = offs < n",
        "v = tl.load(p + offs, mask=mask, other=0.0)", _fill(rng.choice(STORES), rng),
        "tl.store(dst, v + 1, mask=mask)"])
    grid, block = rng.randint(1, 9), rng.choice([16, 32])
    size = (grid + 4) * block
    n = rng.randint(1, size)
    return (f"import triton\nimport triton.language as tl\n\nTILELENS_ORACLE_FILL = {{\"f_ptr\": 3}}\n{helper}\n\n"
            f"@triton.jit\ndef k(x_ptr, w_ptr, y_ptr, z_ptr, f_ptr, n, BLOCK: tl.constexpr):\n{_indent(body)}\n\n\n"
            f"# tilelens: k[({grid},)](fp32[{size}], fp32[{size}], fp32[{size}], fp32[{size}], i32[{grid}], {n}, "
            f"BLOCK={block})\n")


@pytest.fixture(scope="module")
def fuzz_files(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("cfg-fuzz")
    rng = random.Random(SEED)
    files = []
    for i in range(EXAMPLES):
        path = folder / f"cfg_fuzz_{i}.py"
        path.write_text(kernel_source(rng))
        files.append(path)
    return files


def test_control_flow_footprints_match_the_interpreter(fuzz_files, monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.setenv(select.ENGINE_ENV, "compare")
    oracle = run_oracle_files(fuzz_files, jobs=2, use_cache=False)
    problems: list[str] = []
    compared = refused = 0
    for path in fuzz_files:
        record = oracle[str(path)]
        runs = [r for r in record["runs"] if "error" not in r]
        assert runs and not record["errors"], f"the oracle could not run {path.name}: {record}\n{path.read_text()}"
        result = analyze_path(path, workspace_root=path.parent)
        for launch in result.launches:
            # an address picked among values by loaded data (a return value, a shift) is refused by name:
            # honest, and counted; anything else that is not a compared footprint is a failure
            kinds = {d.kind for d in launch.diagnostics if d.code == "TL030"}
            if launch.status == "refused" and kinds == {"indirect-address"}:
                refused += 1
                continue
            # the kernels stay in bounds but may well race (programs shifted onto each other's blocks)
            bad = [d.message for d in launch.diagnostics if d.code in FALSE_ALARMS - {"TL005"} | {"TL050", "TL030"}]
            if bad or launch.status != "analyzed":
                problems.append(f"{path.name}: {launch.status} {bad[:2]}\n{path.read_text()}")
                continue
            run = next(r for r in runs if _config_matches(r["config"], launch.config))
            found = compare(run, launch)
            compared += 1
            if found:
                problems.append(f"{path.name}: {found[:3]}\n{path.read_text()}")
    print(f"cfg fuzz: {len(fuzz_files)} kernels, {compared} launches compared with the interpreter, "
          f"{refused} refused (indirect-address)")
    assert not problems, problems[0]
    assert compared + refused == len(fuzz_files) and compared >= len(fuzz_files) * 2 // 3
