"""Resources (issue 24, items 14-16): enormous tensors, big documents, and writing in place.

Each test failed on the code before its fix; the comment above it says how.
"""

from __future__ import annotations

import textwrap

import relfig
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.settings import Settings

HUGE = textwrap.dedent("""
    import triton
    import triton.language as tl

    # tilelens: k[(2,)](fp32[2**32, 2**32], BLOCK=16)
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0)
""").lstrip("\n")


# Before: the storage's 2**64 elements overflowed numpy's int64 in the race client (TL050).
def test_a_tensor_of_2_to_the_64_elements_gets_its_race_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    (tmp_path / "tilelens.toml").touch()
    (tmp_path / "k.py").write_text(HUGE)
    result = analyze_path(tmp_path / "k.py", tmp_path, Settings())
    codes = [d.code for launch in result.launches for d in launch.diagnostics] + [d.code for d in result.diagnostics]
    assert "TL050" not in codes, [d.message for launch in result.launches for d in launch.diagnostics]
    assert "TL005" in codes        # both programs store elements 0..15: the race the client exists for
    relfig.bump("resources", "tested")
