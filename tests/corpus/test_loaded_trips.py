"""A real varlen kernel whose loop runs over a loaded trip count of up to 100,000: fla-core's
`fused_recurrent_fwd_kernel` (IPLR delta rule) walks the T = eos - bos tokens of its sequence between
two `cu_seqlens` offsets, seven pointers stepping by `K * H` or `V * H` per token. Followed one trip
count at a time this ran out of time (TL050); summed up over its inductions it is analysed. Through
the CLI and a worker in the corpus venv, as a user runs it; skips when `.venv-corpus` is absent
(`bash tools/corpus_env.sh`). The unit tests of the mechanism are tests/unit/engines/test_loop_inductions.py."""

from __future__ import annotations

import json

import pytest

from tests.support.corpus_cli import CORPUS_VENV, check_json, needs_corpus_venv

pytestmark = [
    pytest.mark.corpus,
    pytest.mark.slow,  # imports fla (and torch) in a worker
    needs_corpus_venv,
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
    [file] = check_json(config, tmp_path, python=CORPUS_VENV / "bin" / "python", timeout=120, cache=False)["files"]
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
