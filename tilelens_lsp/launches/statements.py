"""One directive's statements run: `NAME = expr` bindings and `KERNEL[GRID](ARGS)` launches → `LaunchSpec`s.

The text of one `# tilelens:` block (or one toml string) is parsed with `ast` and each statement
evaluated by the whitelist evaluator; every bad part becomes a `DirectiveError` located in the file.
Where the text came from (comments, toml) is the caller's business, given as `locate`.
"""

from __future__ import annotations

import ast
import difflib
import re
from typing import Any, Callable, Mapping

from tilelens_lsp.launches.evaluator import NODE_WORDS, Evaluator, call_name
from tilelens_lsp.launches.specs import (
    MAX_DIRECTIVE_CHARS,
    RESERVED,
    EvalError,
    Failed,
    GridLambda,
    as_grid,
    kind_of,
    to_arg,
)
from tilelens_lsp.model import DirectiveError, LaunchSpec
from tilelens_lsp.textlines import split_lines

_STATEMENT_FORMS = "`NAME = expr` or `KERNEL[GRID](ARGS)`"


Locate = Callable[[int, int], tuple[int, int]]  # (1-based line in text, 0-based char col) → file (line, col)


class Brackets:
    """Brackets left open, fed one line at a time, so a directive's continuation lines are scanned
    once each (re-scanning the whole block per added line was quadratic in the block's size)."""

    _PAIRS = {"(": ")", "[": "]", "{": "}"}

    def __init__(self) -> None:
        self.stack: list[tuple[str, int, int]] = []
        self.mismatched = False
        self.lineno = 0

    def feed(self, line: str) -> None:
        self.lineno += 1
        if self.mismatched:
            return
        quote, i = "", 0
        while i < len(line):
            c = line[i]
            if quote:
                if c == "\\":
                    i += 1
                elif c == quote:
                    quote = ""
            elif c in "'\"":
                quote = c
            elif c == "#":
                break
            elif c in self._PAIRS:
                self.stack.append((c, self.lineno, i))
            elif c in ")]}":
                if not self.stack or self._PAIRS[self.stack[-1][0]] != c:
                    self.mismatched = True  # the parser says which
                    return
                self.stack.pop()
            i += 1

    def innermost(self) -> tuple[str, int, int] | None:
        return None if self.mismatched or not self.stack else self.stack[-1]


def _unclosed(text: str) -> tuple[str, int, int] | None:
    """The innermost bracket left open in `text` (char, 1-based line, 0-based col), if any."""
    brackets = Brackets()
    for line in text.split("\n"):
        brackets.feed(line)
    return brackets.innermost()


def _source_of(text: str, node: ast.AST) -> str:
    segment = ast.get_source_segment(text, node) or ""
    joined = " ".join(part.strip() for part in segment.splitlines())
    return re.sub(r"\s+([)\]}])", r"\1", re.sub(r"([(\[{])\s+", r"\1", joined))


def _bind(stmt: ast.Assign, ev: Evaluator, env: dict[str, Any]) -> None:
    if len(stmt.targets) != 1:
        raise EvalError("bind one name at a time: NAME = expr", stmt)
    target = stmt.targets[0]
    names: list[ast.Name] = []
    for n in target.elts if isinstance(target, ast.Tuple) else [target]:
        if not isinstance(n, ast.Name):
            raise EvalError("only plain names can be bound: NAME = expr", n)
        if n.id in RESERVED:
            raise EvalError(f"'{n.id}' is reserved in directives (a dtype or function name): choose another name", n)
        names.append(n)
    value = ev.eval(stmt.value)
    if isinstance(target, ast.Tuple):
        if not isinstance(value, tuple) or len(value) != len(names):
            raise EvalError(f"cannot unpack {kind_of(value)} into {len(names)} names", stmt.value)
        env.update({n.id: v for n, v in zip(names, value)})
    else:
        env[names[0].id] = value


def _assigned_names(stmt: ast.stmt) -> list[str]:
    if not isinstance(stmt, ast.Assign):
        return []
    out = []
    for t in stmt.targets:
        for n in t.elts if isinstance(t, ast.Tuple) else [t]:
            if isinstance(n, ast.Name):
                out.append(n.id)
    return out


class _LaunchErrors(Exception):
    """Every bad part of one launch (grid, each argument), reported together."""

    def __init__(self, errors: list[EvalError]) -> None:
        super().__init__(errors[0].message)
        self.errors = errors


