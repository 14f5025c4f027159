"""`tilelens-lsp check` in CI: suppression comments, --select/--ignore, GitHub annotations, and SARIF
that validates against the official SARIF 2.1.0 schema (tests/data, with its license note).

The CLI runs as a subprocess; each suppression is checked against a control copy of the same file
with the comments removed, so a test passes only because the comment silenced a real verdict.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from tests.support import FIXTURES, REPO, SAMPLES, line_of
from tilelens_lsp.model import SEVERITY

SCHEMA = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"
TEXT_LINE = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<severity>\w+): "
    r"(?P<message>.*) \[(?P<code>TL\d{3})\]$"
)
GITHUB_LINE = re.compile(
    r"^::(?P<level>error|warning|notice) file=(?P<file>[^,]+),line=(?P<line>\d+),col=(?P<col>\d+)"
    r"(?:,endLine=\d+)?,title=(?P<title>TL\d{3})::(?P<message>.+)$"
)


def check(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def verdicts(run: subprocess.CompletedProcess) -> list[tuple[int, str]]:
    return [(int(m["line"]), m["code"]) for m in map(TEXT_LINE.match, run.stdout.splitlines()) if m]


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ci")
    (root / "pyproject.toml").write_text('[project]\nname = "ci"\n')
    text = (FIXTURES / "suppressed.py").read_text()
    (root / "suppressed.py").write_text(text)
    # The control: the same kernel without any suppression comment, on the same lines.
    control = re.sub(r"  # tilelens: ignore.*$", "", text, flags=re.M)
    control = re.sub(r"^    # tilelens: ignore.*$", "    pass", control, flags=re.M)
    (root / "control.py").write_text(control)
    shutil.copy(SAMPLES / "buggy_kernels.py", root / "buggy.py")
    return root


@pytest.fixture(scope="module")
def suppressed(ws):
    return check("suppressed.py", cwd=ws)


@pytest.fixture(scope="module")
def control(ws):
    return check("control.py", cwd=ws)


def fixture_line(needle: str) -> int:
    return line_of(FIXTURES / "suppressed.py", needle)


# ---------------------------------------------------------------- suppression comments


def test_the_control_copy_has_the_verdicts_the_comments_silence(control):
    lines = [fixture_line(n) for n in ("a = tl.load", "b = tl.load", "c = tl.load", "a + b + c")]
    assert verdicts(control) == [(line, "TL001") for line in lines]
    assert control.returncode == 1


def test_ignore_at_the_end_of_a_line_silences_that_code_there(suppressed):
    assert (fixture_line("a = tl.load"), "TL001") not in verdicts(suppressed)


def test_ignore_alone_on_the_line_above_silences_the_next_line(suppressed):
    assert (fixture_line("b = tl.load"), "TL001") not in verdicts(suppressed)


def test_bare_ignore_silences_every_code_on_its_line(suppressed):
    assert (fixture_line("c = tl.load"), "TL001") not in verdicts(suppressed)


def test_a_suppressed_file_with_no_other_error_exits_0(suppressed):
    assert [code for _, code in verdicts(suppressed)] == ["TL060", "TL060"]
    assert suppressed.returncode == 0


def test_a_code_a_suppression_names_but_never_meets_is_an_unused_suppression(suppressed):
    by_line = {int(m["line"]): m for m in map(TEXT_LINE.match, suppressed.stdout.splitlines()) if m}
    several = by_line[fixture_line("a + b + c")]  # ignore[TL003, TL001]: the TL001 was used
    masked = by_line[fixture_line("mask=offs < n")]  # ignore[TL001] on a masked store
    assert (several["code"], several["severity"]) == ("TL060", "information")
    assert "TL003" in several["message"] and "TL001" not in several["message"]
    assert (masked["code"], "TL001" in masked["message"]) == ("TL060", True)


def test_the_unused_suppression_points_at_the_comment(suppressed):
    line = fixture_line("mask=offs < n")
    m = next(m for m in map(TEXT_LINE.match, suppressed.stdout.splitlines()) if m and int(m["line"]) == line)
    source = (FIXTURES / "suppressed.py").read_text().splitlines()[line - 1]
    assert source[int(m["col"]) - 1 :].startswith("# tilelens: ignore[TL001]")


# ---------------------------------------------------------------- --select / --ignore


@pytest.fixture(scope="module")
def buggy(ws):
    return check("buggy.py", cwd=ws)


def test_select_keeps_only_the_named_codes(ws, buggy):
    assert {"TL001", "TL003"} <= {code for _, code in verdicts(buggy)}
    run = check("buggy.py", "--select", "TL003", cwd=ws)
    assert verdicts(run) == [v for v in verdicts(buggy) if v[1] == "TL003"]


def test_ignore_drops_the_named_codes_and_the_exit_status_follows(ws, buggy):
    run = check("buggy.py", "--ignore", "TL001,TL003", cwd=ws)
    assert verdicts(run) == [v for v in verdicts(buggy) if v[1] not in ("TL001", "TL003")]
    assert (buggy.returncode, run.returncode) == (1, 0)


def test_a_more_specific_select_wins_over_a_prefix_ignore(ws, buggy):
    run = check("buggy.py", "--ignore", "TL0", "--select", "TL001", cwd=ws)
    assert verdicts(run) == [v for v in verdicts(buggy) if v[1] == "TL001"]


def test_an_unknown_code_is_a_usage_error(ws):
    run = check("buggy.py", "--select", "TL9", cwd=ws)
    assert run.returncode == 2 and "TL9" in run.stderr


# ---------------------------------------------------------------- --format github


@pytest.fixture(scope="module")
def github(ws):
    return check("buggy.py", "--format", "github", cwd=ws)


def test_github_format_prints_one_workflow_command_per_finding(github, buggy):
    found = [GITHUB_LINE.match(line) for line in github.stdout.splitlines()]
    assert all(found) and found
    assert [(m["file"], int(m["line"]), m["title"]) for m in found] == [
        ("buggy.py", line, code) for line, code in verdicts(buggy) if SEVERITY[code] != "hint"
    ]
    assert github.returncode == buggy.returncode == 1


def test_github_levels_follow_the_code_severity(github):
    level = {"error": "error", "warning": "warning", "information": "notice"}
    for m in map(GITHUB_LINE.match, github.stdout.splitlines()):
        assert m["level"] == level[SEVERITY[m["title"]]]


def test_github_messages_escape_newlines_and_percent():
    from tilelens_lsp.cli.report import github_lines
    from tilelens_lsp.model import Diagnostic, FileResult

    [line] = github_lines([FileResult("a,b:c.py", (), (Diagnostic("TL010", "100% broken\nsecond line", 3, 1),))])
    assert line == "::error file=a%2Cb%3Ac.py,line=3,col=1,title=TL010::100%25 broken%0Asecond line [TL010]"


# ---------------------------------------------------------------- SARIF


@pytest.fixture(scope="module")
def sarif(ws):
    (ws / "pkg").mkdir(exist_ok=True)
    for name in ("helper_calls.py", "jit_helpers.py"):  # call stacks: relatedLocations
        shutil.copy(FIXTURES / name, ws / "pkg" / name)
    run = check("buggy.py", "suppressed.py", "pkg", "--format", "sarif", cwd=ws)
    return json.loads(run.stdout)


def test_sarif_validates_against_the_official_2_1_0_schema(sarif):
    schema = json.loads(SCHEMA.read_text())
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    validator = jsonschema.Draft4Validator(schema)
    errors = sorted(validator.iter_errors(sarif), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert len(sarif["runs"][0]["results"]) > 3


def test_the_schema_rejects_a_broken_sarif_document(sarif):
    broken = json.loads(json.dumps(sarif))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    del broken["runs"][0]["tool"]["driver"]["name"]
    assert len(list(jsonschema.Draft4Validator(json.loads(SCHEMA.read_text())).iter_errors(broken))) == 2


def test_every_sarif_rule_has_full_description_help_and_help_uri(sarif):
    for rule in sarif["runs"][0]["tool"]["driver"]["rules"]:
        assert rule["fullDescription"]["text"] != rule["shortDescription"]["text"]
        assert rule["help"]["text"] and rule["help"]["markdown"].startswith(f"**{rule['id']}")
        assert rule["helpUri"].endswith("#" + rule["id"].lower())


def test_sarif_results_carry_distinct_partial_fingerprints(sarif):
    prints = [r["partialFingerprints"]["tilelensFinding/v1"] for r in sarif["runs"][0]["results"]]
    assert len(set(prints)) == len(prints)


def test_a_fingerprint_does_not_change_when_lines_move(ws, sarif):
    moved = ws / "moved"
    moved.mkdir(exist_ok=True)
    (moved / "buggy.py").write_text("\n\n\n" + (ws / "buggy.py").read_text())
    (moved / "pyproject.toml").write_text('[project]\nname = "moved"\n')
    again = json.loads(check("buggy.py", "--format", "sarif", cwd=moved).stdout)

    def prints(doc):
        return {
            r["partialFingerprints"]["tilelensFinding/v1"]: r["locations"][0]["physicalLocation"]["region"]["startLine"]
            for r in doc["runs"][0]["results"]
            if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "buggy.py"
        }

    before, after = prints(sarif), prints(again)
    assert before.keys() == after.keys() and before
    assert all(after[k] == before[k] + 3 for k in before)


# ---------------------------------------------------------------- the pre-commit hook


def hook_entry() -> list[str]:
    text = (REPO / ".pre-commit-hooks.yaml").read_text()
    [entry] = re.findall(r"^\s+entry:\s*(.+)$", text, re.M)
    assert re.search(r"^- id: tilelens-check$", text, re.M) and re.search(r"^\s+types: \[python\]$", text, re.M)
    return entry.split()


def test_the_pre_commit_hook_checks_the_changed_kernel_files(ws):
    # pre-commit runs the entry with the changed files appended.
    (ws / "script.py").write_text("print('not a kernel')\n")
    entry = hook_entry()
    assert entry[:2] == ["tilelens-lsp", "check"]
    run = check(*entry[2:], "script.py", "buggy.py", cwd=ws)
    assert [m["path"] for m in map(TEXT_LINE.match, run.stdout.splitlines()) if m] == ["buggy.py"] * 3
    assert run.returncode == 1
    assert "1 file(s)" in run.stderr  # script.py, which declares no launch, was left out


def test_the_pre_commit_hook_starts_nothing_when_no_changed_file_declares_a_launch(ws):
    (ws / "script.py").write_text("print('not a kernel')\n")
    run = check(*hook_entry()[2:], "script.py", cwd=ws)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
