"""What keeping a file's unchanged helper modules saves on a save: one analysis of a changed kernel
file, with the helpers kept (`Imports(reuse=True)`, as the worker runs) and imported afresh (the
behaviour before), interleaved in one run; medians and their ratio. A script, not a test.

The workspace is a bench kernel that imports a sibling module copied from an installed package (so
the helper is code we did not write): Liger-Kernel's `ops/fused_moe_kernels.py` (eleven
`@triton.jit` kernels, 969 lines, importing only Triton) when Liger is installed, else a generated
helper of twenty. Run it with the interpreter the worker would use (the corpus venv has Liger):

    PYTHONPATH=. .venv-corpus/bin/python tools/bench/kept_imports.py [--saves 15] [--kernel softmax]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import workload  # noqa: E402 - the bench's kernels (tools/bench/workload.py), beside this script

os.environ["TILELENS_CACHE_DIR"] = "off"  # every save computes its verdict
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
sys.dont_write_bytecode = True  # as the worker (-B): no .pyc makes a re-import cheaper


def helpers(ws: Path) -> list[str]:
    """Copy the helper modules into `ws`; their module names."""
    spec = importlib.util.find_spec("liger_kernel")
    if spec is not None and spec.submodule_search_locations:
        source = Path(next(iter(spec.submodule_search_locations))) / "ops" / "fused_moe_kernels.py"
        if source.is_file():
            shutil.copy(source, ws / "fused_moe_kernels.py")
            return ["fused_moe_kernels"]
    body = "import triton\nimport triton.language as tl\n\n" + "".join(
        f"@triton.jit\ndef f{i}(x):\n    return x * {i} + 1\n\n\n" for i in range(20)
    )
    (ws / "generated_helpers.py").write_text(body)
    return ["generated_helpers"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--saves", type=int, default=15)
    ap.add_argument("--kernel", default="softmax", help="a bench kernel (tools/bench/workload.py)")
    args = ap.parse_args()
    from tilelens_lsp.pipeline import Imports, WarmState, analyze_path

    tmp = Path(tempfile.mkdtemp(prefix="tilelens-kept-"))
    try:
        ws = tmp / "ws"
        ws.mkdir()
        names = helpers(ws)
        text = "".join(f"import {n}  # noqa: F401\n" for n in names) + workload.kernel_source(args.kernel)
        path = ws / f"{args.kernel}.py"
        kept, fresh = WarmState(imports=Imports(reuse=True)), WarmState(imports=Imports(reuse=False))
        times: dict[str, list[float]] = {"kept": [], "fresh": []}
        for i in range(args.saves + 1):
            for label, state in (("kept", kept), ("fresh", fresh)):
                path.write_text(text + f"# save {i} {label}\n")  # a changed file: its verdicts computed anew
                t0 = time.perf_counter()
                result = analyze_path(path, ws, state=state)
                if i:  # the first save of each warms up
                    times[label].append(time.perf_counter() - t0)
                assert result.launches, "the bench kernel declares launches"
        k, f = statistics.median(times["kept"]), statistics.median(times["fresh"])
        print(f"kernel {args.kernel} + helpers {', '.join(names)} ({sys.executable})")
        print("| save, helpers kept | save, helpers imported afresh | kept / afresh | executed when kept |")
        print("|---|---|---|---|")
        print(f"| {k * 1000:.0f} ms | {f * 1000:.0f} ms | {k / f:.2f} | {kept.imports.executed or 'only the kernel file'} |")
        print(f"medians of {args.saves} saves each, interleaved, result cache off")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
