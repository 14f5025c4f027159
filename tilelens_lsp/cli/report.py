"""Batch output formats of `tilelens-lsp check`: text, JSON (docs/cli.md), SARIF 2.1.0 and GitHub annotations."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tilelens_lsp import __version__
from tilelens_lsp.diagnostics import CODES, README_URL, SARIF_LEVEL
from tilelens_lsp.model import Diagnostic, FileResult

def diagnostic_path(result: FileResult, diag: Diagnostic) -> str:
    """The file `diag.line` refers to: its innermost frame's (a helper in another file), else the result's."""
    if diag.stack and diag.stack[0].path and (diag.stack[0].line, diag.stack[0].column) == (diag.line, diag.column):
        return diag.stack[0].path
    return result.path


def text_lines(results: list[FileResult]) -> list[str]:
    lines = []
    for result in results:
        for diag in sorted(result.all_diagnostics(), key=lambda d: (d.line, d.column, d.code)):
            where = f"{diagnostic_path(result, diag)}:{diag.line}:{diag.column}"
            lines.append(f"{where}: {diag.severity}: {diag.message} [{diag.code}]")
    return lines


def json_document(results: list[FileResult], triton: str, target: str) -> dict[str, Any]:
    files = []
    for result in results:
        data = result.to_json()
        files.append(data)
    return {"tool": "tilelens-lsp", "version": __version__, "triton": triton, "target": target, "files": files}


def _rule(code: str) -> dict[str, Any]:
    """The SARIF rule of `code`, from the table of codes (diagnostics.py)."""
    c = CODES[code]
    return {
        "id": code, "name": c.title.title().replace(" ", "").replace("-", ""),
        "shortDescription": {"text": c.title},
        "fullDescription": {"text": c.description},
        "help": {"text": f"{c.description} {c.fix}",
                 "markdown": f"**{code}: {c.title}** ({c.severity})\n\n{c.description}\n\n**How to fix.** "
                             f"{c.fix}\n\n[Documentation]({c.url})"},
        "helpUri": c.url,
        "defaultConfiguration": {"level": c.sarif_level},
        "properties": {"tags": ["triton", "gpu"] + (["correctness"] if c.severity == "error" else [])},
    }


def fingerprint(code: str, path: str, kernel: str | None, message: str) -> str:
    """Stable across edits elsewhere in the file: the finding's code, file, kernel and message (which
    names the witness, not the line), never its line number."""
    return hashlib.sha256("\0".join((code, path, kernel or "", message)).encode("utf-8")).hexdigest()[:32]


def _with_kernels(result: FileResult) -> list[tuple[Diagnostic, str | None]]:
    out: list[tuple[Diagnostic, str | None]] = [(d, None) for d in result.diagnostics]
    for launch in result.launches:
        out.extend((d, launch.kernel) for d in launch.diagnostics)
    return out


def sarif_document(results: list[FileResult], triton: str, target: str) -> dict[str, Any]:
    rules = [_rule(code) for code in sorted(CODES)]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    sarif_results = []
    for result in results:
        seen: dict[str, int] = {}
        for diag, kernel in _with_kernels(result):
            path = diagnostic_path(result, diag)
            key = fingerprint(diag.code, path, kernel, diag.message)
            seen[key] = seen.get(key, 0) + 1
            entry: dict[str, Any] = {
                "ruleId": diag.code, "ruleIndex": index[diag.code], "level": SARIF_LEVEL[diag.severity],
                "message": {"text": diag.message},
                "locations": [_location(path, diag.line, diag.column)],
                "partialFingerprints": {"tilelensFinding/v1": f"{key}:{seen[key]}"},
            }
            if len(diag.stack) > 1:
                entry["relatedLocations"] = [
                    {**_location(f.path, f.line, f.column), "id": i,
                     "message": {"text": "called from here" if i else "innermost frame"}}
                    for i, f in enumerate(diag.stack)]
            if diag.witness is not None:
                entry["properties"] = {"witness": diag.witness.to_json()}
            sarif_results.append(entry)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "tilelens-lsp", "version": __version__,
                                "informationUri": README_URL, "rules": rules}},
            "properties": {"triton": triton, "target": target},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the workspace root"}}},
            "results": sarif_results,
        }],
    }


def _location(path: str, line: int, column: int) -> dict[str, Any]:
    return {"physicalLocation": {
        "artifactLocation": {"uri": path, "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": max(1, line), "startColumn": max(1, column)},
    }}


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2)


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
    for result in results:
        for diag in sorted(result.all_diagnostics(), key=lambda d: (d.line, d.column, d.code)):
            if diag.severity == "hint":
                continue
            props = [f"file={_escape_property(diagnostic_path(result, diag))}", f"line={max(1, diag.line)}",
                     f"col={max(1, diag.column)}"]
            if diag.end_line and diag.end_line > diag.line:
                props.append(f"endLine={diag.end_line}")
            props.append(f"title={_escape_property(diag.code)}")
            lines.append(f"::{_GITHUB_LEVEL[diag.severity]} {','.join(props)}::"
                         f"{_escape_data(diag.message + ' [' + diag.code + ']')}")
    return lines
