"""While loops that wrap or never end: the checks on followed while loops (repeated state, int32 wrap)
against following them to WHILE_LIMIT as before, measured side by side in one run. A script, not a test.

    python tools/bench/while_wrap.py [--limit 65536] [NAME ...]

For each kernel of tests/conformance/bugs/while_*.py that the checks refuse (and the conformance
kernel whose counter wraps and ends), it compiles once, then times the in-process analysis (result
cache off) with the checks on and with `control.WHILE_CHECKS` off (the loop followed to `--limit`
trips, the old path; its refusal keeps the findings too, so only the time is the old one). It prints
both times, their ratio, and each side's status, codes and refusal kind.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
os.environ["TILELENS_CACHE_DIR"] = "off"

from tilelens_lsp.engines.enumerate import control  # noqa: E402
from tilelens_lsp.pipeline import analyze_path  # noqa: E402
from tilelens_lsp.pipeline.warm import WarmState  # noqa: E402

FILES = [
    REPO / "tests" / "conformance" / "bugs" / "while_stride_counter_wraps.py",
    REPO / "tests" / "conformance" / "bugs" / "while_doubling_never_ends.py",
    REPO / "tests" / "conformance" / "bugs" / "while_zero_step.py",
    REPO / "tests" / "conformance" / "bugs" / "while_counter_wraps_runs_on.py",
    REPO / "tests" / "conformance" / "kernels" / "while_counter_wraps.py",
]


def timed(path: Path, state: WarmState) -> tuple[float, str]:
    state.clear_cache()
    start = time.perf_counter()
    result = analyze_path(path, path.parent, state=state)
    spent = time.perf_counter() - start
    verdicts = []
    for launch in result.launches:
        kinds = sorted({d.kind for d in launch.diagnostics if d.code == "TL030"})
        verdicts.append(f"{launch.status} {'+'.join(sorted(set(d.code for d in launch.diagnostics)))} {','.join(kinds)}")
    return spent, "; ".join(verdicts)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=control.WHILE_LIMIT, help="WHILE_LIMIT of the unchecked run")
    ap.add_argument("names", nargs="*", help="file stems to run (default: all)")
    args = ap.parse_args()
    files = [f for f in FILES if not args.names or f.stem in args.names]
    print(f"| kernel | checked s | unchecked s (limit {args.limit:,}) | ratio | checked verdict | unchecked verdict |")
    print("|---|---|---|---|---|---|")
    for path in files:
        state = WarmState()
        analyze_path(path, path.parent, state=state)  # import and compile once, outside the timings
        checked, got = timed(path, state)
        saved = control.WHILE_CHECKS, control.WHILE_LIMIT
        control.WHILE_CHECKS, control.WHILE_LIMIT = False, args.limit
        try:
            unchecked, old = timed(path, state)
        finally:
            control.WHILE_CHECKS, control.WHILE_LIMIT = saved
        print(f"| {path.stem} | {checked:.3f} | {unchecked:.3f} | {unchecked / checked:.0f}x | {got} | {old} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
