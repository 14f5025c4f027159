"""Grid-stride while loops: FlagGems' upsample_nearest1d launch checked by the enumeration alone
(`TILELENS_ENGINE=enumerate`: iteration by iteration) and by the default engine choice (the affine
summary, its trip count in closed form), side by side in one run. A script, not a test.

    python tools/bench/gridstride.py [--timeout S]

Needs the corpus venv (.venv-corpus, tools/corpus_env.sh). Prints per engine the wall time, the
summary line of `check` and the ratio of the two times.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAUNCH = (
    "upsample_nearest1d_kernel[(2, 2, 2)](ptr_o=fp32[4194304], ptr_i=fp32[4194304], N=128, C=128, OL=128, IL=128, "
    "reciprocal_scale_l=1.0)"
)


def run(engine: str, folder: Path, timeout: int) -> tuple[float, str]:
    env = dict(os.environ, TILELENS_ENGINE=engine, TILELENS_CACHE_DIR="off", GEMS_VENDOR="nvidia")
    env["FLAGGEMS_DB_URL"] = "sqlite://"
    cmd = [
        str(REPO / ".venv" / "bin" / "tilelens-lsp"),
        "check",
        "--config",
        str(folder / "tilelens.toml"),
        "--python",
        str(REPO / ".venv-corpus" / "bin" / "python"),
        "--timeout",
        str(timeout),
        "--root",
        str(REPO / "tests" / "corpus"),
    ]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.startswith("tilelens-lsp:")]
    return wall, lines[0] if lines else f"exit {done.returncode}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "tilelens.toml").write_text(
            f'[[launch]]\nmodule = "flag_gems.ops.upsample_nearest1d"\nlaunch = "{LAUNCH}"\n'
        )
        times = {}
        for engine in ("enumerate", "auto"):
            wall, line = run(engine, folder, args.timeout)
            times[engine] = wall
            print(f"{engine:9s} {wall:7.1f} s  {line}")
    print(f"enumerate / auto: {times['enumerate'] / times['auto']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
