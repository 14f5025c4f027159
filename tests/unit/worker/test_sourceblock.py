"""`fast_getblock` against `inspect.getblock`: the lines `@triton.jit` reads must not change."""

from __future__ import annotations

import ast
import inspect
import sys
import sysconfig
from pathlib import Path

import pytest

from tilelens_lsp.worker.sourceblock import fast_getblock, install

pytestmark = pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="installed on Python 3.11 only")

ORIGINAL = inspect.getblock

TRICKY = {
    "plain": "def f(x):\n    return x\n\ny = 1\n",
    "comment first in the body": "def f():\n    # c\n    x = 1\n",
    "trailing comments, deep and shallow": "def f():\n    x = 1\n\n    # tail\n  # low\n# none\ny = 2\n",
    "comment deeper than the body after it": "def f():\n    if x:\n        y = 1\n        # deep\n    # body\nz = 3\n",
    "blank line before the body": "def f():\n\n    return 1\n",
    "one-liner followed by code": "def f(): return 1\nx = 2\ny = 3\n",
    "one-liner, blank line, code": "def f(): return 1\n\nx = 2\n",
    "decorators with arguments over lines": (
        "@triton.autotune(\n    configs=[c(1), c(2)],  # note\n    key=['N'],\n)\n@triton.jit\n"
        "def k(x, N: tl.constexpr):\n    pass\n# after\n"
    ),
    "lambda in a decorator's arguments": "@h({'E': lambda a: a['N'] % 2 == 0})\n@jit\ndef k(n):\n    return n\n",
    "comment between decorators": "@a\n# why\n@b\ndef f():\n    return 0\n",
    "multi-line string with hash lines": (
        'def f():\n    s = """\n# not a comment\n    # nor this\n"""\n    return s\n# after\nx = 1\n'
    ),
    "comment inside brackets": "def f():\n    return g(\n        1,\n        # inside\n        2,\n    )\n  # low\n",
    "ends at the end of the file with a comment": "def f():\n    return 1\n    # last",
    "ends at the end of the file with a shallow comment": "def f():\n    return 1\n# last",
    "no newline at the end": "def f():\n    return 1",
    "class with methods": (
        "class A:\n    def m(self):\n        return 1\n\n    # between\n    def n(self):\n        pass\n\nB = 1\n"
    ),
    "a method, indented": "    def m(self):\n        return 1\n    # same level\n\n    def n(self):\n        pass\n",
    "tabs": "def f():\n\tif x:\n\t\treturn 1\n\t# tab comment\nx = 1\n",
    "form feed": "def f():\n    return 1\n\f# after a form feed\nx = 1\n",
    "a lambda": "f = lambda x: (x +\n    1)\ny = 2\n",
    "continuation line": "def f():\n    return 1 + \\\n        2\n# c\n",
    "semicolons": "def f():\n    x = 1; y = 2\n    # c\nz = 1\n",
    "bad dedent": "def f():\n        x = 1\n    y = 2\n",
    "invalid character": "def f():\n    return 1\n    $\nx = 1\n",
    "unterminated bracket at the end": "def f():\n    return 1\nx = (\n",
}


def _agree(lines: list[str]) -> bool:
    """Both give the same lines, or both raise the same error."""
    try:
        want = ORIGINAL(lines)
    except Exception as exc:  # noqa: BLE001 - the original's error must be the fast one's too
        try:
            fast_getblock(lines)
        except type(exc):
            return True
        return False
    return fast_getblock(lines) == want


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_tricky_sources_give_the_original_block(name: str) -> None:
    lines = TRICKY[name].splitlines(True)
    for start in range(len(lines)):
        assert _agree(lines[start:]), (name, start + 1)


def _sources() -> list[Path]:
    """The standard library's own files (its installed packages and tests left out) and Triton's."""
    import triton

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    own = [p for p in sorted(stdlib.rglob("*.py")) if not {"site-packages", "test", "tests"} & set(p.parts)]
    return own + sorted(Path(triton.__file__).parent.rglob("*.py"))


def _starts(text: str) -> list[int]:
    """The first line (0-based) of every function and class, as `co_firstlineno` gives it."""
    tree = ast.parse(text)
    starts = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            starts.add(first - 1)
        elif isinstance(node, ast.Lambda):
            starts.add(node.lineno - 1)
    return sorted(starts)


def test_every_function_of_the_standard_library_and_the_installed_packages() -> None:
    compared = 0
    for path in _sources():
        try:
            text = path.read_text(encoding="utf-8")
            starts = _starts(text)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        lines = text.splitlines(True)
        for start in starts:
            assert _agree(lines[start:]), (str(path), start + 1)
            compared += 1
    assert compared > 20_000, compared  # the stdlib alone has more: a broken walk must not pass


def test_install_changes_what_getsource_uses_and_nothing_it_returns() -> None:
    def sample(x):
        # a comment the block keeps
        return x + 1

    before = inspect.getsource(sample)
    saved = inspect.getblock
    try:
        assert install()
        assert inspect.getblock is fast_getblock
        assert inspect.getsource(sample) == before
    finally:
        inspect.getblock = saved
