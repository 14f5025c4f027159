"""Which engine answers each launch (affine summary or enumeration), and whether the two agree.

    python tools/engines.py FILE_OR_FOLDER... [-v]

For every launch the affine summary answers, the enumerating AccessGraph runs too and the merged
footprints of every site are compared; a difference is printed and makes the exit status 1. A
development aid for the summary's coverage, not part of the product.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TILELENS_CACHE_DIR", "off")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tilelens_lsp import pipeline  # noqa: E402
from tilelens_lsp.engines import select  # noqa: E402
from tilelens_lsp.engines.affine import AffineGraph, NotAffine  # noqa: E402
from tilelens_lsp.engines.enumerate import AccessGraph  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("-v", action="store_true")
    args = ap.parse_args()
    files = []
    for p in map(Path, args.paths):
        files += sorted(p.rglob("*.py")) if p.is_dir() else [p]
    why = collections.Counter()
    counts = collections.Counter()
    bad = 0
    models = []
    real = select.analyze

    def spy(model):
        models.append(model)
        return real(model)

    select.analyze = spy
    for f in files:
        models.clear()
        try:
            pipeline.analyze_path(str(f), str(f.parent))
        except Exception as exc:  # noqa: BLE001
            print(f"{f}: {type(exc).__name__}: {exc}")
            continue
        for model in models:
            summary = AffineGraph(model)
            t0 = time.perf_counter()
            try:
                summary.run()
                if summary.pending:
                    summary.fill_witnesses()
            except NotAffine as exc:
                counts["enumerated"] += 1
                why[str(exc)] += 1
                if args.v:
                    print(f"{f.name} grid={model.grid}: enumerated: {exc}")
                continue
            t1 = time.perf_counter()
            counts["summarized"] += 1
            enum = AccessGraph(model)
            enum.run()
            t2 = time.perf_counter()
            if enum.truncated is not None:
                counts["enumeration truncated"] += 1
                continue
            a, b = select.site_footprints(summary.sites), select.site_footprints(enum.sites)
            if a != b:
                bad += 1
                print(f"MISMATCH {f} grid={model.grid}")
                for k in sorted(set(a) | set(b), key=str):
                    if a.get(k) != b.get(k):
                        print("  affine:", str(a.get(k))[:300])
                        print("  enum:  ", str(b.get(k))[:300])
            elif args.v:
                print(
                    f"{f.name} grid={model.grid}: summarized in {1e3 * (t1 - t0):.1f} ms, "
                    f"enumerated in {1e3 * (t2 - t1):.1f} ms"
                )
    print(dict(counts), f"mismatches: {bad}")
    for w, n in why.most_common():
        print(f"  {n:4d}  {w}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
