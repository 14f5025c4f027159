"""How a pause before each save changes what a save and a bare compile cost (issue 28, item 1).

    python tools/bench/pause.py [--saves N] [--kernel vector_add] [--gaps 0,0.01,0.12]

For each gap: N cache-missing analyses of the bench kernel through a warm worker (`Worker.analyze`,
the file's trailing comment changed each time, as `bench.py` does), and N bare host compiles of it
in this process, each after sleeping `gap` seconds; the two are interleaved, so both see the same
load. Printed: the medians, their ratio, and how much slower each is than back to back (gap 0).
An editor's save follows a pause; on a shared host everything runs slower after one, and the
compile more than the rest. A script, not a test; TILELENS_CACHE_DIR=off.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import bench  # beside this script: the bench kernels, `bump`, the bare compile

os.environ["TILELENS_CACHE_DIR"] = "off"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--saves", type=int, default=60)
    ap.add_argument("--kernel", default="vector_add")
    ap.add_argument("--gaps", default="0,0.01,0.12", help="comma-separated seconds to pause before each")
    args = ap.parse_args()

    from tilelens_lsp.settings import Settings
    from tilelens_lsp.worker.process import Worker

    root = Path(tempfile.mkdtemp(prefix="tilelens-pause-"))
    text = (bench.KERNELS / f"{args.kernel}.py").read_text()
    path = root / f"{args.kernel}.py"
    path.write_text(bench.bump(text, 0))
    worker = Worker(Settings())
    worker.start()
    worker.analyze(path, root)  # warm
    compile_once = bench.bare_compiler(path)
    rows = []
    try:
        for gap in (float(g) for g in args.gaps.split(",")):
            saves, compiles = [], []
            for i in range(args.saves):
                time.sleep(gap)
                compiles.append(compile_once())
                path.write_text(bench.bump(text, 1 + i))
                time.sleep(gap)
                t0 = time.perf_counter()
                worker.analyze(path, root)
                saves.append(time.perf_counter() - t0)
            rows.append((gap, statistics.median(saves), statistics.median(compiles)))
    finally:
        worker.stop()
    base_save, base_compile = rows[0][1], rows[0][2]
    print(f"{args.kernel}, {args.saves} of each per gap; load average {os.getloadavg()[0]:.1f}")
    print(
        "| pause before each | worker round trip | bare compile | ratio "
        "| round trip / back to back | compile / back to back |"
    )
    print("|---|---|---|---|---|---|")
    for gap, save, comp in rows:
        print(
            f"| {gap:g} s | {save * 1000:.2f} ms | {comp * 1000:.2f} ms | {save / comp:.2f} | "
            f"{save / base_save:.2f} | {comp / base_compile:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
