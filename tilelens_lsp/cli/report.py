"""Batch output formats of `tilelens-lsp check`: text, JSON (DESIGN §5), SARIF 2.1.0 and GitHub annotations."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tilelens_lsp import __version__
from tilelens_lsp.model import CODE_TITLES, README_URL, SEVERITY, Diagnostic, FileResult, code_url

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


_SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}

# What each code means and what to do about it: SARIF `fullDescription` and `help` (GitHub shows the
# help beside each alert). Kept in step with the README's "Diagnostic codes" section.
RULE_HELP = {
    "TL001": ("Some mask-true lane of some program provably reads or writes outside the storage of its "
              "pointer argument for the declared launch.",
              "Mask the access (`mask=offs < n`) or size the grid so every program stays inside the "
              "tensor. The message names a witness: the program id, the lane, the loop iteration and "
              "the element that falls outside the storage."),
    "TL002": ("Only a bound of the access is known (for example the mask depends on loaded data), and "
              "that bound leaves the storage of the pointer argument.",
              "Check that the data-dependent mask or index really keeps the access inside the tensor; "
              "declare value ranges of index tensors (`i32[N].values(0, M)`) to get an exact answer, or "
              "suppress the line with `# tilelens: ignore[TL002]` once you have checked it."),
    "TL003": ("An integer operation of 32 bits or fewer that feeds an address gives a value outside its "
              "width for the declared launch, for example `pid * stride` past 2**31 - 1.",
              "Compute the offset in 64 bits: cast the program id or row index first "
              "(`pid.to(tl.int64) * stride`). The message names the overflowing value and the program "
              "that computes it."),
    "TL004": ("The access stays inside its argument's storage but touches elements the declared view does "
              "not cover (a slice of a larger tensor read past its own extent): memory-safe, so no "
              "sanitizer sees it, but it reads or writes a neighbour's data.",
              "Mask the access by the view's own extent (the slice's width, not the parent's). The message "
              "names the program, lane and element outside the view."),
    "TL005": ("One program stores an element without an atomic and another program of the same launch loads "
              "or stores that element without an atomic; programs run in no fixed order, so the result "
              "depends on scheduling.",
              "Give each program its own output elements (check the grid and the tile strides), or combine "
              "partial results with an atomic (`tl.atomic_add`) as split-K reductions do. The message names "
              "the element and both programs and lines."),
    "TL006": ("A plain store and another plain access (a store of another lane or program, or a load of "
              "another program) may touch one element for some values in the declared ranges: their "
              "footprints are bounds built from loaded indices (a histogram without atomics, a scatter). "
              "Also two lanes of one store that write one element with values from loaded data.",
              "Use an atomic (`tl.atomic_add`) where the indices can repeat; if they never do (a "
              "permutation, unique slots), suppress with `# tilelens: ignore[TL006]`. The message names the "
              "element, both programs or lanes and lines."),
    "TL010": ("Triton could not compile the kernel for the declared launch, or the module failed to "
              "import in the analysis worker.",
              "Read the compile error at the line Triton names; for an import error install the missing "
              "package into the Python that runs the worker (setting `interpreter`)."),
    "TL020": ("A `# tilelens:` launch directive (or a launch table in a toml) could not be evaluated: "
              "syntax, an unknown kernel or name, a wrong number of arguments, an unknown dtype.",
              "Fix the directive as the message says; where it suggests a name (\"did you mean\"), "
              "the editor's quick fix applies it. Other launches are still analysed."),
    "TL030": ("Part of the launch was not analysed, and the message names why (the refusal kind, such as "
              "indirect-address or control-flow). A refusal is never a clean verdict.",
              "Nothing is wrong with the kernel; tilelens could not model it. Declaring value ranges "
              "for index tensors (`.values(LO, HI)`) removes indirect-address refusals."),
    "TL040": ("The installed Triton release is not one tilelens has been tested with.",
              "Install a tested Triton release, or set TILELENS_IR_ALLOW_UNTESTED_TRITON=1 to analyse "
              "anyway."),
    "TL050": ("The analysis worker crashed, ran past its timeout or out of memory, or one IR client "
              "failed on one launch.",
              "Raise the worker timeout (`workerTimeout`, `check --timeout`) or memory limit "
              "(`memoryLimitMb`) for very large launches; report a crash with the file that causes it."),
    "TL060": ("A `# tilelens: ignore` comment silences nothing on its line: the codes it names are not "
              "reported there.",
              "Remove the comment, or the codes it names that no longer occur."),
    "TL100": ("A `@triton.jit` kernel in the file has no declared launch, so it was not analysed.",
              "Declare an example launch in a comment, e.g. `# tilelens: my_kernel[(4,)](fp32[4096], 4096, "
              "BLOCK=1024)`, or in a toml launch table: `tilelens-lsp suggest FILE` prints one that compiles "
              "for each such kernel, and `tilelens-lsp capture -- COMMAND` records the launches a real run makes."),
}


def _rule(code: str) -> dict[str, Any]:
    full, fix = RULE_HELP[code]
    title = CODE_TITLES[code]
    return {
        "id": code, "name": title.title().replace(" ", "").replace("-", ""),
        "shortDescription": {"text": title},
        "fullDescription": {"text": full},
        "help": {"text": f"{full} {fix}",
                 "markdown": f"**{code}: {title}** ({SEVERITY[code]})\n\n{full}\n\n**How to fix.** {fix}\n\n"
                             f"[Documentation]({code_url(code)})"},
        "helpUri": code_url(code),
        "defaultConfiguration": {"level": _SARIF_LEVEL[SEVERITY[code]]},
        "properties": {"tags": ["triton", "gpu"] + (["correctness"] if SEVERITY[code] == "error" else [])},
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
    rules = [_rule(code) for code in sorted(SEVERITY)]
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    sarif_results = []
    for result in results:
        seen: dict[str, int] = {}
        for diag, kernel in _with_kernels(result):
            path = diagnostic_path(result, diag)
            key = fingerprint(diag.code, path, kernel, diag.message)
            seen[key] = seen.get(key, 0) + 1
            entry: dict[str, Any] = {
                "ruleId": diag.code, "ruleIndex": index[diag.code], "level": _SARIF_LEVEL[diag.severity],
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
