"""Two checkouts' language servers saving the same bench kernels in one time window (issue 28, item 1).

    python tools/bench/save_ab.py OTHER_CHECKOUT [--saves N] [--only vector_add,matmul]

A warm server of this checkout and one of OTHER_CHECKOUT (each run by its own `.venv/bin/python`, its
worker importing that checkout's package) get the same saves in turns: save i goes to one then the
other, the order alternating, each after a bare host compile measured in this process. On a shared
machine the load drifts from minute to minute; saves taken in turns see the same load, so the two
medians compare where two runs a minute apart (`bench.py --profile save` in each checkout) do not.
Printed: per kernel, the bare compile and each server's save → publishDiagnostics (medians), their
ratios to the compile, and whether the two published the same diagnostics on every save.
A script, not a test; every process runs with TILELENS_CACHE_DIR=off, unless `--disk-cache` gives each
server a fresh cache folder of its own (as an editor's server has one: each save then writes an entry).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import bench  # beside this script: the LSP client, the bench kernels, the bare compile

HERE_REPO = bench.REPO
BUGS = sorted((HERE_REPO / "tests" / "conformance" / "bugs").glob("*.py"))


class Server(bench.LspClient):
    """`bench.LspClient` for the server of a given checkout, run by that checkout's interpreter."""

    def __init__(self, checkout: Path, cwd: Path, cache: str = "off") -> None:
        python = checkout / ".venv" / "bin" / "python"
        env = dict(os.environ, PYTHONPATH=str(checkout), PYTHONDONTWRITEBYTECODE="1", TILELENS_CACHE_DIR=cache)
        self.t_start = time.perf_counter()
        self.proc = subprocess.Popen(
            [str(python if python.exists() else sys.executable), "-m", "tilelens_lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(cwd),
            env=env,
        )
        self._next = 0
        self._pending: dict[int, queue.Queue] = {}
        self._lock = threading.Lock()
        self.diagnostics: queue.Queue = queue.Queue()
        self.logs: list[tuple[float, str]] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()


def _published(params: dict, root: Path) -> str:
    """The diagnostics as published, each server's own folder named alike (related locations name it)."""
    found = sorted(json.dumps(d, sort_keys=True) for d in params.get("diagnostics", []))
    return json.dumps(found).replace(root.as_uri(), "ROOT").replace(str(root), "ROOT")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="the other checkout (its .venv/bin/python runs its server)")
    ap.add_argument("--saves", type=int, default=14, help="saves per kernel and server (default 14)")
    ap.add_argument("--only", default=",".join(bench.BENCH_KERNELS))
    ap.add_argument(
        "--compare",
        type=Path,
        nargs="*",
        default=sorted((HERE_REPO / "samples").glob("*.py")) + BUGS[:8],
        help="files whose published diagnostics are compared (default: the samples and eight bug kernels)",
    )
    ap.add_argument(
        "--disk-cache", action="store_true", help="each server writes its results to a fresh cache folder of its own"
    )
    args = ap.parse_args(argv)
    kernels = [k for k in args.only.split(",") if k]
    sides = {"other": args.other.resolve(), "this": HERE_REPO}
    roots = {s: Path(tempfile.mkdtemp(prefix=f"tilelens-ab-{s}-")) for s in sides}
    texts = {k: (bench.KERNELS / f"{k}.py").read_text() for k in kernels}
    for s in sides:
        for k in kernels:
            (roots[s] / f"{k}.py").write_text(texts[k])
    caches = {s: tempfile.mkdtemp(prefix=f"tilelens-ab-cache-{s}-") if args.disk_cache else "off" for s in sides}
    servers = {s: Server(checkout, roots[s], caches[s]) for s, checkout in sides.items()}
    print(f"this: {HERE_REPO}; other: {sides['other']}; {args.saves} saves per kernel and server, in turns")
    print("| kernel | bare compile | other: save | this: save | other / compile | this / compile | same diagnostics |")
    print("|---|---|---|---|---|---|---|")
    try:
        uris = {}
        for s, server in servers.items():
            server.initialize(roots[s])
            for k in kernels:
                uris[s, k] = server.open(roots[s] / f"{k}.py", 1)
            for k in kernels:
                server.wait_diagnostics(uris[s, k], 1, timeout=300)
        for k in kernels:
            compile_once = bench.bare_compiler(bench.KERNELS / f"{k}.py")
            latency: dict[str, list[float]] = {s: [] for s in sides}
            compiles: list[float] = []
            same = True
            for i in range(args.saves):
                published = {}
                for s in ("other", "this") if i % 2 == 0 else ("this", "other"):
                    compiles.append(compile_once())
                    text = bench.bump(texts[k], i)
                    t0 = servers[s].change_and_save(roots[s] / f"{k}.py", text, 2 + i)
                    t1, params = servers[s].wait_diagnostics(uris[s, k], 2 + i)
                    latency[s].append(t1 - t0)
                    published[s] = _published(params, roots[s])
                    time.sleep(0.15)  # past the server's burst window: each save is a lone save
                same = same and published["other"] == published["this"]
            c = statistics.median(compiles)
            a, b = statistics.median(latency["other"]), statistics.median(latency["this"])
            print(
                f"| {k} | {c * 1000:.0f} ms | {a * 1000:.0f} ms | {b * 1000:.0f} ms | {a / c:.2f} | {b / c:.2f} | "
                f"{'yes' if same else 'NO'} |",
                flush=True,
            )
        # the bench kernels are clean: the published diagnostics of files with findings, compared too
        for sample in args.compare:
            text = sample.read_text()
            found = {}
            for s, server in servers.items():
                path = roots[s] / sample.name
                path.write_text(text)
                uri = server.open(path, 1)
                _, params = server.wait_diagnostics(uri, 1, timeout=300)
                found[s] = _published(params, roots[s])
            count = len(json.loads(found["this"]))
            print(f"{sample.name}: {count} diagnostics published, the same from both: {found['this'] == found['other']}")
    finally:
        for server in servers.values():
            server.close()
    print(f"load average at the end: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
