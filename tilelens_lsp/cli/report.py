"""Batch output formats of `tilelens-lsp check`: text, JSON, SARIF 2.1.0 and GitHub annotations.

Every finding names the launches it came from (kernel, config, and the directive or toml line that
declares it); identical findings of several launches are one finding listing them all."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from tilelens_lsp import __version__
from tilelens_lsp.diagnostics import CODES, README_URL, SARIF_LEVEL
from tilelens_lsp.model import Diagnostic, FileResult, LaunchResult


def diagnostic_path(result: FileResult, diag: Diagnostic) -> str:
    """The file `diag.line` refers to: its innermost frame's (a helper in another file), else the result's."""
    if diag.stack and diag.stack[0].path and (diag.stack[0].line, diag.stack[0].column) == (diag.line, diag.column):
        return diag.stack[0].path
    return result.path


@dataclass(frozen=True)
class Finding:
    """One diagnostic as the batch formats report it: the launches that all gave it, identical in code,
    place and message, are listed on it once (none for a file-level diagnostic such as an import error)."""

    path: str
    diag: Diagnostic
    launches: tuple[LaunchResult, ...] = ()


def findings(results: list[FileResult], hints: bool = True) -> list[Finding]:
    """Every diagnostic once, in file then line order; identical ones of several launches merged."""
    order: list[tuple] = []
    merged: dict[tuple, list] = {}
    for result in results:
        items = [(d, None) for d in result.diagnostics] + [
            (d, launch) for launch in result.launches for d in launch.diagnostics
        ]
        for diag, launch in sorted(items, key=lambda x: (x[0].line, x[0].column, x[0].code)):
            if diag.severity == "hint" and not hints:
                continue
            path = diagnostic_path(result, diag)
            key = (path, diag.line, diag.column, diag.code, diag.severity, diag.message)
            if key not in merged:
                merged[key] = [path, diag, []]
                order.append(key)
            if launch is not None and launch not in merged[key][2]:
                merged[key][2].append(launch)
    return [Finding(merged[k][0], merged[k][1], tuple(merged[k][2])) for k in order]


LABEL_KEYS = 4  # config entries a launch's label shows (JSON has them all)


def launch_label(launch: LaunchResult, kernel: bool = True) -> str:
    """`kernel[K=V] at path:line`: the declaration (directive or toml table) and the config's integer
    entries (tile sizes: what tells the configs of one launch apart), at most LABEL_KEYS of them; flags,
    strings and floats are the declaration's, which its path:line names."""
    sizes = [(k, v) for k, v in launch.config.items() if isinstance(v, int) and not isinstance(v, bool)]
    shown = [f"{k}={v}" for k, v in sizes[:LABEL_KEYS]]
    if len(sizes) > LABEL_KEYS:
        shown.append(f"+{len(sizes) - LABEL_KEYS}")
    config = f"[{', '.join(shown)}]" if shown else ""
    where = f"{launch.origin.path}:{launch.origin.line}" if launch.origin is not None else f"line {launch.line}"
    return f"{launch.kernel if kernel else ''}{config} at {where}".lstrip()


def launches_note(launches: tuple[LaunchResult, ...]) -> str:
    """` (launch: ...)` or ` (3 launches of k: ...; ...)`, every launch named; empty when none."""
    if not launches:
        return ""
    if len(launches) == 1:
        return f" (launch: {launch_label(launches[0])})"
    kernels = {launch.kernel for launch in launches}
    if len(kernels) == 1:
        return (
            f" ({len(launches)} launches of {launches[0].kernel}: "
            + "; ".join(launch_label(launch, kernel=False) for launch in launches)
            + ")"
        )
    return f" ({len(launches)} launches: " + "; ".join(launch_label(launch) for launch in launches) + ")"


def text_lines(results: list[FileResult], hints: bool = True) -> list[str]:
    lines = []
    for f in findings(results, hints):
        where = f"{f.path}:{f.diag.line}:{f.diag.column}"
        # a toml table's diagnostic names its place in its message (for an editor showing it in the
        # kernel file); the line says it already
        message = f.diag.message.removeprefix(f"{where}: ")
        lines.append(f"{where}: {f.diag.severity}: {message}{launches_note(f.launches)} [{f.diag.code}]")
    return lines


def json_document(
    results: list[FileResult],
    triton: str,
    target: str,
    absolute: list[str] | None = None,
    summary: dict[str, Any] | None = None,
) -> dict[str, Any]:
    files = []
    for i, result in enumerate(results):
        data = result.to_json()
        data.pop("sources", None)  # the editor's reason to re-analyse, not a verdict: no part of the report
        if absolute is not None and absolute[i]:
            data["absolute_path"] = absolute[i]
        files.append(data)
    doc: dict[str, Any] = {
        "tool": "tilelens-lsp",
        "version": __version__,
        "triton": triton,
        "target": target,
        "files": files,
    }
    if summary is not None:
        doc["summary"] = summary
    return doc


def _rule(code: str) -> dict[str, Any]:
    """The SARIF rule of `code`, from the table of codes (diagnostics.py)."""
    c = CODES[code]
    return {
        "id": code,
        "name": c.title.title().replace(" ", "").replace("-", ""),
        "shortDescription": {"text": c.title},
        "fullDescription": {"text": c.description},
        "help": {
            "text": f"{c.description} {c.fix}",
            "markdown": f"**{code}: {c.title}** ({c.severity})\n\n{c.description}\n\n**How to fix.** "
            f"{c.fix}\n\n[Documentation]({c.url})",
        },
        "helpUri": c.url,
        "defaultConfiguration": {"level": c.sarif_level},
        "properties": {"tags": ["triton", "gpu"] + (["correctness"] if c.severity == "error" else [])},
    }


