"""The benchmark script (tools/bench/bench.py) keeps working: a quick run of a cheap subset. No timing is asserted here.

`check` runs the CLI on two matmul launches and parses its JSON; `memory` (without `save`) starts the
real server over stdio through the bench's own LSP client, opens the bench kernels and reads the
worker's peak memory, so the client's framing and the server's publishDiagnostics stay exercised.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "tools" / "bench"


def test_bench_quick_subset(tmp_path: Path) -> None:
    out = tmp_path / "bench.md"
    # the bench reads its kernels from these folders and must never import them there
    sources = [REPO / "samples" / "__pycache__", REPO / "tests" / "conformance" / "kernels" / "__pycache__"]
    absent = [p for p in sources if not p.exists()]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench.py"), "--quick", "--only", "check,memory", "--out", str(out)],
        capture_output=True,
        text=True,
        cwd=str(REPO),
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = out.read_text()
    assert "| metric | measured | goal | met? |" in report
    assert "ERROR" not in report
    for metric in (
        "c. check time, matmul 16384³ / 256³",
        "c. identical verdicts",
        "c. footprints exact",
        "e. server worker peak RSS",
    ):
        assert metric in report, report
    assert "worker not found" not in report, report
    assert not any(p.exists() for p in absent), absent
