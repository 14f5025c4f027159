"""Kernel discovery: the `@jit` functions of a file (and kernels bound by assignment), from its text alone.

Read with `ast`, never imported; a file with a syntax error still gives the kernels of every top-level
statement that parses. Answers which names a launch may use, which kernels lack one (TL100), and
which `@jit` functions are helpers only other kernels call.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class KernelDef:
    name: str
    line: int  # 1-based line of the `def`
    column: int  # 1-based column of the `def`
    params: tuple[str, ...]
    is_helper: bool  # a @jit function only called from other @jit functions


def is_jit(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "jit":
            return True
    return False


_SEGMENT_CONTINUES = re.compile(r"(else|elif|except|finally)\b")


@functools.lru_cache(maxsize=2)
def parse_file(text: str) -> ast.Module | None:
    """The file's syntax tree (shared by the kernel finder and the comment finder; read-only)."""
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _modules(text: str) -> list[ast.Module]:
    """The whole module, or on a syntax error every top-level statement that parses on its own."""
    tree = parse_file(text)
    if tree is not None:
        return [tree]
    lines = _LINE_BREAK.split(text)
    starts, after_decorator = [], False
    for i, line in enumerate(lines):
        if not line or line[0] in " \t#)]}" or _SEGMENT_CONTINUES.match(line):
            continue
        is_def = re.match(r"(async\s+def|def|class)\b", line) is not None
        if not (after_decorator and (is_def or line.startswith("@"))):
            starts.append(i)
        after_decorator = line.startswith("@")
    modules = []
    for start, end in zip(starts, starts[1:] + [len(lines)]):
        try:
            modules.append(ast.parse("\n" * start + "\n".join(lines[start:end])))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    return modules


def kernel_head(text: str, name: str) -> tuple[int, str] | None:
    """(1-based line of the first decorator of the function `name`, or of its `def`; that line's
    indentation): where a launch declared for it goes. None when no such function parses."""
    for m in _modules(text):
        for n in ast.walk(m):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name:
                first = min([d.lineno for d in n.decorator_list] + [n.lineno])
                line = _LINE_BREAK.split(text)[first - 1]
                return first, line[: len(line) - len(line.lstrip())]
    return None


def find_kernels(text: str) -> list[KernelDef]:
    """The @jit functions of a file, in source order; never raises on broken source."""
    fns, launched = [], set()
    for m in _modules(text):
        for n in ast.walk(m):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_jit(n):
                fns.append(n)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Subscript) and isinstance(n.func.value, ast.Name):
                launched.add(n.func.value.id)
    names = {fn.name for fn in fns}
    called: set[str] = set()
    for fn in fns:
        for n in ast.walk(fn):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id != fn.name:
                called.add(n.func.id)
    out = []
    for fn in sorted(fns, key=lambda f: (f.lineno, f.col_offset)):
        a = fn.args
        params = tuple(p.arg for p in a.posonlyargs + a.args + a.kwonlyargs)
        helper = fn.name in called and fn.name in names and fn.name not in launched
        out.append(KernelDef(fn.name, fn.lineno, fn.col_offset + 1, params, helper))
    return out + _assigned_kernels(text, out, called, launched)


def _module_level(body: list[ast.stmt]):
    """Statements at module level, including those inside module-level if/try blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.Try)):
            for block in (
                stmt.body,
                stmt.orelse,
                getattr(stmt, "finalbody", []),
                *[h.body for h in getattr(stmt, "handlers", [])],
            ):
                yield from _module_level(block)


def _assigned_kernels(text: str, defs: list[KernelDef], called: set[str], launched: set[str]) -> list[KernelDef]:
    """Kernels bound by assignment: an alias (`k = k_fast`), a wrapper around one
    (`k = libentry()(k_impl)`), or `k = triton.jit(fn)`; the line is the assignment's."""
    by_name = {k.name: k for k in defs}
    out: list[KernelDef] = []
    for m in _modules(text):
        plain = {n.name: n for n in ast.walk(m) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for stmt in _module_level(m.body):
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            name = stmt.targets[0].id
            if name in by_name:
                continue
            params: tuple[str, ...] | None = None
            jit_call = any(
                isinstance(c, ast.Call) and (getattr(c.func, "attr", None) == "jit" or getattr(c.func, "id", None) == "jit")
                for c in ast.walk(stmt.value)
            )
            for n in ast.walk(stmt.value):
                if isinstance(n, ast.Name) and n.id in by_name:
                    params = by_name[n.id].params
                    break
                if jit_call and isinstance(n, ast.Name) and n.id in plain:
                    a = plain[n.id].args
                    params = tuple(p.arg for p in a.posonlyargs + a.args + a.kwonlyargs)
                    break
            if params is None:
                continue
            kernel = KernelDef(name, stmt.lineno, stmt.col_offset + 1, params, name in called and name not in launched)
            by_name[name] = kernel
            out.append(kernel)
    return out
