"""Run the interpreter oracle over the conformance corpus and print counts per file.

    .venv/bin/python tools/conformance/run_oracle.py [FILE ...] [-j JOBS] [-v]

Each worker is a fresh `oracle.py` process with TRITON_INTERPRET=1 (see oracle.py for why). Exit 1
when any launch fails to run or touches memory outside every argument's allocation.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))  # run as a script: the repository root, for tests.support and tilelens_lsp

from tests.support.oracle_runner import corpus_files, run_oracle_files  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("-j", "--jobs", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--no-cache", action="store_true")
    opts = ap.parse_args()
    files = [f.resolve() for f in opts.files] or corpus_files()
    t0 = time.perf_counter()
    results = run_oracle_files(files, jobs=opts.jobs or None, use_cache=not opts.no_cache)
    bad = 0
    n_launch = n_runs = n_access = 0
    for path in files:
        res = results[str(path)]
        runs = res["runs"]
        errs = list(res["errors"]) + [f"line {r['line']} {r['config']}: {r['error']}" for r in runs if "error" in r]
        errs += [f"line {r['line']}: unattributed {r['unattributed']}" for r in runs if r.get("unattributed")]
        errs += [
            f"line {r['line']} {r['config']}: {a['op']} at line {a['line']} touches {a['out_of_bounds']} "
            f"elements outside {a['pointer']}'s storage"
            for r in runs
            for a in r.get("accesses", ())
            if a.get("out_of_bounds")
        ]
        n_launch += len({r["line"] for r in runs})
        n_runs += len(runs)
        acc = sum(len(r.get("accesses", ())) for r in runs)
        n_access += acc
        secs = sum(r.get("seconds", 0) for r in runs)
        status = "FAIL" if errs or not runs else "ok"
        bad += status == "FAIL"
        shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
        print(
            f"{status:4} {shown}: {len({r['line'] for r in runs})} launches, {len(runs)} runs, {acc} accesses, {secs:.2f}s"
        )
        for e in errs:
            print(f"     {e}")
        if opts.verbose:
            for r in runs:
                print(f"     line {r['line']} {r['config']} grid={r.get('grid')}")
                for a in r.get("accesses", ()):
                    print(
                        f"       {a['op']:6} {Path(a['path']).name}:{a['line']} {a['pointer']}: "
                        f"{a['count']} elements {a['elements'][:4]}{' ...' if len(a['elements']) > 4 else ''}"
                    )
    print(
        f"oracle: {len(files)} files, {n_launch} launches, {n_runs} runs, {n_access} accesses, "
        f"{bad} failing, {time.perf_counter() - t0:.1f}s"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
