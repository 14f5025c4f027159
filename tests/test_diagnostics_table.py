"""The one table of codes (tilelens_lsp/diagnostics.py) is what every other place says about a code:
the records' severities and titles, the SARIF rules, the LSP severities, docs/diagnostics.md,
`tilelens-lsp rule`, and the client names VS Code offers. Pure: needs no Triton."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tilelens_lsp import diagnostics, model, settings
from tilelens_lsp.cli import main as cli_main
from tilelens_lsp.cli import report
from tilelens_lsp.diagnostics import CODES

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "diagnostics.md"
CODE_RE = re.compile(r"\bTL\d{3}\b")


def _github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_records_take_severity_and_title_from_the_table():
    assert model.SEVERITY == {c.code: c.severity for c in CODES.values()}
    assert model.CODE_TITLES == {c.code: c.title for c in CODES.values()}
    assert all(c.severity in diagnostics.SEVERITIES for c in CODES.values())
    assert model.Diagnostic("TL006", "m", 3).severity == "warning"  # the data-dependent race: a warning


def test_sarif_rules_are_the_table():
    rules = {r["id"]: r for r in report.sarif_document([], "3.9.0", "cuda:89")["runs"][0]["tool"]["driver"]["rules"]}
    assert sorted(rules) == sorted(CODES)
    for code, c in CODES.items():
        rule = rules[code]
        assert (rule["shortDescription"]["text"], rule["fullDescription"]["text"]) == (c.title, c.description)
        assert rule["help"]["text"] == f"{c.description} {c.fix}"
        assert rule["helpUri"] == c.url == model.code_url(code)
        assert rule["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning"}.get(c.severity, "note")


def test_lsp_severities_are_the_protocols_numbers():
    from lsprotocol import types

    assert {name: types.DiagnosticSeverity(n).name for name, n in diagnostics.LSP_SEVERITY.items()} == {
        "error": "Error",
        "warning": "Warning",
        "information": "Information",
        "hint": "Hint",
    }


def test_the_docs_codes_section_is_generated_from_the_table():
    run = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_diagnostics_docs.py"), "--check"], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    text = DOC.read_text(encoding="utf-8")
    for c in CODES.values():
        assert c.markdown() in text


def test_every_code_link_lands_on_a_heading_of_the_docs():
    anchors = {_github_anchor(m) for m in re.findall(r"^#{1,6} (.+)$", DOC.read_text(encoding="utf-8"), re.M)}
    assert diagnostics.DOCS_URL.endswith("/blob/main/docs/diagnostics.md")  # the file of this repository
    assert [c.code for c in CODES.values() if c.anchor not in anchors] == []


def test_no_document_or_module_names_a_code_the_table_lacks():
    files = [
        ROOT / "README.md",
        ROOT / "ARCHITECTURE.md",
        ROOT / "editors" / "vscode" / "package.json",
        *sorted((ROOT / "docs").glob("*.md")),
        *sorted((ROOT / "tilelens_lsp").rglob("*.py")),
    ]
    unknown = {
        (f.relative_to(ROOT).as_posix(), code)
        for f in files
        if f.exists()
        for code in CODE_RE.findall(f.read_text(encoding="utf-8"))
        if code not in CODES
    }
    assert unknown == set()


def test_vscode_offers_exactly_the_registered_clients():
    from tilelens_lsp.clients import CLIENTS

    prop = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text())["contributes"]["configuration"][
        "properties"
    ]["tilelens.clients"]
    assert tuple(CLIENTS) == settings.ALL_CLIENTS
    assert prop["items"]["enum"] == list(CLIENTS) == prop["default"]


def test_rule_prints_the_codes_documentation(capsys):
    assert cli_main.main(["rule", "tl003"]) == 0
    out = capsys.readouterr().out
    c = CODES["TL003"]
    assert out.startswith("# TL003: integer overflow in address arithmetic (error)\n")
    assert c.description in out and c.fix in out and c.details in out and out.rstrip().endswith(c.url)


def test_rule_all_prints_every_code_once(capsys):
    assert cli_main.main(["rule", "--all"]) == 0
    titles = re.findall(r"^# (TL\d{3}): ", capsys.readouterr().out, re.M)
    assert titles == list(CODES)


@pytest.mark.parametrize(("typed", "suggested"), [("TL01", "TL010"), ("TL0003", "TL003"), ("TL7", None)])
def test_rule_of_an_unknown_code_exits_2_with_a_did_you_mean(capsys, typed, suggested):
    assert cli_main.main(["rule", typed]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and f"unknown code '{typed}'" in captured.err
    if suggested:
        assert "did you mean" in captured.err and suggested in captured.err.split("did you mean")[1].split("?")[0]
    else:
        assert "did you mean" not in captured.err


def test_rule_through_the_installed_command():
    run = subprocess.run([sys.executable, "-m", "tilelens_lsp", "rule", "TL005"], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("# TL005: race between programs (error)")


def test_the_readme_lists_every_code_with_its_severity():
    rows = re.findall(
        r"^\| (TL\d{3}) \| (\w+) \| (.+?) \| (.+?) \|$", (ROOT / "README.md").read_text(encoding="utf-8"), re.M
    )
    assert rows == [(c.code, c.severity, c.title, c.summary) for c in CODES.values()]