def fingerprint(code: str, path: str, kernel: str | None, message: str) -> str:
    """Stable across edits elsewhere in the file: the finding's code, file, kernel and message (which
    names the witness, not the line), never its line number."""
    return hashlib.sha256("\0".join((code, path, kernel or "", message)).encode("utf-8")).hexdigest()[:32]


def _launch_json(launch: LaunchResult) -> dict[str, Any]:
    return {
        "kernel": launch.kernel,
        "config": launch.config,
        "engine": launch.engine,
        "origin": launch.origin.to_json() if launch.origin is not None else None,
    }


def sarif_document(
    results: list[FileResult], triton: str, target: str, summary: dict[str, Any] | None = None
) -> dict[str, Any]:
    rules = [_rule(code) for code in sorted(CODES)]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    sarif_results = []
    seen: dict[str, int] = {}
    for f in findings(results):
        diag, path = f.diag, f.path
        kernel = f.launches[0].kernel if f.launches else None
        key = fingerprint(diag.code, path, kernel, diag.message)
        seen[key] = seen.get(key, 0) + 1
        entry: dict[str, Any] = {
            "ruleId": diag.code,
            "ruleIndex": index[diag.code],
            "level": SARIF_LEVEL[diag.severity],
            "message": {"text": diag.message + launches_note(f.launches)},
            "locations": [_location(path, diag.line, diag.column)],
            "partialFingerprints": {"tilelensFinding/v1": f"{key}:{seen[key]}"},
        }
        related = []
        if len(diag.stack) > 1:
            related = [
                {
                    **_location(fr.path, fr.line, fr.column),
                    "message": {"text": "called from here" if i else "innermost frame"},
                }
                for i, fr in enumerate(diag.stack)
            ]
        related += [
            {
                **_location(launch.origin.path, launch.origin.line, launch.origin.column),
                "message": {"text": f"launch {launch_label(launch)}"},
            }
            for launch in f.launches
            if launch.origin is not None
        ]
        if related:
            entry["relatedLocations"] = [{**r, "id": i} for i, r in enumerate(related)]
        properties: dict[str, Any] = {}
        if diag.witness is not None:
            properties["witness"] = diag.witness.to_json()
        if f.launches:
            properties["launches"] = [_launch_json(launch) for launch in f.launches]
        if properties:
            entry["properties"] = properties
        sarif_results.append(entry)
    run_properties: dict[str, Any] = {"triton": triton, "target": target}
    if summary is not None:
        run_properties["summary"] = summary
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": "tilelens-lsp", "version": __version__, "informationUri": README_URL, "rules": rules}
                },
                "properties": run_properties,
                "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the workspace root"}}},
                "results": sarif_results,
            }
        ],
    }


def _location(path: str, line: int, column: int) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": path, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": max(1, line), "startColumn": max(1, column)},
        }
    }


def dumps(doc: dict[str, Any]) -> str:
    """The document as JSON indented by two spaces, except that an object or array holding no object
    is written on one line: each access (with its element intervals) and each stack frame is one line.
    Most of the bytes then go through json's C encoder: a whole-corpus check's document took 1.3 s to
    write fully indented (56 MB, an interval pair over four lines) and takes 0.4 s (15 MB)."""
    out: list[str] = []
    _write(doc, 0, out)
    return "".join(out)


def _write(value: Any, depth: int, out: list[str]) -> None:
    # an empty object or array counts as one line here too: `all` of nothing, no item to look at
    one_line = all(map(_flat, value.values())) if isinstance(value, dict) else _flat(value)
    if one_line:
        out.append(json.dumps(value))
        return
    pad = "\n" + "  " * (depth + 1)
    if isinstance(value, dict):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            # json writes a key that is no string (a number, a bool, None) as its JSON text, quoted
            out.append(("," if i else "") + pad + json.dumps(key if isinstance(key, str) else json.dumps(key)) + ": ")
            _write(item, depth + 1, out)
        out.append("\n" + "  " * depth + "}")
    else:
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + pad)
            _write(item, depth + 1, out)
        out.append("\n" + "  " * depth + "]")


def _flat(value: Any) -> bool:
    """No object anywhere in `value`: a scalar, or arrays of scalars and arrays."""
    if isinstance(value, dict):
        return False
    if not isinstance(value, (list, tuple)):
        return True
    stack = [value]
    while stack:
        for item in stack.pop():
            if isinstance(item, dict):
                return False
            if isinstance(item, (list, tuple)):
                stack.append(item)
    return True


# ---------------------------------------------------------------- GitHub Actions

_GITHUB_LEVEL = {"error": "error", "warning": "warning", "information": "notice", "hint": "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_lines(results: list[FileResult]) -> list[str]:
    """Workflow commands (`::error file=...,line=...,col=...,title=TLxxx::message`) that GitHub Actions
    turns into annotations on the diff; hints are left out (they are not findings)."""
    lines = []
    for f in findings(results, hints=False):
        diag = f.diag
        props = [f"file={_escape_property(f.path)}", f"line={max(1, diag.line)}", f"col={max(1, diag.column)}"]
        if diag.end_line and diag.end_line > diag.line:
            props.append(f"endLine={diag.end_line}")
        props.append(f"title={_escape_property(diag.code)}")
        lines.append(
            f"::{_GITHUB_LEVEL[diag.severity]} {','.join(props)}::"
            f"{_escape_data(diag.message + launches_note(f.launches) + ' [' + diag.code + ']')}"
        )
    return lines
