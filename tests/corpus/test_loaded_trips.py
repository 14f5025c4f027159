"""A real varlen kernel whose loop runs over a loaded trip count of up to 100,000: fla-core's
`fused_recurrent_fwd_kernel` (IPLR delta rule) walks the T = eos - bos tokens of its sequence between
two `cu_seqlens` offsets, seven pointers stepping by `K * H` or `V * H` per token. Followed one trip
count at a time this ran out of time (TL050); summed up over its inductions it is analysed. Through
the CLI and a worker in the corpus venv, as a user runs it; skips when `.venv-corpus` is absent
(`bash tools/corpus_env.sh`). The unit tests of the mechanism are tests/unit/engines/test_loop_inductions.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("TILELENS_CORPUS_VENV", REPO / ".venv-corpus"))

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.slow,  # imports fla (and torch) in a worker
    pytest.mark.skipif(
        not (VENV / "bin" / "python").exists(),
        reason=f"the corpus venv {VENV} is absent: create it with `bash tools/corpus_env.sh`",
    ),
]

TOKENS = 100_000
LAUNCH = (
    'fused_recurrent_fwd_kernel[lambda meta: (cdiv(V, meta["BV"]) * 2 * H,)](q=fp32[1, TT, H, K], '
    "k=fp32[1, TT, H, K], v=fp32[1, TT, H, V], a=fp32[1, TT, H, K], b=fp32[1, TT, H, K], "
    "o=fp32[1, TT, H, V], ha=fp32[1, TT, H, V], h0=None, ht=None, cu_seqlens=i32[3].values(0, TT + 1), "
    "scale=1.0, H=H, T=TT, K=K, V=V, BK=16)"
)


def test_fla_varlen_recurrence_over_100000_tokens_is_analysed(tmp_path):
    config = tmp_path / "tilelens.toml"
    config.write_text(
        "[[launch]]\n"
        'module = "fla.ops.generalized_delta_rule.iplr.fused_recurrent"\n'
        f'let = "TT = {TOKENS}; H = 2; K = 16; V = 16"\n'
        f"launch = {json.dumps(LAUNCH)}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", "--config", str(config), "--python", str(VENV / "bin" / "python")]
        + ["--format", "json", "--timeout", "120"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
        env={**os.environ, "TILELENS_CACHE_DIR": "off"},
    )
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    [file] = json.loads(proc.stdout)["files"]
    launches = file["launches"]
    assert launches, file
    for launch in launches:
        got = sorted({d["code"] for d in launch["diagnostics"]})
        assert launch["status"] == "analyzed", (launch["config"], [d["message"] for d in launch["diagnostics"]])
        # bounds only: nothing here is evaluated concretely, so nothing may be definite
        assert not {"TL001", "TL003", "TL005"} & set(got), got
        # every token of the sequence is read: the summed-up loads reach the last row of k
        (k_load,) = [a for a in launch["accesses"] if a["op"] == "load" and a["pointer"] == "k"]
        assert k_load["exact"] is False
        assert k_load["elements"][-1][1] >= TOKENS * 2 * 16, k_load["elements"]
