"""The affine summary's values: forms, conditions, piecewise values and pointers, with their algebra.

A `Form` is c + Σ k[v]·v (a per-program constant plus integer coefficients on lane, loop, quotient
and program variables); a `Cond` is a per-program predicate plus constraints `form >= 0`; `Pieces` is
one form per disjoint lane region; a `Ptr` is an argument with a byte-offset form. Only values and
their combinators here: evaluating ops is `handlers`/`control`, footprints are `box`/`footprints`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tilelens_lsp.engines.values import Opaque

MAX_QUOTIENTS = 64  # values a division's quotient may take across one lane range
MAX_PIECES = 16  # regions of one piecewise value (selects and min/max of lane values)


class NotAffine(Exception):
    """The launch leaves the affine fragment; the enumerating AccessGraph answers it instead."""


# ---------------------------------------------------------------- values


@dataclass
class Form:
    """c + Σ k[v]·v: `c` per program ((P,) or (1,)), `k` integer coefficients on lane/loop variables.

    A division or remainder that splits a lane range brings a quotient variable `q<n>` and `side`
    constraints (each `form >= 0`) that pin it to the one value the division gives; every access or
    mask built from the value carries them. `rng`, when set, bounds the value per program."""

    c: np.ndarray
    k: dict[str, int]
    shape: tuple[int, ...]
    bits: int
    side: tuple["Form", ...] = ()
    rng: tuple[np.ndarray, np.ndarray] | None = None


@dataclass
class Cond:
    """An i1 value: `pred` per program ((P,) or (1,)) and, on top of it, constraints `form >= 0`
    (`side`: the quotient variables' definitions, which a negation keeps as they are)."""

    pred: np.ndarray
    cons: tuple[Form, ...]
    shape: tuple[int, ...]
    side: tuple[Form, ...] = ()


@dataclass
class Pieces:
    """An integer that is one form on each of several lane regions (a select or a min/max whose
    choice varies by lane): `parts` are (guard, form), the guards (conjunctions of `form >= 0`)
    cover every point exactly once."""

    parts: tuple[tuple[tuple[Form, ...], Form], ...]
    shape: tuple[int, ...]
    bits: int


@dataclass
class Ptr:
    arg: str
    off: "Form | Pieces"  # byte offset from the argument's address
    pointee: int


def coeffs(*parts: tuple[dict[str, int], int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for k, scale in parts:
        for v, a in k.items():
            out[v] = out.get(v, 0) + a * scale
    return {v: a for v, a in out.items() if a}


def const_form(v: int, shape: tuple[int, ...] = (), bits: int = 64) -> Form:
    return Form(np.array([v], dtype=np.int64), {}, shape, bits)


def all_sides(*vals: Any) -> tuple[Form, ...]:
    """The side constraints of every operand, each once."""
    out: list[Form] = []
    seen: set[int] = set()
    for v in vals:
        v = v.off if isinstance(v, Ptr) else v
        sides = [f for _, part in v.parts for f in part.side] if isinstance(v, Pieces) else getattr(v, "side", ())
        for f in sides:
            if id(f) not in seen:
                seen.add(id(f))
                out.append(f)
    return tuple(out)


def parts_of(v: Any) -> tuple[tuple[tuple[Form, ...], Form], ...]:
    """A form or a piecewise value as (guard, form) parts."""
    return v.parts if isinstance(v, Pieces) else (((), v),)


def make_pieces(parts: list[tuple[tuple[Form, ...], Form]], shape: tuple[int, ...], bits: int) -> "Form | Pieces":
    if len(parts) == 1 and not parts[0][0]:
        return parts[0][1]
    if len(parts) > MAX_PIECES:
        raise NotAffine(f"a value of more than {MAX_PIECES} pieces")
    return Pieces(tuple(parts), shape, bits)


def negate(f: Form) -> Form:
    """not (f >= 0), i.e. -f - 1 >= 0."""
    return Form(-f.c - 1, {v: -a for v, a in f.k.items()}, f.shape, 64)


def cond_regions(cond: "Cond") -> tuple[tuple[Form, ...], list[tuple[Form, ...]]]:
    """A lane condition as its true region and disjoint regions covering its complement (each a
    conjunction): not (c1 and c2 and ...) = (not c1) or (c1 and not c2) or ... ."""
    cons = list(cond.cons)
    if not cond.pred.all():
        cons.insert(0, Form(np.where(cond.pred, 0, -1).astype(np.int64), {}, cond.shape, 64))
    side = tuple(cond.side)
    falses = [side + tuple(cons[:i]) + (negate(cons[i]),) for i in range(len(cons))]
    return side + tuple(cons), falses


def uniform_value(f: Form) -> int | None:
    """The value of a form that is one integer for every program, else None."""
    if f.k:
        return None
    c = f.c
    if c.size == 1 or (c == c[0]).all():
        return int(c[0])
    return None


def relabel(k: dict[str, int], mapping: dict[int, int]) -> dict[str, int]:
    out = {}
    for v, a in k.items():
        out[f"L{mapping[int(v[1:])]}" if v[0] == "L" else v] = a
    return out


class Ctx:
    """Where code runs: for which programs, under which loop constraints and calls."""

    def __init__(self, pred: np.ndarray, cons: tuple[Form, ...], stack: tuple[str, ...]):
        self.pred = pred  # (P,) bool: programs for which this code runs
        self.cons = cons  # loop constraints (iteration variables within per-program trips)
        self.stack = stack


def blend(cond: np.ndarray, a: Any, b: Any, P: int) -> Any:
    """Per-program choice between two values (a branch's results, a select on a program condition)."""
    if isinstance(a, Opaque) or isinstance(b, Opaque):
        return a if isinstance(a, Opaque) else b
    if isinstance(a, (Form, Cond)) and isinstance(b, (Form, Cond)) and (a.side or b.side) and a.side != b.side:
        raise NotAffine("a per-program choice between values with different quotient variables")
    if isinstance(a, Form) and isinstance(b, Form) and a.k == b.k:
        return Form(
            np.where(np.broadcast_to(cond, (P,)), np.broadcast_to(a.c, (P,)), np.broadcast_to(b.c, (P,)))
            if not cond.all()
            else a.c,
            dict(a.k),
            a.shape,
            a.bits,
            a.side,
        )
    if isinstance(a, Ptr) and isinstance(b, Ptr) and a.arg == b.arg and a.pointee == b.pointee:
        return Ptr(a.arg, blend(cond, a.off, b.off, P), a.pointee)
    if isinstance(a, Cond) and isinstance(b, Cond) and not a.cons and not b.cons:
        return Cond(np.where(cond, a.pred, b.pred), (), a.shape)
    raise NotAffine("a per-program choice between values of different shape")


def data_of(*vals: Any) -> Opaque:
    """The opaque operand that makes a result opaque (loaded data first)."""
    for v in vals:
        if isinstance(v, Opaque):
            return v
    return Opaque("out-of-vocabulary", "an unmodelled operand")
