"""The bench's `scale` section: one launch analysed per fresh process at 10^3 .. 10^7 programs, for
four kernel shapes (a vector add, a row kernel splitting the program id with `//` and `%`, a grouped
matmul with the swizzle, an expert-strided MoE copy). Wall time and peak RSS of each process (wait4),
and the ratio of the largest launch to the smallest, side by side in one run. Each process imports,
compiles and analyses: the time is what a user waits for one launch.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

PROGRAMS = (10**3, 10**4, 10**5, 10**6, 10**7)

VECTOR_ADD = """
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


# tilelens: add[({P},)](fp32[{N}], fp32[{N}], fp32[{N}], {N}, BLOCK=1024)
"""

ROWS = """
import triton
import triton.language as tl


@triton.jit
def rows(x_ptr, y_ptr, H, stride_b, stride_h, D, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    b = pid // H
    h = pid % H
    cols = tl.arange(0, BLOCK)
    mask = cols < D
    base = b * stride_b + h * stride_h
    tl.store(y_ptr + base + cols, tl.load(x_ptr + base + cols, mask=mask) * 2, mask=mask)


# tilelens: rows[({P},)](fp16[{B}, 8, 100], fp16[{B}, 8, 100], 8, 800, 100, 100, BLOCK=128)
"""

MATMUL = """
import triton
import triton.language as tl


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m.to(tl.int64) * BM + tl.arange(0, BM)) % M
    offs_bn = (pid_n.to(tl.int64) * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    offs_cm = pid_m.to(tl.int64) * BM + tl.arange(0, BM)
    offs_cn = pid_n.to(tl.int64) * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, acc.to(tl.float16), mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


# tilelens: M = {M}
# tilelens: matmul[({P},)](fp16[M, 64], fp16[64, M], fp16[M, M], M, M, 64, 64, 1, M, 1, M, 1, BM=32, BN=32, BK=32, GROUP_M=8)
"""

MOE = """
import triton
import triton.language as tl


@triton.jit
def moe_copy(x_ptr, y_ptr, expert_stride, D, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    t = tl.program_id(0).to(tl.int64)
    e = tl.program_id(1).to(tl.int64)
    rows = t * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_D)
    offs = e * expert_stride + rows[:, None] * D + cols[None, :]
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))


# tilelens: moe_copy[({T}, 8)](fp16[8, {R}, 64], fp16[8, {R}, 64], {S}, 64, BLOCK_T=4, BLOCK_D=64)
"""


def sources(programs: int) -> dict[str, str]:
    side = max(1, math.isqrt(programs))
    t = max(1, programs // 8)
    return {
        "vector_add": VECTOR_ADD.format(P=programs, N=programs * 1024 - 7),
        "rows_div_mod": ROWS.format(P=programs, B=-(-programs // 8)),
        "grouped_matmul": MATMUL.format(P=side * side, M=side * 32),
        "moe_expert_copy": MOE.format(T=t, R=t * 4, S=t * 4 * 64),
    }


CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from tilelens_lsp.pipeline import analyze_path
r = analyze_path(sys.argv[1])
(launch,) = r.launches
print(json.dumps({"status": launch.status, "engine": launch.engine,
                  "codes": sorted({d.code for d in launch.diagnostics}), "seconds": time.perf_counter() - t0}))
"""


def run_scale(tmp: Path, env: dict[str, str], quick: bool) -> tuple[list[tuple[str, str, str, bool | None]], list[str]]:
    """(rows: metric, measured, goal, met) and detail lines of the table."""
    sizes = PROGRAMS[::2] if quick else PROGRAMS
    table: dict[str, dict[int, dict]] = {}
    for programs in sizes:
        for name, text in sources(programs).items():
            path = tmp / f"{name}_{programs}.py"
            path.write_text(text)
            table.setdefault(name, {})[programs] = measure_rss(path, env)
    rows, lines = (
        [],
        [
            "| kernel | " + " | ".join(f"{p:.0e} programs" for p in sizes) + " | largest / smallest |",
            "|---|" + "---|" * (len(sizes) + 1),
        ],
    )
    for name, by_size in table.items():
        cells = [
            f"{r['wall']:.2f} s, {r['rss_mb']:.0f} MB, {r.get('engine') or r['status']}" for r in (by_size[p] for p in sizes)
        ]
        ratio = by_size[sizes[-1]]["wall"] / by_size[sizes[0]]["wall"]
        peak = max(r["rss_mb"] for r in by_size.values())
        ok = all(r["status"] == "analyzed" for r in by_size.values())
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {ratio:.2f}× |")
        rows.append(
            (f"scale. {name}: time {sizes[-1]:.0e} / {sizes[0]:.0e} programs", f"{ratio:.2f}×", "≤ 2.0", ratio <= 2.0 and ok)
        )
        rows.append((f"scale. {name}: peak RSS, any size", f"{peak:.0f} MB", "< 1024 MB", peak < 1024))
    return rows, lines


def measure_rss(path: Path, env: dict[str, str]) -> dict:
    """`measure`, with the child's peak RSS read by wait4 (Popen's own wait would reap it first)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=path.parent,
        text=True,
    )
    out = proc.stdout.read() if proc.stdout else ""
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    wall = time.perf_counter() - t0
    lines = out.strip().splitlines()
    record = json.loads(lines[-1]) if lines else {"status": "crashed"}
    record["wall"] = wall
    record["rss_mb"] = usage.ru_maxrss / 1024
    return record
