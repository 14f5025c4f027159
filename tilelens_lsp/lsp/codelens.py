"""Code lenses above each `@triton.jit` kernel: its launches, configs and verdict, and the per-launch summary.

Pure: from the document text and the last published `FileResult` (None before any) to `CodeLens`
records and summary text. The server owns the commands behind the lenses (`SHOW`, `RERUN`) and when
to ask the client to refresh; nothing here runs an analysis.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from tilelens_lsp.launches.kernels import find_kernels
from tilelens_lsp.lsp.codeactions import DECLARE_LAUNCH
from tilelens_lsp.model import FileResult, LaunchResult
from tilelens_lsp.textlines import split_lines

SHOW = "tilelens.showLaunches"
RERUN = "tilelens.rerun"

# What the session knows about a document without a result.
PENDING, OUTSIDE, NEVER = "pending", "outside", "never"
_NO_RESULT = {
    PENDING: "tilelens: analysing…",
    OUTSIDE: "tilelens: not analysed (outside the workspace folders; see allowOutsideWorkspace)",
    NEVER: "tilelens: not analysed yet (save to analyse)",
}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else ('es' if word.endswith('h') else 's')}"


def verdict(launches: list[LaunchResult]) -> str:
    """`clean`, `2 errors`, `1 error · 1 warning`, `refused: indirect-address`, `compile error`."""

    def distinct(severity: str) -> int:
        return len({(d.code, d.line, d.column) for launch in launches for d in launch.diagnostics if d.severity == severity})

    parts = []
    errors, warnings = distinct("error"), distinct("warning")
    if errors:
        parts.append(_plural(errors, "error"))
    if warnings:
        parts.append(_plural(warnings, "warning"))
    kinds = sorted({d.kind or "unknown" for launch in launches for d in launch.diagnostics if d.code == "TL030"})
    if kinds:
        parts.append(f"refused: {', '.join(kinds)}")
    statuses = {launch.status for launch in launches}
    if "compile-error" in statuses and not errors:
        parts.append("compile error")
    if "crashed" in statuses or any(d.code == "TL050" for launch in launches for d in launch.diagnostics):
        parts.append("crashed or timed out" if not warnings else "worker failure")
    if not parts:
        parts.append("clean" if statuses == {"analyzed"} else ", ".join(sorted(statuses)))
    return " · ".join(parts)


def title(launches: list[LaunchResult]) -> str:
    n_launch = len({launch.line for launch in launches})
    return f"{_plural(n_launch, 'launch')} · {_plural(len(launches), 'config')} · {verdict(launches)}"


def lenses(uri: str, text: str, result: FileResult | None, state: str = NEVER) -> list[types.CodeLens]:
    """Two lenses above each kernel: the verdict (→ per-launch summary) and re-run, or, for a kernel
    without a launch, "declare an example launch" (the command form of TL100's quick fix)."""
    lines = split_lines(text)
    out = []
    for kernel in find_kernels(text):
        launches = [launch for launch in result.launches if launch.kernel == kernel.name] if result else []
        if kernel.is_helper and not launches:
            continue  # a helper is analysed through the kernels that call it
        line = _first_decorator(lines, kernel.line - 1)
        rng = types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=0))
        if result is None:
            label = _NO_RESULT.get(state, _NO_RESULT[NEVER])
        elif not launches:
            label = "tilelens: no launch declared"
        else:
            label = "tilelens: " + title(launches)
        out.append(types.CodeLens(range=rng, command=types.Command(title=label, command=SHOW, arguments=[uri, kernel.name])))
        if result is not None and not launches:  # TL100's fix, one click away
            out.append(
                types.CodeLens(
                    range=rng,
                    command=types.Command(
                        title="declare an example launch", command=DECLARE_LAUNCH, arguments=[uri, kernel.name]
                    ),
                )
            )
            continue
        out.append(types.CodeLens(range=rng, command=types.Command(title="re-run", command=RERUN, arguments=[uri])))
    return out


def _first_decorator(lines: list[str], def_line: int) -> int:
    line = def_line
    while line > 0 and lines[line - 1].lstrip().startswith("@"):
        line -= 1
    return line


# ---------------------------------------------------------------- the summary behind the lens


def summary(result: FileResult | None, kernel: str | None = None) -> dict[str, Any]:
    """Per-launch rows (for a client that shows them itself) and the same as text."""
    if result is None:
        return {"kernel": kernel, "launches": [], "text": "tilelens: this file has not been analysed yet"}
    launches = [launch for launch in result.launches if kernel is None or launch.kernel == kernel]
    rows: list[dict[str, Any]] = []
    for launch in launches:
        rows.append(
            {
                "kernel": launch.kernel,
                "line": launch.line,
                "config": launch.config,
                "status": launch.status,
                "grid": list(launch.grid),
                "verdict": verdict([launch]),
                "diagnostics": [{"code": d.code, "line": d.line, "severity": d.severity} for d in launch.diagnostics],
            }
        )
    if not launches:
        text = f"tilelens: {kernel or 'this file'}: no launch declared"
    else:
        head = f"tilelens: {kernel or result.path}: {title(launches)}"
        body = []
        for row in rows:
            config = ", ".join(f"{k}={v}" for k, v in row["config"].items()) or "no constexprs"
            grid = "×".join(str(g) for g in row["grid"]) or "?"
            found = ", ".join(f"{d['code']} line {d['line']}" for d in row["diagnostics"])
            body.append(
                f"  {row['kernel']} (line {row['line']}) · {config} · grid {grid} · {row['verdict']}"
                + (f" ({found})" if found else "")
            )
        text = "\n".join([head, *body])
    return {"kernel": kernel, "launches": rows, "text": text}
