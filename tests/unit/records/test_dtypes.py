"""The one element-size table (dtypes.py) against Triton's own dtypes: every directive dtype's size is
Triton's bit width in bytes, and the TTIR element type Triton prints for it has that size too."""

from __future__ import annotations

import pytest

from tilelens_lsp.dtypes import DIRECTIVE_ELEMENT, element_bytes
from tilelens_lsp.launches.specs import DTYPES


def test_every_directive_dtype_has_an_element_type():
    assert set(DIRECTIVE_ELEMENT) == set(DTYPES)


@pytest.mark.parametrize("name", DTYPES)
def test_size_and_element_type_are_tritons(name):
    from triton._C.libtriton import ir

    from tilelens_lsp.compile.binding import triton_dtype

    dtype = triton_dtype(name)
    assert element_bytes(name) == max(1, dtype.primitive_bitwidth // 8)
    context = ir.context()
    ir.load_dialects(context)
    builder = ir.builder(context)
    # the type Triton prints for it has the same size (fp8e4b15 is printed as i8 by some releases)
    assert element_bytes(str(dtype.to_ir(builder))) == element_bytes(DIRECTIVE_ELEMENT[name])


def test_pointers_and_unknown_types():
    assert (element_bytes("ptr<f16>"), element_bytes("f8E4M3FN"), element_bytes("complex<f32>")) == (8, 1, None)
