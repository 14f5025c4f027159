"""The CPU time of a save's work in one process, for the checkout it is run from (issue 28, item 1).

    cd CHECKOUT && .venv/bin/python PATH/TO/save_cpu.py [N]
    cd CHECKOUT && .venv/bin/python PATH/TO/save_cpu.py --calls   # Python calls per save (deterministic)

Imports the bench (and through it the package) of the working directory's checkout, so the same
script measures another checkout (`cd /work/main && .venv/bin/python /work/wt/save/tools/bench/save_cpu.py`).
Per bench kernel, medians of N (default 15) cache-missing saves in a warm `WarmState` (what the worker
keeps): the bare host compile, the analysis (`analyze_path` + its JSON), and the language server's
publish work on the result (suppressions, conversion to LSP diagnostics), each by `time.thread_time`:
the CPU this thread used, which other processes on a busy host inflate far less than the wall clock.
Not measured: the pipe, the event loop, pygls (the wall-clock stage table `bench.py --profile save` has
them). `--calls` counts the Python function calls (cProfile) of one cache-missing analysis and of
its publish work instead: a count the host's load does not move. A script, not a test.
"""

from __future__ import annotations

import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.getcwd(), "tools", "bench"))
import bench  # noqa: E402 - the working directory's checkout's bench, and its package

from tilelens_lsp import suppress  # noqa: E402
from tilelens_lsp.lsp import convert  # noqa: E402
from tilelens_lsp.pipeline import Imports, WarmState, analyze_path  # noqa: E402


def calls() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="tilelens-bench-calls-"))
    state = WarmState(imports=Imports(reuse=True))
    print(f"checkout {bench.REPO}")
    print("| kernel | calls: bare compile | calls: analysis | calls: publish work |")
    print("|---|---|---|---|")
    for k in bench.BENCH_KERNELS:
        path = tmp / f"{k}.py"
        text = (bench.KERNELS / f"{k}.py").read_text()
        for i in range(2):  # warm: the first analyses of this kernel in this process
            path.write_text(bench.bump(text, i))
            analyze_path(path, tmp, state=state)
        compile_once = bench.bare_compiler(path)
        counted = []
        saved = bench.bump(text, 2)
        path.write_text(saved)
        ctx = convert.DocumentContext(path.as_uri(), path.name, saved, tmp, True, len)
        box: dict = {}
        for work in (
            compile_once,
            lambda: box.update(result=analyze_path(path, tmp, state=state)),
            lambda: convert.to_lsp_diagnostics(suppress.apply(box["result"], saved, path.name), ctx),
        ):
            prof = cProfile.Profile()
            prof.enable()
            work()
            prof.disable()
            counted.append(pstats.Stats(prof).total_calls)
        print(f"| {k} | {counted[0]} | {counted[1]} | {counted[2]} |", flush=True)
    return 0


def main() -> int:
    if "--calls" in sys.argv[1:]:
        return calls()
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    tmp = Path(tempfile.mkdtemp(prefix="tilelens-bench-cpu-"))
    state = WarmState(imports=Imports(reuse=True))
    clock = time.thread_time
    print(f"checkout {bench.REPO}; CPU ms, medians of {n}")
    print("| kernel | bare compile | analysis | publish work | analysis − compile | (analysis + publish) / compile |")
    print("|---|---|---|---|---|---|")
    for k in bench.BENCH_KERNELS:
        path = tmp / f"{k}.py"
        text = (bench.KERNELS / f"{k}.py").read_text()
        path.write_text(bench.bump(text, 0))
        analyze_path(path, tmp, state=state)  # warm: the first analysis of this kernel in this process
        compile_once = bench.bare_compiler(path)
        compiles, analyses, publishes = [], [], []
        for i in range(n):
            t0 = clock()
            compile_once()
            compiles.append(clock() - t0)
            saved = bench.bump(text, i + 1)
            path.write_text(saved)
            t0 = clock()
            result = analyze_path(path, tmp, state=state)
            result.to_json()
            analyses.append(clock() - t0)
            ctx = convert.DocumentContext(path.as_uri(), path.name, saved, tmp, True, len)
            t0 = clock()
            convert.to_lsp_diagnostics(suppress.apply(result, saved, path.name), ctx)
            publishes.append(clock() - t0)
        c, a, p = (statistics.median(x) * 1000 for x in (compiles, analyses, publishes))
        print(f"| {k} | {c:.1f} | {a:.1f} | {p:.2f} | {a - c:.1f} | {(a + p) / c:.2f} |", flush=True)
    print(f"load average at the end: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
