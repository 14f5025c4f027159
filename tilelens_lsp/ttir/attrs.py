"""Typed attributes of TTIR ops, parsed from an op's header text once (`Op`'s cached properties call these).

Both engines read the same attributes (make_range bounds, comparison predicates, axes, constants, loop
bindings, callees); reading them here keeps one parse per attribute instead of one regex per engine.
Parsing only: what an attribute means for values is the engines' business.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from tilelens_lsp.ttir.types import Type, split_top, symbol_name

_CONST = re.compile(r"^(?:dense<(.*)>|(\S+))\s*:\s*(.*)$")
_FOR_IV = re.compile(r"^\s*(%[\w$.\-]+)\s*=")
_ITER_ARGS = re.compile(r"iter_args\((.*)\)\s*->", re.S)
_CALLEE = re.compile(r'@([\w$.\-]+|"(?:[^"\\]|\\.)*")')
_RANGE_START = re.compile(r"start = (-?\d+)")
_RANGE_END = re.compile(r"end = (-?\d+)")
_AXIS = re.compile(r"axis = (-?\d+)")
_ORDER = re.compile(r"order = array<i32:\s*([\d,\s]+)>")


@dataclass(frozen=True)
class IntConstant:
    """An integer `arith.constant`: one value for every element (`value`), or distinct values (`elements`,
    nested lists as printed, true/false as 1/0). A bare `true`/`false` prints no type: an i1 scalar."""

    value: int | None
    elements: list | None
    shape: tuple[int, ...]
    bits: int


@dataclass(frozen=True)
class ForHeader:
    """`scf.for %iv = %lb to %ub step %s iter_args(%a = %x, ...)`: the names the body binds."""

    iv: str | None
    iter_args: tuple[str, ...]


def int_constant(text: str, result: Type) -> IntConstant | None:
    """The value of `arith.constant` with header `text`; None for a non-integer (float) constant."""
    text = text.strip()
    if text in ("true", "false"):
        return IntConstant(int(text == "true"), None, (), 1)
    m = _CONST.match(text)
    if not m or not result.is_int:
        return None
    raw = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
    if raw.startswith("["):
        return IntConstant(None, ast.literal_eval(raw.replace("true", "1").replace("false", "0")), result.shape, result.bits)
    v = 1 if raw == "true" else 0 if raw == "false" else int(raw, 0)
    return IntConstant(v, None, result.shape, result.bits)


def _search(pattern: re.Pattern[str], text: str) -> re.Match[str]:
    """The attribute `pattern` finds in an op's text; a ValueError naming both if the op has none."""
    m = pattern.search(text)
    if m is None:
        raise ValueError(f"no {pattern.pattern!r} in {text!r}")
    return m


def range_bounds(text: str) -> tuple[int, int]:
    """`tt.make_range {end = 16 : i32, start = 0 : i32}` → (start, end)."""
    return int(_search(_RANGE_START, text).group(1)), int(_search(_RANGE_END, text).group(1))


def predicate(text: str) -> str:
    """`arith.cmpi slt, %a, %b` → `slt`."""
    return text.split(",")[0].strip()


def program_axis(text: str) -> int:
    """`tt.get_program_id y` / `tt.get_num_programs z` → 1 / 2."""
    return "xyz".index(text.split()[0])


def axis(text: str) -> int:
    """`tt.expand_dims %x {axis = 1 : i32}` → 1."""
    return int(_search(_AXIS, text).group(1))


def order(text: str) -> tuple[int, ...] | None:
    """`tt.trans %x {order = array<i32: 1, 0>}` → (1, 0); None when the op prints no order."""
    m = _ORDER.search(text)
    return tuple(int(x) for x in m.group(1).split(",")) if m else None


def for_header(text: str) -> ForHeader:
    iv = _FOR_IV.match(text)
    m = _ITER_ARGS.search(text)
    carried = tuple(a.split("=")[0].strip() for a in split_top(m.group(1), ", ")) if m else ()
    return ForHeader(iv.group(1) if iv else None, carried)


def callee(text: str) -> str:
    """`tt.call @helper(%a)` → `helper` (quoted mangled names unquoted); "" when unreadable."""
    m = _CALLEE.match(text.strip())
    return symbol_name(m.group(1)) if m else ""
