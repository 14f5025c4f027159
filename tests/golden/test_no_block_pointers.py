"""No tested Triton release hands block pointers to the engines, so they model none.

`tl.make_block_ptr` / `tl.advance` exist up to Triton 3.8, but the `ttir` stage the product compiles to
has already rewritten them into plain pointer arithmetic; Triton 3.9 removed them. The goldens of every
tested release (the block-pointer kernel is one of them up to 3.8) must therefore hold no block-pointer
op: if one ever does, the engines need handlers for it again (and conformance kernels).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tilelens_lsp.releases import TESTED_RELEASES

HERE = Path(__file__).resolve().parent
BLOCK_POINTER_OPS = re.compile(r"\btt\.(make_tensor_ptr|make_block_ptr|advance)\b")


@pytest.mark.parametrize("release", TESTED_RELEASES)
def test_no_tested_release_emits_block_pointer_ops_into_ttir(release):
    goldens = sorted((HERE / release).glob("*.ttir"))
    assert goldens, f"no goldens for Triton {release}"
    found = [p.name for p in goldens if BLOCK_POINTER_OPS.search(p.read_text(encoding="utf-8"))]
    assert found == []


def test_the_block_pointer_kernel_is_among_the_goldens_of_the_releases_that_have_block_pointers():
    for release in ("3.6", "3.7", "3.8"):
        assert (HERE / release / "block_copy_kernel__l1.ttir").is_file()
