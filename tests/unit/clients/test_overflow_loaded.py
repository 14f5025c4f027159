"""An i32 product of a declared-range index overflows at the end of its range: the TL003 names the
loaded value that gives it, as a TL002 does, so "program 0 overflows" is not read as true of every
launch (`overflow.py`)."""

from __future__ import annotations

import pytest

from tilelens_lsp.pipeline import analyze_path

KERNEL = """import triton
import triton.language as tl


# tilelens: emb[(4,)](i32[4].values(0, 600000), fp16[600000, 4096], fp16[4, 4096], 4096, BLOCK=4096)
@triton.jit
def emb(ids_ptr, w_ptr, out_ptr, D, BLOCK: tl.constexpr):
    t = tl.program_id(0)
    i = tl.load(ids_ptr + t)
    d = tl.arange(0, BLOCK)
    tl.store(out_ptr + t * D + d, tl.load(w_ptr + i * D + d))
"""


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")


def test_the_overflow_of_a_loaded_index_names_the_declared_value_that_gives_it(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    (launch,) = analyze_path(path, tmp_path).launches
    (tl003,) = [d for d in launch.diagnostics if d.code == "TL003"]
    assert "mul gives 2457595904" in tl003.message  # 599999 * 4096
    assert "when ids_ptr holds 599999" in tl003.message
    assert tl003.witness is not None and tl003.witness.value == 599999 * 4096
