"""Kernel discovery and the comment scanner read one walk of the file's tree (`kernels._outline`): what
they report must equal what walking the tree once per question (the plain `ast.walk` way kept
here as the oracle) reports, on the repository's kernels, the real packages of the corpus venv and
broken versions of them (the per-statement path of a file with a syntax error)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from tilelens_lsp.launches import kernels, scanner
from tilelens_lsp.launches.kernels import KernelDef, find_kernels, is_jit, multiline_string_lines, parse_file

REPO = Path(__file__).resolve().parents[3]
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


# ---------------------------------------------------------------- the oracle: one walk per question


def _walked_kernels(text: str) -> list[KernelDef]:
    modules = kernels._modules(text)  # noqa: SLF001 - the same modules, read the plain way
    fns, launched = [], set()
    for m in modules:
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
        out.append(KernelDef(fn.name, fn.lineno, fn.col_offset + 1, params, fn.name in called and fn.name not in launched))
    assert all(k.name in names for k in out)
    by_name = {k.name: k for k in out}
    for m in modules:
        plain = {n.name: n for n in ast.walk(m) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for stmt in kernels._module_level(m.body):  # noqa: SLF001
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
                continue
            name = stmt.targets[0].id
            if name in by_name:
                continue
            params = None
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
            helper = name in called and name not in launched
            by_name[name] = KernelDef(name, stmt.lineno, stmt.col_offset + 1, params, helper)
            out.append(by_name[name])
    return out


def _walked_string_lines(text: str) -> set[int] | None:
    tree = parse_file(text)
    if tree is None:
        return None
    inside: set[int] = set()
    for n in ast.walk(tree):
        if isinstance(n, (ast.Constant, ast.JoinedStr)) and n.end_lineno is not None and n.end_lineno > n.lineno:
            if isinstance(n, ast.JoinedStr) or isinstance(n.value, (str, bytes)):
                inside.update(range(n.lineno + 1, n.end_lineno + 1))
    return inside


def _tokenized_comment_lines(text: str) -> set[int]:
    return {t.start[0] for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.COMMENT}


# ---------------------------------------------------------------- the texts


def _corpus_files() -> list[Path]:
    found = sorted((REPO / "samples").glob("*.py")) + sorted((REPO / "tests" / "conformance" / "kernels").glob("*.py"))
    venv = REPO / ".venv-corpus" / "lib"
    for package, every in (("liger_kernel", 6), ("fla", 15), ("flag_gems", 60)):
        files = sorted(venv.glob(f"python3*/site-packages/{package}/**/*.py"))
        files = [p for p in files if "jit" in p.read_text("utf-8", "replace")]
        found.extend(files[::every])
    return found


FILES = _corpus_files()


def _broken(text: str) -> str:
    """The file cut in the middle of a line two thirds down: a syntax error, most statements intact."""
    lines = _LINE_BREAK.split(text)
    cut = (2 * len(lines)) // 3
    return "\n".join(lines[:cut] + [lines[cut][: len(lines[cut]) // 2] + " (:"] + lines[cut + 1 :])


@pytest.mark.parametrize("broken", [False, True], ids=["whole", "broken"])
def test_one_walk_finds_what_a_walk_per_question_finds(broken):
    assert len(FILES) >= 100, "the repository's kernels alone number over a hundred"
    differ = []
    for path in FILES:
        text = path.read_text("utf-8", "replace")
        if broken:
            text = _broken(text)
        if find_kernels(text) != _walked_kernels(text) or multiline_string_lines(text) != _walked_string_lines(text):
            differ.append(str(path))
    assert differ == []


def test_the_real_packages_are_read_when_the_corpus_venv_is_there():
    if not (REPO / ".venv-corpus").exists():
        pytest.skip("no corpus venv (tools/corpus_env.sh): only the repository's kernels are compared")
    assert any("site-packages" in str(p) for p in FILES)


def test_same_named_functions_resolve_as_a_breadth_first_walk_does():
    # `k2 = triton.jit(f)` takes the parameters of the `f` that `ast.walk` meets last
    text = (
        "import triton\n"
        "def f(a, b):\n"
        "    def f(x):\n"
        "        return x\n"
        "    return f\n"
        "class C:\n"
        "    def f(p, q, r):\n"
        "        pass\n"
        "k2 = triton.jit(f)\n"
    )
    assert find_kernels(text) == _walked_kernels(text)
    assert find_kernels(text)[0].params == ("p", "q", "r")


def test_helpers_and_nested_calls_are_read_from_the_enclosing_kernel():
    text = (
        "import triton\n"
        "@triton.jit\n"
        "def helper(x):\n"
        "    return helper(x)\n"  # calls itself only: not a helper by that
        "@triton.jit\n"
        "def outer(x, y=inner_default()):\n"
        "    @triton.jit\n"
        "    def inner(z):\n"
        "        return outer(z)\n"
        "    return inner(x)\n"
        "@triton.jit\n"
        "def kernel(p):\n"
        "    outer(p)\n"
        "kernel[(1,)](0)\n"
    )
    found = {k.name: k.is_helper for k in find_kernels(text)}
    assert found == {"helper": False, "outer": True, "inner": True, "kernel": False}
    assert find_kernels(text) == _walked_kernels(text)


def test_a_comment_inside_a_multiline_string_is_no_directive():
    text = 'x = """\n# tilelens: k[(1,)](1)\n"""\n# tilelens: N = 4\ny = f"""a\n{x}\n# b"""\n'
    assert multiline_string_lines(text) == {2, 3, 6, 7} == _walked_string_lines(text)
    assert {line for line, _, _ in (b[0] for b in scanner.directive_blocks(text))} == {4}
    assert _tokenized_comment_lines(text) == {4}


def test_an_edit_is_seen_the_outline_is_per_text():
    before = "import triton\n@triton.jit\ndef k(a):\n    pass\n"
    after = before.replace("def k(a)", "def k(a, b)")
    assert find_kernels(before)[0].params == ("a",)
    assert find_kernels(after)[0].params == ("a", "b")
    assert find_kernels(before)[0].params == ("a",)


def test_a_tree_deeper_than_the_recursion_limit_is_walked_without_recursion():
    import inspect
    import sys

    text = "import triton\n@triton.jit\ndef k(a):\n    x = h(" + "+".join(["a"] * 600) + ")\nk[(1,)](0)\n"
    tree = parse_file(text)
    assert tree is not None
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(len(inspect.stack()) + 300)  # the 600-deep sum cannot be recursed into now
        with pytest.raises(RecursionError):
            kernels._outline_recursive(tree)  # noqa: SLF001
        outline = kernels._outline_of(tree)  # noqa: SLF001
    finally:
        sys.setrecursionlimit(limit)
    assert outline == kernels._outline(tree)  # noqa: SLF001
    assert find_kernels(text) == _walked_kernels(text)
