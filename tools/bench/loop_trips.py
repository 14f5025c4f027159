"""Loops over loaded trip counts: summed up (the default past 256 trips) against followed iteration by
iteration, measured side by side in one run. A script, not a test.

    python tools/bench/loop_trips.py [--trips 1000,10000,100000] [--follow-max 10000]

For each trip count N it writes a kernel file (tab of N elements, n declared in [0, N] so every access
stays in bounds) with the three loop forms of tests/conformance/kernels/loaded_trip_long.py, compiles it
once, and times the in-process analysis (median of 3, result cache off) with the loops summed up and,
up to --follow-max trips, followed one by one (FOLLOW_LIMIT raised past N; the while loop is always
widened). It prints the times, their ratio and whether the verdicts agree.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ["TILELENS_CACHE_DIR"] = "off"

from tilelens_lsp.engines.enumerate import control  # noqa: E402
from tilelens_lsp.pipeline import analyze_path  # noqa: E402
from tilelens_lsp.pipeline.warm import WarmState  # noqa: E402

KERNELS = REPO / "tests" / "conformance" / "kernels" / "loaded_trip_long.py"


def kernel_file(folder: Path, trips: int) -> Path:
    source = KERNELS.read_text()
    body = source[: source.index("# tilelens:")]
    blocks = max(1, trips // 64)
    launches = (
        f"# tilelens: long_trip_for_kernel[(2,)](i32[2].values(0, {trips + 1}), fp32[{trips}], fp32[2])\n"
        f"# tilelens: long_trip_while_kernel[(2,)](i32[2].values(0, {trips + 1}), fp32[{trips}], fp32[2])\n"
        f"# tilelens: long_trip_blocks_kernel[(2,)](i32[2].values(0, {blocks + 1}), fp32[{blocks} * 64], "
        "fp32[2 * 64], BLOCK=64)\n"
    )
    path = folder / f"trips_{trips}.py"
    path.write_text(body + launches)
    return path


def timed(path: Path, state: WarmState, repeat: int = 3) -> tuple[float, list]:
    times, verdicts = [], []
    for _ in range(repeat):
        state.clear_cache()
        start = time.perf_counter()
        result = analyze_path(path, path.parent, state=state)
        times.append(time.perf_counter() - start)
        verdicts = [(l.status, sorted(d.code for d in l.diagnostics)) for l in result.launches]
    return statistics.median(times), verdicts


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trips", default="1000,10000,100000")
    ap.add_argument("--follow-max", type=int, default=10000)
    args = ap.parse_args()
    print("| trips | summed s | followed s | followed / summed | same verdicts |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for trips in (int(t) for t in args.trips.split(",")):
            path = kernel_file(Path(tmp), trips)
            state = WarmState()
            analyze_path(path, path.parent, state=state)  # import and compile once, outside the timings
            summed, want = timed(path, state)
            if trips <= args.follow_max:
                saved = control.FOLLOW_LIMIT
                control.FOLLOW_LIMIT = trips + 1
                try:
                    followed, got = timed(path, state, repeat=1)
                finally:
                    control.FOLLOW_LIMIT = saved
                print(f"| {trips:,} | {summed:.3f} | {followed:.3f} | {followed / summed:.0f}x | {got == want} |")
            else:
                print(f"| {trips:,} | {summed:.3f} | (not run) | | {want} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
