"""A file of 1,500 declared launches, one of which reads past its tensor, checked by the CLI with its
default settings: the one TL001 must be reported, whatever the other 1,499 cost.

The worker's timeout is per launch, not per file: with a per-file timeout (30 s) the 1,500 launches,
which take longer than that together, timed the whole file out (TL050) and lost the TL001.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

LAUNCHES = 1500
BAD = 777  # the launch whose x tensor is one element short


def _source() -> str:
    lines = [
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def add(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    mask = offs < n\n"
        "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1, mask=mask)\n\n\n"
    ]
    for i in range(LAUNCHES):
        n = 1000 + i
        lines.append(f"# tilelens: add[(cdiv({n}, 128),)](fp32[{n - 1 if i == BAD else n}], fp32[{n}], {n}, BLOCK=128)\n")
    return "".join(lines)


@pytest.mark.slow
def test_a_file_of_1500_launches_reports_its_one_out_of_bounds(tmp_path):
    path = tmp_path / "many_launches.py"
    path.write_text(_source())
    proc = subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
        env={**__import__("os").environ, "TILELENS_CACHE_DIR": "off"},
    )
    doc = json.loads(proc.stdout)
    (entry,) = doc["files"]
    codes = [(d["code"], launch["line"]) for launch in entry["launches"] for d in launch["diagnostics"]]
    bad_line = (
        _source()
        .splitlines()
        .index(next(line for line in _source().splitlines() if f"fp32[{1000 + BAD - 1}], fp32[{1000 + BAD}]" in line))
        + 1
    )
    assert ("TL001", bad_line) in codes
    assert len(entry["launches"]) == LAUNCHES
