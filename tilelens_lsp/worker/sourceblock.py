"""`inspect.getblock` answered from CPython's C tokenizer: the same lines, a fraction of the time.

Every `@triton.jit` asks `inspect.getsourcelines` for its function's source, and on Python 3.11 that
runs the pure-Python tokenizer over the whole function: a third of `import flag_gems` and a quarter
of `import fla.ops` in a worker that has imported torch already (650 and 417 kernels). The worker
imports such packages on every first analysis of one of their modules, so it installs this.

The answer is `inspect.BlockFinder`'s own: its `tokeneater` is fed the C tokenizer's tokens, with
the two things that stream lacks put back where the pure-Python tokenizer has them: a COMMENT token
for each comment-only line (NL tokens change nothing in a BlockFinder), and the column at which an
INDENT ends (the C tokenizer reports -1). Whatever else could differ falls back to the original:
any error of the C tokenizer, a block that runs to the end of the text, and every Python but 3.11
(3.12 tokenizes in C already; other BlockFinders were not compared).
`tests/unit/worker/test_sourceblock.py` compares both on every function and class of the standard
library and of Triton.
"""

from __future__ import annotations

import inspect
import os
import sys
import tokenize
from typing import Callable

_ORIGINAL: Callable[[list[str]], list[str]] = inspect.getblock
_BLANKS = " \t\f"


def fast_getblock(lines: list[str]) -> list[str]:
    """What `inspect.getblock(lines)` returns."""
    try:
        import _tokenize  # CPython's C tokenizer (3.11: no COMMENT or NL tokens)
    except ImportError:
        return _ORIGINAL(lines)
    finder = inspect.BlockFinder()
    try:
        tokens = _tokenize.TokenizerIter("".join(lines))
        if _header(finder, tokens, lines):
            _body(finder, tokens, lines)
    except inspect.EndOfBlock:
        return lines[: finder.last]
    except Exception:  # noqa: BLE001 - the C tokenizer refused what the Python one may take: ask it
        return _ORIGINAL(lines)
    return _ORIGINAL(lines)  # the text ended inside the block: the original says how (it may raise)


def _header(finder: inspect.BlockFinder, tokens, lines: list[str]) -> bool:
    """Feed every token, comments included, up to the body's first INDENT; True once there."""
    eat = finder.tokeneater
    row = 1  # the next line that may hold a comment-only line not yet fed
    for string, kind, srow, erow, scol, ecol, line in tokens:
        # comment-only lines come before this token: before a DEDENT (or the end) on their own row
        last = srow if kind in (tokenize.DEDENT, tokenize.ENDMARKER) else srow - 1
        while row <= last:
            _comment(eat, lines, row)
            row += 1
        if kind == tokenize.INDENT:
            scol, ecol = 0, _indent(line)
        eat(kind, string, (srow, scol), (erow, ecol), line)
        row = max(row, erow + 1)
        if finder.started and finder.indent >= 1:
            return True
    return False


def _body(finder: inspect.BlockFinder, tokens, lines: list[str]) -> None:
    """Inside the body only NEWLINE, INDENT and DEDENT change a BlockFinder (any other token at
    indent 1 or more does nothing), and a comment counts only when no NEWLINE follows it before
    the block's last DEDENT: so just the comment-only lines between the last NEWLINE and that
    DEDENT are fed."""
    eat = finder.tokeneater
    row = 1
    for string, kind, srow, erow, scol, ecol, line in tokens:
        if kind == tokenize.NEWLINE:
            eat(kind, string, (srow, scol), (erow, ecol), line)
            row = erow + 1
        elif kind == tokenize.INDENT:
            eat(kind, string, (srow, 0), (erow, _indent(line)), line)
        elif kind == tokenize.DEDENT:
            if finder.indent == 1:  # this one ends the block
                for r in range(row, srow + 1):
                    _comment(eat, lines, r)
            eat(kind, string, (srow, scol), (erow, ecol), line)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(_BLANKS))


def _comment(eat: Callable, lines: list[str], row: int) -> None:
    """Feed the COMMENT token of line `row` (1-based) when it holds nothing but a comment."""
    if row > len(lines):
        return
    line = lines[row - 1]
    col = _indent(line)
    if line[col : col + 1] == "#":
        text = line[col:].rstrip("\r\n")
        eat(tokenize.COMMENT, text, (row, col), (row, col + len(text)), line)


def install() -> bool:
    """Make `inspect.getsourcelines` (and so `@triton.jit`) use `fast_getblock` in this process;
    False where it is not used (see the module's docstring)."""
    if sys.version_info[:2] != (3, 11) or os.environ.get("TILELENS_SOURCEBLOCK", "1") == "0":  # "0": to measure without
        return False
    try:
        import _tokenize  # noqa: F401
    except ImportError:
        return False
    inspect.getblock = fast_getblock  # type: ignore[assignment]  # same contract, one overload used
    return True
