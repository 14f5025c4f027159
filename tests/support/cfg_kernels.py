"""Random kernels with control flow (early returns: program-uniform, data-dependent, nested with values
joined after them, inside noinline helpers; pointers chosen per program or per lane), generated from a
fixed seed. The conformance suite runs them against Triton's interpreter (tests/conformance/test_cfg_fuzz.py),
the grid suite against the enumeration (tests/grid/test_grid_differential.py).
`TILELENS_FUZZ_EXAMPLES` sets how many (default 60)."""

from __future__ import annotations

import os
import random
import textwrap

EXAMPLES = int(os.environ.get("TILELENS_FUZZ_EXAMPLES", "60"))
SEED = 20261130

EXITS = [
    "if pid {cmp} {K}:\n    return",
    "if pid * BLOCK >= n:\n    return",
    "if tl.load(f_ptr + pid) == {V}:\n    return",
    "if pid > {K}:\n    if pid % {M} == {R}:\n        return\n    s = {A}\nelse:\n    s = {B}",
    "if tl.load(f_ptr + pid) != {V}:\n    if pid > {K}:\n        return\n    s = {A}\nelse:\n    s = {B}",
]
POINTERS = [
    "p = x_ptr",
    "p = tl.where(pid % {M} == {R}, x_ptr, w_ptr)",
    "if pid < {K}:\n    p = x_ptr\nelse:\n    p = w_ptr",
]
STORES = [
    "dst = y_ptr + offs",
    "dst = tl.where(offs % {M} == {R}, y_ptr + offs, z_ptr + offs)",
    "dst = tl.where(tl.load(f_ptr + pid) == {V}, y_ptr + offs, z_ptr + offs)",
]
HELPER = """
@triton.jit(noinline=True)
def {name}(f_ptr, pid, n, BLOCK: tl.constexpr):
    s = 0
{exits}
    return s + 1
"""


def _fill(template: str, rng: random.Random) -> str:
    m = rng.randint(2, 4)
    return template.format(
        cmp=rng.choice(["<", ">", ">=", "=="]),
        K=rng.randint(0, 7),
        V=rng.randint(0, 2),
        M=m,
        R=rng.randint(0, m - 1),
        A=rng.randint(0, 2),
        B=rng.randint(0, 2),
    )


def _indent(code: str, n: int = 4) -> str:
    return textwrap.indent(code, " " * n)


def kernel_source(rng: random.Random) -> str:
    exits = [_fill(rng.choice(EXITS), rng) for _ in range(rng.randint(1, 2))]
    in_helper = rng.random() < 0.3
    helper = ""
    if in_helper:
        exits = [e.replace("return", "return 0") for e in exits]  # a helper's returns carry a value
        helper = HELPER.format(name="gate", exits=_indent("\n".join(exits)))
        prelude = "s = gate(f_ptr, pid, n, BLOCK)"
    else:
        prelude = "s = 0\n" + "\n".join(exits)
    body = "\n".join(
        [
            "pid = tl.program_id(0)",
            prelude,
            _fill(rng.choice(POINTERS), rng),
            "offs = (pid + s) * BLOCK + tl.arange(0, BLOCK)",
            "mask = offs < n",
            "v = tl.load(p + offs, mask=mask, other=0.0)",
            _fill(rng.choice(STORES), rng),
            "tl.store(dst, v + 1, mask=mask)",
        ]
    )
    grid, block = rng.randint(1, 9), rng.choice([16, 32])
    size = (grid + 4) * block
    n = rng.randint(1, size)
    return (
        f'import triton\nimport triton.language as tl\n\nTILELENS_ORACLE_FILL = {{"f_ptr": 3}}\n{helper}\n\n'
        f"@triton.jit\ndef k(x_ptr, w_ptr, y_ptr, z_ptr, f_ptr, n, BLOCK: tl.constexpr):\n{_indent(body)}\n\n\n"
        f"# tilelens: k[({grid},)](fp32[{size}], fp32[{size}], fp32[{size}], fp32[{size}], i32[{grid}], {n}, "
        f"BLOCK={block})\n"
    )
