"""Element sizes: the one table of how many bytes an element takes, by the element type names the TTIR
prints (`f16`, `i32`, `f8E4M3FN`), and the directive dtype names (`fp16`, `u32`, `fp8e4nv`) mapped
onto them. The fake tensors of the binder and the engines' address arithmetic both read it.

Data only: it validates no dtype (the directive evaluator does) and imports nothing of Triton.
"""

from __future__ import annotations

# bytes per element, by the MLIR element type the TTIR prints (signless integers: i8 is also u8)
ELEMENT_BYTES: dict[str, int] = {
    "i1": 1,
    "i8": 1,
    "i16": 2,
    "i32": 4,
    "i64": 8,
    "f16": 2,
    "bf16": 2,
    "f32": 4,
    "f64": 8,
    "tf32": 4,
    "f8E4M3FN": 1,
    "f8E5M2": 1,
    "f8E4M3FNUZ": 1,
    "f8E5M2FNUZ": 1,
    "f8E4M3B11FNUZ": 1,
}
POINTER_BYTES = 8

# each directive dtype (launches/specs.py DTYPES) → the element type Triton compiles it to
DIRECTIVE_ELEMENT: dict[str, str] = {
    "fp8e4nv": "f8E4M3FN",
    "fp8e5": "f8E5M2",
    "fp8e4b15": "f8E4M3B11FNUZ",
    "fp8e4b8": "f8E4M3FNUZ",
    "fp8e5b16": "f8E5M2FNUZ",
    "fp16": "f16",
    "bf16": "bf16",
    "fp32": "f32",
    "fp64": "f64",
    "i1": "i1",
    "i8": "i8",
    "i16": "i16",
    "i32": "i32",
    "i64": "i64",
    "u1": "i1",
    "u8": "i8",
    "u16": "i16",
    "u32": "i32",
    "u64": "i64",
}


def element_bytes(name: str) -> int | None:
    """Bytes per element of a directive dtype or a TTIR element type (`ptr<...>`: a pointer); None if unknown."""
    if name.startswith("ptr<"):
        return POINTER_BYTES
    return ELEMENT_BYTES.get(DIRECTIVE_ELEMENT.get(name, name))
