"""The result cache's key: everything a launch's verdict depends on, as one record.

`ResultKey` names each input (this analysis' code, the file's text, the kernel and the values it
reads, the specialization, grid, target and release, the settings that change verdicts, the paths
results name, the tensors and scalars); `digest()` is the string the cache files are named by.
`dependency_values` finds the values a kernel reads beyond its own text. This module does not
decide whether a cached result may be reused: equal keys are the whole rule.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import types
from dataclasses import dataclass, fields
from typing import Any

from tilelens_lsp.cache import CODE_HASH
from tilelens_lsp.model import TensorSpec

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_PLAIN = (int, float, complex, str, bytes, bool, tuple, list, dict, frozenset, set, type(None))


@dataclass(frozen=True)
class ResultKey:
    """The inputs of one compiled config's verdict."""

    source_hash: str  # the kernel file's text
    kernel_key: str  # Triton's `cache_key`: the kernel's and its @jit helpers' sources, constexpr globals
    depends: str  # `dependency_values`: every other global the kernel or a helper reads
    specialization: str  # the binder's key: identical keys compile identically
    grid: tuple[int, int, int]
    target: str
    triton: str  # the release
    mapper: str  # the roots portable paths are relative to ...
    kernel_file: str  # ... and the file the kernel's code object names
    clients: tuple[str, ...]
    budget: int
    engine_mode: str
    tensors: tuple[tuple[str, TensorSpec], ...]
    scalars: str  # every non-tensor argument's value (the specialization key rounds them)
    code: str = CODE_HASH  # this analysis' own sources

    def digest(self) -> str:
        """The key as the cache stores it: a hash of every field (each by its repr, a tensor's naming
        every field of its own: `dataclasses.astuple` would copy them all first, for the same text)."""
        return hashlib.sha256(repr(tuple(getattr(self, f.name) for f in fields(self))).encode()).hexdigest()


def without_addresses(text: str) -> str:
    """`text` without the ` at 0x…` of an object's repr: the same text in every process and run."""
    return _ADDRESS.sub("", text)


def scalar_values(arguments: dict[str, Any], tensor_type: type) -> str:
    """The value of every argument that is not a tensor, in a stable form."""
    return repr(sorted((name, repr(v)) for name, v in arguments.items() if not isinstance(v, tensor_type)))


def dependencies(jit: Any) -> str:
    """`dependency_values`, or a value no other key has when it cannot be computed (never reuse then)."""
    try:
        return dependency_values(jit)
    except Exception as exc:  # noqa: BLE001 - no key we can trust: never reuse a cached verdict
        return f"uncacheable {os.urandom(8).hex()} {exc}"


def dependency_values(jit: Any) -> str:
    """What the kernel's TTIR depends on beyond its source text, for the result cache's key.

    Triton's own `cache_key` hashes the source of the kernel and of every `@triton.jit` helper it
    calls (in any module) and the `tl.constexpr` globals they read. Other globals it only records
    (`used_global_vals`, checked at launch), and a module attribute such as `helpers.BLOCK` it does
    not track at all. This adds the current value of every global name and attribute chain that the
    kernel or any of its helpers reads, found by walking their syntax trees as Triton's
    `DependenciesFinder` does."""
    seen: set[int] = set()
    values: list[str] = []

    def visit(fn: Any) -> None:
        if id(fn) in seen:
            return
        seen.add(id(fn))
        try:
            src = getattr(fn, "src", None)
            reads = _global_reads(src) if isinstance(src, str) else _reads_of(fn.parse())
            scope = fn.get_capture_scope() if hasattr(fn, "get_capture_scope") else fn.__globals__
        except Exception:  # noqa: BLE001 - a helper we cannot read: its identity at least
            values.append(f"{getattr(fn, '__qualname__', '?')}: unreadable")
            return
        for name, chain in reads:
            if name not in scope:
                continue
            value = scope[name]
            for attr in chain:
                try:
                    value = getattr(value, attr)
                except Exception:  # noqa: BLE001 - user objects may raise anything
                    value = "<missing>"
                    break
            record(fn, ".".join([name, *chain]), value)

    def record(fn: Any, label: str, value: Any) -> None:
        if isinstance(value, types.ModuleType):
            return
        if hasattr(value, "parse") and hasattr(value, "cache_key") and hasattr(value, "__globals__"):
            visit(value)  # a @triton.jit helper: its own reads count too
            return
        if not isinstance(value, _PLAIN) and type(value).__name__ not in ("constexpr", "dtype") and callable(value):
            return  # functions, classes, Triton builtins: their identity is in Triton's cache_key
        text = without_addresses(repr(value))
        values.append(f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}:{label}={text}")

    visit(jit)
    return hashlib.sha256("\n".join(sorted(set(values))).encode()).hexdigest()


@functools.lru_cache(maxsize=512)
def _global_reads(src: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The non-local names a kernel's source reads, each with the attribute chain read from it: found
    once per source text (a save re-imports the module, but the kernel's source rarely changes).
    A pure function of the text, so the process-wide memo holds no state a verdict depends on."""
    import textwrap

    return _reads_of(ast.parse(textwrap.dedent(src)))


def _reads_of(tree: ast.AST) -> tuple[tuple[str, tuple[str, ...]], ...]:
    local = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    local |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    out = []
    for node in ast.walk(tree):
        chain: list[str] = []
        inner = node
        while isinstance(inner, ast.Attribute):
            chain.insert(0, inner.attr)
            inner = inner.value
        if isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Store) and inner.id not in local:
            out.append((inner.id, tuple(chain)))
    return tuple(out)
