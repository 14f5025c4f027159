"""The type-checking ratchet: `mypy tilelens_lsp` may report no more errors than tools/mypy_baseline.txt.

`python tools/mypy_ratchet.py` runs mypy (configured in pyproject.toml), prints the count and exits 1
when it rose above the baseline; when it fell, it says so and `--update` writes the new, lower count.
It never raises the baseline: fix the new error instead. .ci/run calls it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tools" / "mypy_baseline.txt"


def count_errors(output: str) -> int:
    """The error count of mypy's summary line (`Found 12 errors in 3 files ...`, or `Success: ...`)."""
    found = re.search(r"^Found (\d+) errors? in \d+ files?", output, re.M)
    if found:
        return int(found.group(1))
    if re.search(r"^Success: no issues found", output, re.M):
        return 0
    raise RuntimeError(f"mypy printed no summary line:\n{output[-2000:]}")


def main(argv: list[str]) -> int:
    run = subprocess.run([sys.executable, "-m", "mypy", "tilelens_lsp"], cwd=ROOT, capture_output=True, text=True)
    errors = count_errors(run.stdout + run.stderr)
    baseline = int(BASELINE.read_text().split()[0])
    print(f"mypy: {errors} errors in tilelens_lsp (baseline {baseline})")
    if errors > baseline:
        print(run.stdout, end="")
        print(f"mypy: {errors - baseline} more than the baseline: fix them (the baseline only goes down)", file=sys.stderr)
        return 1
    if errors < baseline:
        if "--update" in argv:
            BASELINE.write_text(f"{errors}\n")
            print(f"mypy: baseline lowered to {errors}")
        else:
            print(f"mypy: {baseline - errors} fewer than the baseline: lower it with python tools/mypy_ratchet.py --update")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
