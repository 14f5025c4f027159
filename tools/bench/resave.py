"""A re-save of the bench matmul in a warm process, with the solved box images kept across analyses
(the default) and with them dropped before each analysis, measured side by side in one run. A script,
not a test.

    python tools/bench/resave.py [--sizes 256,16384] [--saves 15]

For each size it writes the bench matmul with M = N = K = size, analyses it once (warm), then saves
it again and again with a trailing comment changed (a result-cache miss, every access's problem as
before), alternating the two settings save by save. It prints the medians, their ratio and whether
the verdicts and footprints agree.
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
sys.path.insert(0, str(REPO / "tools" / "bench"))
os.environ["TILELENS_CACHE_DIR"] = "off"

from bench import bump, matmul_variant  # noqa: E402

from tilelens_lsp.engines.affine import footprints  # noqa: E402
from tilelens_lsp.pipeline import Imports, WarmState, analyze_path  # noqa: E402


def verdicts(result) -> list:
    out = []
    for launch in result.launches:
        accesses = [(a.pointer, a.elements) for a in launch.accesses]
        out.append((launch.status, launch.engine, [d.code for d in launch.diagnostics], accesses))
    return out


def measure(size: int, saves: int) -> tuple[float, float, bool]:
    state = WarmState(imports=Imports(reuse=True))
    folder = Path(tempfile.mkdtemp(prefix="tilelens-resave-"))
    path = folder / "matmul.py"
    text = matmul_variant(size)
    path.write_text(bump(text, 0))
    analyze_path(path, folder, state=state)
    kept: list[float] = []
    dropped: list[float] = []
    seen: dict[str, list] = {}
    for i in range(2 * saves):
        keep = i % 2 == 0
        if not keep:
            footprints.SOLVED = footprints.SolvedImages()
        path.write_text(bump(text, 1 + i))
        t0 = time.perf_counter()
        result = analyze_path(path, folder, state=state)
        (kept if keep else dropped).append(time.perf_counter() - t0)
        seen.setdefault("kept" if keep else "dropped", verdicts(result))
    return statistics.median(kept), statistics.median(dropped), seen["kept"] == seen["dropped"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="256,16384")
    ap.add_argument("--saves", type=int, default=15)
    args = ap.parse_args()
    print("| matmul | re-save, images kept | re-save, images solved again | ratio | same verdicts |")
    print("|---|---|---|---|---|")
    for size in (int(s) for s in args.sizes.split(",")):
        kept, dropped, same = measure(size, args.saves)
        agree = "yes" if same else "NO"
        print(f"| {size}³ | {kept * 1000:.1f} ms | {dropped * 1000:.1f} ms | {dropped / kept:.2f}× | {agree} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
