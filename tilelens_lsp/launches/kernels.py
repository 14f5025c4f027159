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


@dataclass(frozen=True)
class _Outline:
    """What one walk of a module's syntax tree shows the kernel finder and the comment scanner: the
    tree is walked once per text, not once per question asked of it."""

    functions: tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...]  # every function, in `ast.walk`'s order
    jit: tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...]  # the @jit ones, in the same order
    launched: frozenset[str]  # names called as `NAME[grid](...)`
    called: frozenset[str]  # names a @jit function (or one nested in it) calls, other than its own
    string_lines: frozenset[int]  # lines inside a multi-line string literal, after its first line


def _outline(tree: ast.Module) -> _Outline:
    """One depth-first walk of `tree`. A function's place in `ast.walk`'s breadth-first order is its
    (depth, preorder index): where two functions share a name, the later in that order wins."""
    functions: list[tuple[int, int, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    launched: set[str] = set()
    called: set[str] = set()
    strings: set[int] = set()
    stack: list[tuple[ast.AST, int, tuple[str, ...]]] = [(tree, 0, ())]
    order = 0
    while stack:
        node, depth, inside = stack.pop()
        order += 1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append((depth, order, node))
            if is_jit(node):
                inside = inside + (node.name,)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name):
                launched.add(func.value.id)
            elif isinstance(func, ast.Name) and any(name != func.id for name in inside):
                called.add(func.id)
        elif isinstance(node, (ast.Constant, ast.JoinedStr)):
            end = node.end_lineno
            text_like = isinstance(node, ast.JoinedStr) or isinstance(node.value, (str, bytes))
            if text_like and end is not None and end > node.lineno:
                strings.update(range(node.lineno + 1, end + 1))
        children = list(ast.iter_child_nodes(node))
        stack.extend((child, depth + 1, inside) for child in reversed(children))
    walked = tuple(fn for _, _, fn in sorted(functions, key=lambda f: (f[0], f[1])))
    jit = tuple(fn for fn in walked if is_jit(fn))
    return _Outline(walked, jit, frozenset(launched), frozenset(called), frozenset(strings))


def _outline_recursive(tree: ast.Module) -> _Outline:
    """`_outline` by recursion, about twice as fast; a tree nested deeper than the interpreter's
    recursion limit raises RecursionError (the caller then walks it with `_outline`)."""
    functions: list[tuple[int, int, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    launched: set[str] = set()
    called: set[str] = set()
    strings: set[int] = set()
    order = [0]
    children = ast.iter_child_nodes

    def visit(node: ast.AST, depth: int, inside: tuple[str, ...]) -> None:
        order[0] += 1
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append((depth, order[0], node))
            if is_jit(node):
                inside = inside + (node.name,)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name):
                launched.add(func.value.id)
            elif inside and isinstance(func, ast.Name) and any(name != func.id for name in inside):
                called.add(func.id)
        elif isinstance(node, (ast.Constant, ast.JoinedStr)):
            end = node.end_lineno
            text_like = isinstance(node, ast.JoinedStr) or isinstance(node.value, (str, bytes))
            if text_like and end is not None and end > node.lineno:
                strings.update(range(node.lineno + 1, end + 1))
        for child in children(node):
            visit(child, depth + 1, inside)

    visit(tree, 0, ())
    walked = tuple(fn for _, _, fn in sorted(functions, key=lambda f: (f[0], f[1])))
    jit = tuple(fn for fn in walked if is_jit(fn))
    return _Outline(walked, jit, frozenset(launched), frozenset(called), frozenset(strings))


def _outline_of(tree: ast.Module) -> _Outline:
    try:
        return _outline_recursive(tree)
    except RecursionError:
        return _outline(tree)


@functools.lru_cache(maxsize=2)
def _outlines(text: str) -> tuple[tuple[ast.Module, _Outline], ...]:
    """Each module `_modules` gives, with its outline (read-only, shared by every caller of this text)."""
    return tuple((m, _outline_of(m)) for m in _modules(text))


def multiline_string_lines(text: str) -> frozenset[int] | None:
    """The lines inside a multi-line string literal of the file (after the literal's first line), or
    None when the file does not parse as a whole."""
    if parse_file(text) is None:
        return None
    return _outlines(text)[0][1].string_lines


def find_kernels(text: str) -> list[KernelDef]:
    """The @jit functions of a file, in source order; never raises on broken source."""
    outlines = _outlines(text)
    fns = [fn for _, o in outlines for fn in o.jit]
    launched = set().union(*(o.launched for _, o in outlines))
    called = set().union(*(o.called for _, o in outlines))
    names = {fn.name for fn in fns}
    out = []
    for fn in sorted(fns, key=lambda f: (f.lineno, f.col_offset)):
        a = fn.args
        params = tuple(p.arg for p in a.posonlyargs + a.args + a.kwonlyargs)
        helper = fn.name in called and fn.name in names and fn.name not in launched
        out.append(KernelDef(fn.name, fn.lineno, fn.col_offset + 1, params, helper))
    return out + _assigned_kernels(outlines, out, called, launched)


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


def _assigned_kernels(
    outlines: tuple[tuple[ast.Module, _Outline], ...], defs: list[KernelDef], called: set[str], launched: set[str]
) -> list[KernelDef]:
    """Kernels bound by assignment: an alias (`k = k_fast`), a wrapper around one
    (`k = libentry()(k_impl)`), or `k = triton.jit(fn)`; the line is the assignment's."""
    by_name = {k.name: k for k in defs}
    out: list[KernelDef] = []
    for m, outline in outlines:
        plain = {n.name: n for n in outline.functions}
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
