"""Batch output formats of `tilelens-lsp check`: text, JSON (DESIGN §5) and SARIF 2.1.0."""

from __future__ import annotations

import json
from typing import Any

from tilelens_lsp import __version__
from tilelens_lsp.model import CODE_TITLES, SEVERITY, Diagnostic, FileResult

README_URL = "https://github.com/tilelens/tilelens-lsp/blob/main/README.md"


def code_url(code: str) -> str:
    return f"{README_URL}#{code.lower()}"


def diagnostic_path(result: FileResult, diag: Diagnostic) -> str:
    """The file `diag.line` refers to: its innermost frame's (a helper in another file), else the result's."""
    if diag.stack and diag.stack[0].path and (diag.stack[0].line, diag.stack[0].column) == (diag.line, diag.column):
        return diag.stack[0].path
    return result.path


def text_lines(results: list[FileResult]) -> list[str]:
    lines = []
    for result in results:
        for diag in sorted(result.all_diagnostics(), key=lambda d: (d.line, d.column, d.code)):
            lines.append(f"{diagnostic_path(result, diag)}:{diag.line}:{diag.column}: {diag.severity}: {diag.message} [{diag.code}]")
    return lines


def json_document(results: list[FileResult], triton: str, target: str) -> dict[str, Any]:
    files = []
    for result in results:
        data = result.to_json()
        files.append(data)
    return {"tool": "tilelens-lsp", "version": __version__, "triton": triton, "target": target, "files": files}


_SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def sarif_document(results: list[FileResult], triton: str, target: str) -> dict[str, Any]:
    rules = [{
        "id": code, "name": CODE_TITLES[code].title().replace(" ", "").replace("-", ""),
        "shortDescription": {"text": CODE_TITLES[code]},
        "helpUri": code_url(code),
        "defaultConfiguration": {"level": _SARIF_LEVEL[SEVERITY[code]]},
    } for code in sorted(SEVERITY)]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    sarif_results = []
    for result in results:
        for diag in result.all_diagnostics():
            entry: dict[str, Any] = {
                "ruleId": diag.code, "ruleIndex": index[diag.code], "level": _SARIF_LEVEL[diag.severity],
                "message": {"text": diag.message},
                "locations": [_location(diagnostic_path(result, diag), diag.line, diag.column)],
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