def _launch(call: ast.Call, ev: Evaluator, known: set[str] | None, line: int, text: str, origin: str) -> LaunchSpec:
    func = call.func
    if isinstance(func, ast.Name):
        error = EvalError(f"launch of '{func.id}' has no grid: write {func.id}[GRID](ARGS)", call)
        error.kernel = func.id
        raise error
    if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name)):
        raise EvalError(f"expected a launch KERNEL[GRID](ARGS), got a call of '{call_name(func)}'", call)
    kernel = func.value.id
    errors: list[EvalError] = []

    def report(e: EvalError) -> None:
        e.kernel = kernel
        if all(e.message != seen.message for seen in errors):  # one report per distinct problem
            errors.append(e)

    def attempt(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except EvalError as e:
            report(e)
            return None

    if known and kernel not in known:
        close = difflib.get_close_matches(kernel, sorted(known), 1)
        guess = f"; did you mean '{close[0]}'?" if close else ""
        report(EvalError(f"unknown kernel '{kernel}' (kernels in this file: {', '.join(sorted(known))}){guess}", func.value))
    grid = attempt(lambda: _grid(ev.eval(func.slice), func.slice))
    if any(k.arg is None for k in call.keywords):
        report(EvalError("'**' unpacking is not allowed in a launch", call))

    def evaluated(node: ast.expr) -> Any:
        return attempt(lambda: to_arg(ev.eval(node), node))

    args = [evaluated(a) for a in call.args]
    kwargs = [(k.arg, evaluated(k.value)) for k in call.keywords]
    if errors:
        raise _LaunchErrors(errors)
    # every keyword has its name here: a '**' (no name) was reported above
    named = tuple((name, value) for name, value in kwargs if name is not None)
    return LaunchSpec(
        kernel=kernel,
        line=line,
        args=tuple(args),
        kwargs=named,
        grid=grid[0],
        grid_expr=grid[1],
        grid_env=grid[2],
        source=_source_of(text, call),
        origin=origin,
    )


def _grid(value: Any, node: ast.AST) -> tuple[tuple[int, ...] | None, str | None, tuple]:
    """(grid, grid_expr, grid_env) for a launch."""
    if isinstance(value, GridLambda):
        return value.grid, value.body or None, value.env
    return as_grid(value, node), None, ()


def _describe_statement(stmt: ast.stmt) -> str:
    if isinstance(stmt, ast.Expr):
        if isinstance(stmt.value, ast.Call):
            return "a launch"
        return NODE_WORDS.get(type(stmt.value).__name__, "an expression")
    if isinstance(stmt, ast.Assign):
        return "a binding"
    return f"a '{type(stmt).__name__}' statement"


def _syntax_message(e: SyntaxError) -> str:
    msg = e.msg or "invalid syntax"
    if msg == "invalid syntax":
        msg += f": expected {_STATEMENT_FORMS}"
    return f"syntax error: {msg}"


def run_statements(
    text: str,
    env: dict[str, Any],
    *,
    locate: Locate,
    end_line: int,
    origin: str = "comment",
    known_kernels: set[str] | None = None,
    future: Mapping[str, int] | None = None,
    mode: str = "any",
) -> tuple[list[LaunchSpec], list[DirectiveError]]:
    """Run the bindings and launches of one directive (or one toml string) against `env`.

    `mode` is `any`, `bindings` (a toml `let`) or `launch` (a toml `launch`: exactly one launch).
    Bindings update `env` in place; a failed binding poisons its names.
    """
    launches: list[LaunchSpec] = []
    errors: list[DirectiveError] = []
    lines = split_lines(text)

    def fail(message: str, lineno: int = 1, col: int = 0, kernel: str | None = None) -> None:
        line, column = locate(lineno, col)
        errors.append(DirectiveError(line, column, message, max(end_line, line), kernel))

    def fail_at(e: EvalError, default: ast.stmt) -> None:
        # the error's node where it has a position (not every ast.AST does), else the statement's
        at = getattr(e.node, "lineno", None)
        if at:
            lineno, col_offset = at, getattr(e.node, "col_offset", 0)
        else:
            lineno, col_offset = default.lineno, default.col_offset
        lineno = min(max(lineno, 1), len(lines))
        prefix = lines[lineno - 1].encode()[:col_offset]
        col = len(prefix.decode("utf-8", "ignore"))  # ast columns are UTF-8 byte offsets
        fail(e.message, lineno, col, e.kernel)

    if len(text) > MAX_DIRECTIVE_CHARS:
        fail(f"directive too long ({len(text)} characters; at most {MAX_DIRECTIVE_CHARS})")
        return launches, errors
    tree = _parse(text, origin, fail)
    if tree is None:
        return launches, errors
    if mode == "launch" and (len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr)):
        fail("`launch` must hold exactly one KERNEL[GRID](ARGS) expression (put bindings in `let`)")
        return launches, errors
    ev = Evaluator(env, source=text, future=future)
    for stmt in tree.body:
        try:
            if isinstance(stmt, ast.Assign) and mode != "launch":
                _bind(stmt, ev, env)
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and mode != "bindings":
                line = locate(stmt.lineno, 0)[0]
                launches.append(_launch(stmt.value, ev, known_kernels, line, text, origin))
            else:
                forms = {"bindings": "`NAME = expr` bindings", "launch": "one `KERNEL[GRID](ARGS)`"}
                raise EvalError(f"expected {forms.get(mode, _STATEMENT_FORMS)}, got {_describe_statement(stmt)}", stmt)
        except EvalError as e:
            fail_at(e, stmt)
        except _LaunchErrors as e:
            for error in e.errors:
                fail_at(error, stmt)
        except (RecursionError, MemoryError):
            fail_at(EvalError("expression too complex"), stmt)
        except Exception as e:  # noqa: BLE001 - never let one directive stop the others
            fail_at(EvalError(f"internal error reading this directive: {type(e).__name__}: {e}"), stmt)
        else:
            continue
        for name in _assigned_names(stmt):
            env[name] = Failed(locate(stmt.lineno, 0)[0])
    return launches, errors


def _parse(text: str, origin: str, fail: Callable[..., None]) -> ast.Module | None:
    open_ = _unclosed(text)
    if open_ is not None:
        char, lineno, col = open_
        closer = {"(": ")", "[": "]", "{": "}"}[char]
        hint = " (continue a directive on the next line with '# tilelens:')" if origin == "comment" else ""
        fail(f"syntax error: '{char}' is never closed: expected '{closer}'{hint}", lineno, col)
        return None
    try:
        return ast.parse(text, mode="exec")
    except SyntaxError as e:
        fail(_syntax_message(e), e.lineno or 1, max((e.offset or 1) - 1, 0))
    except (RecursionError, MemoryError):
        fail("syntax error: expression nested too deeply")
    except ValueError as e:
        fail(f"syntax error: {e}")
    return None
