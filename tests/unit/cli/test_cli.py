"""`tilelens-lsp check` as CI runs it: formats, exit codes, toml launches, and no eval of directives.

The CLI runs as a subprocess (it is what is under test); its verdicts must be exactly those of
`analyze_path` in this process, so the details of each launch form are tested in test_pipeline.py.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support import FIXTURES, SAMPLES, line_of
from tilelens_lsp.model import SEVERITY, FileResult
from tilelens_lsp.pipeline import analyze_path

ADD = SAMPLES / "vector_add.py"
TOML_KERNEL = "fill_kernel[(cdiv(N, 32),)](fp32[N], N, BLOCK=32)"
EVIL = "# tilelens: X = __import__('os').system('touch tilelens_pwned')\n"


def check(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def pyproject(n: int, file: str = "kernels/toml_declared.py") -> str:
    return (
        f'[project]\nname = "ws"\n\n[tool.tilelens]\ntarget = "cuda:89"\n\n'
        f'[[tool.tilelens.launch]]\nfile = "{file}"\nlet = "N = {n}"\nlaunch = "{TOML_KERNEL}"\n'
    )


def launch_table(file: str | Path, n: int) -> str:
    return f'[[launch]]\nfile = "{file}"\nlet = "N = {n}"\nlaunch = "{TOML_KERNEL}"\n'


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    """A workspace with every launch form, a pyproject launch, a helper in another file and an evil directive."""
    root = tmp_path_factory.mktemp("ws")
    kernels = root / "kernels"
    kernels.mkdir()
    for name in ("launch_forms.py", "tuned.py", "dtypes.py", "helper_calls.py", "jit_helpers.py", "toml_declared.py"):
        shutil.copy(FIXTURES / name, kernels / name)
    shutil.copy(ADD, kernels / "clean.py")
    (kernels / "evil.py").write_text(EVIL + ADD.read_text())
    (root / "pyproject.toml").write_text(pyproject(100))
    return root


@pytest.fixture(scope="module")
def text_run(ws):
    return check(".", cwd=ws)


@pytest.fixture(scope="module")
def json_run(ws):
    return check(".", "--format", "json", cwd=ws)


@pytest.fixture(scope="module")
def sarif_run(ws):
    return check(".", "--format", "sarif", cwd=ws)


@pytest.fixture(scope="module")
def document(json_run):
    return json.loads(json_run.stdout)


@pytest.fixture(scope="module")
def files(document):
    return {f["path"]: f for f in document["files"]}


@pytest.fixture(scope="module")
def sarif(sarif_run):
    return json.loads(sarif_run.stdout)


# ---------------------------------------------------------------- what is checked


def test_folder_check_finds_every_file_with_a_launch_including_toml_ones(files):
    assert sorted(files) == [
        "kernels/clean.py",
        "kernels/dtypes.py",
        "kernels/evil.py",
        "kernels/helper_calls.py",
        "kernels/launch_forms.py",
        "kernels/toml_declared.py",
        "kernels/tuned.py",
    ]


@pytest.fixture
def computed_afresh(monkeypatch):
    """In-process analyses that neither read nor write the result cache the CLI's worker wrote."""
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    # and analyze_path without a WarmState keeps no result in memory between calls


@pytest.mark.parametrize("name", ["launch_forms.py", "tuned.py", "dtypes.py", "helper_calls.py", "clean.py"])
def test_cli_verdicts_are_those_of_the_in_process_pipeline(files, ws, name, computed_afresh):
    expected = replace(analyze_path(ws / "kernels" / name, ws), sources=())  # the report leaves them out
    assert FileResult.from_json(files[f"kernels/{name}"]) == expected


def test_every_declared_launch_form_is_answered(files):
    statuses = {
        launch["status"] for name in ("kernels/launch_forms.py", "kernels/tuned.py") for launch in files[name]["launches"]
    }
    assert statuses == {"analyzed"}


def test_pyproject_launch_is_checked(files):
    (launch,) = files["kernels/toml_declared.py"]["launches"]
    assert (launch["kernel"], launch["grid"], launch["status"]) == ("fill_kernel", [4, 1, 1], "analyzed")


def test_pyproject_launch_verdict_lands_in_the_kernel_file(files):
    (launch,) = files["kernels/toml_declared.py"]["launches"]
    assert [(d["code"], d["line"]) for d in launch["diagnostics"]] == [
        ("TL001", line_of(FIXTURES / "toml_declared.py", "tl.store(x_ptr + offs, 1.0)"))
    ]


# ---------------------------------------------------------------- no eval


def test_directive_with_a_call_is_a_tl020_on_its_line(text_run):
    assert re.search(r"^kernels/evil\.py:1:\d+: error: .*not allowed.* \[TL020\]$", text_run.stdout, re.M)


def test_directive_with_a_call_never_runs_it(text_run, json_run, sarif_run, ws):
    assert not (ws / "tilelens_pwned").exists() and not (ws / "kernels" / "tilelens_pwned").exists()


# ---------------------------------------------------------------- text


TEXT_LINE = re.compile(
    r"^(?P<path>[\w./]+):(?P<line>\d+):(?P<col>\d+): "
    r"(?P<severity>error|warning|information|hint): .+ \[(?P<code>TL\d{3})\]$"
)


def test_text_lines_read_path_line_col_severity_message_code(text_run):
    lines = text_run.stdout.splitlines()
    assert lines and [line for line in lines if not TEXT_LINE.match(line)] == []


def test_text_has_one_line_per_finding_hints_left_to_one_summary_line(text_run, document):
    """Identical findings of several launches are one line; TL100 hints are one stderr line for all."""
    findings = {
        (f["path"], d["line"], d["column"], d["code"], d["message"])
        for f in document["files"]
        for d in f["diagnostics"] + [d for launch in f["launches"] for d in launch["diagnostics"]]
        if d["severity"] != "hint"
    }
    assert len(text_run.stdout.splitlines()) == len(findings)


def test_text_severity_matches_the_code(text_run):
    assert all(SEVERITY[m["code"]] == m["severity"] for m in map(TEXT_LINE.match, text_run.stdout.splitlines()))


def test_text_names_the_out_of_bounds_store_with_its_witness(text_run):
    line = line_of(FIXTURES / "toml_declared.py", "tl.store(x_ptr + offs, 1.0)")
    assert (
        f"kernels/toml_declared.py:{line}:5: error: out-of-bounds store: program (3, 0, 0), lane [4] "
        f"writes element 100 of x_ptr"
    ) in text_run.stdout


def test_text_verdict_inside_a_helper_names_the_helpers_file(text_run):
    line = line_of(FIXTURES / "jit_helpers.py", "tl.store(ptr + offs, value)")
    assert f"kernels/jit_helpers.py:{line}:5: error: out-of-bounds store" in text_run.stdout


def test_text_summary_goes_to_stderr(text_run):
    assert re.search(
        r"tilelens-lsp: 7 file\(s\), \d+ launch\(es\): \d+ analysed \(\d+ clean, \d+ with findings\), "
        r"\d+ refused, \d+ failed; \d+ error\(s\)",
        text_run.stderr,
    )


# ---------------------------------------------------------------- JSON (docs/cli.md)


def test_json_document_header(document):
    assert {k: type(document[k]).__name__ for k in ("tool", "version", "triton", "target", "files")} == {
        "tool": "str",
        "version": "str",
        "triton": "str",
        "target": "str",
        "files": "list",
    }


def test_json_names_tool_and_target(document):
    assert (document["tool"], document["target"]) == ("tilelens-lsp", "cuda:89")


def test_json_launch_has_the_documented_fields(files):
    launch = files["kernels/clean.py"]["launches"][0]
    assert {"kernel", "line", "config", "status", "accesses", "diagnostics"} <= set(launch)


def test_json_access_has_the_documented_fields(files):
    access = files["kernels/clean.py"]["launches"][0]["accesses"][0]
    assert {"op", "line", "column", "pointer", "dtype", "exact", "elements", "in_bounds"} <= set(access)


def test_json_access_values_for_the_vector_add(files):
    access = files["kernels/clean.py"]["launches"][0]["accesses"][0]
    assert {k: access[k] for k in ("op", "pointer", "dtype", "exact", "elements", "in_bounds")} == {
        "op": "load",
        "pointer": "x_ptr",
        "dtype": "fp32",
        "exact": True,
        "elements": [[0, 98432]],
        "in_bounds": True,
    }


def test_json_diagnostic_has_the_documented_fields(files):
    diag = files["kernels/toml_declared.py"]["launches"][0]["diagnostics"][0]
    assert {"code", "severity", "line", "column", "message", "stack", "witness"} <= set(diag)


def test_json_witness_has_pid_lane_iteration_element(files):
    witness = files["kernels/toml_declared.py"]["launches"][0]["diagnostics"][0]["witness"]
    assert {k: witness[k] for k in ("pid", "lane", "iteration", "element")} == {
        "pid": [3, 0, 0],
        "lane": [4],
        "iteration": None,
        "element": 100,
    }


def test_json_stack_frames_are_portable_path_line_column(files):
    diag = files["kernels/helper_calls.py"]["launches"][0]["diagnostics"][0]
    assert [sorted(f) for f in diag["stack"]] == [["column", "line", "path"]] * 2 and [f["path"] for f in diag["stack"]] == [
        "kernels/jit_helpers.py",
        "kernels/helper_calls.py",
    ]


def test_json_autotune_configs_are_separate_launches(files):
    configs = [
        launch["config"] for launch in files["kernels/tuned.py"]["launches"] if launch["kernel"] == "two_configs_kernel"
    ]
    assert configs == [{"BLOCK": 128}, {"BLOCK": 256}]


def test_json_is_the_only_thing_on_stdout(json_run):
    assert json_run.stdout.lstrip().startswith("{") and json_run.stdout.rstrip().endswith("}")


# ---------------------------------------------------------------- SARIF 2.1.0


def test_sarif_version_and_schema(sarif):
    assert (sarif["version"], sarif["$schema"].endswith("sarif-2.1.0.json")) == ("2.1.0", True)


def test_sarif_driver_declares_a_rule_per_code(sarif):
    driver = sarif["runs"][0]["tool"]["driver"]
    assert (driver["name"], [r["id"] for r in driver["rules"]]) == ("tilelens-lsp", sorted(SEVERITY))


def test_sarif_rules_have_descriptions_and_help(sarif):
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]
    assert all(r["shortDescription"]["text"] and r["helpUri"].startswith("https://") for r in rules)


def test_sarif_has_one_result_per_diagnostic(sarif, text_run):
    assert len(sarif["runs"][0]["results"]) == len(text_run.stdout.splitlines())


def test_sarif_results_have_rule_level_message_and_location(sarif):
    rules = [r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]]
    for result in sarif["runs"][0]["results"]:
        location = result["locations"][0]["physicalLocation"]
        assert result["ruleId"] in rules and rules[result["ruleIndex"]] == result["ruleId"]
        assert result["level"] in ("error", "warning", "note", "none") and result["message"]["text"]
        assert location["artifactLocation"]["uri"].startswith("kernels/") and location["region"]["startLine"] >= 1


def test_sarif_levels_follow_the_code_severity(sarif):
    level = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}
    assert all(r["level"] == level[SEVERITY[r["ruleId"]]] for r in sarif["runs"][0]["results"])


def test_sarif_out_of_bounds_result_points_at_the_store(sarif):
    line = line_of(FIXTURES / "toml_declared.py", "tl.store(x_ptr + offs, 1.0)")
    hits = [
        r
        for r in sarif["runs"][0]["results"]
        if r["ruleId"] == "TL001"
        and r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "kernels/toml_declared.py"
    ]
    assert [h["locations"][0]["physicalLocation"]["region"]["startLine"] for h in hits] == [line]


def test_sarif_helper_verdict_lists_its_call_stack(sarif):
    helper = [
        r
        for r in sarif["runs"][0]["results"]
        if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "kernels/jit_helpers.py"
    ]
    assert helper and all(len(r["relatedLocations"]) >= 2 for r in helper)


# ---------------------------------------------------------------- exit codes


def test_exit_1_on_an_error_verdict(text_run):
    assert text_run.returncode == 1


def test_exit_0_on_a_clean_file(ws):
    assert check("kernels/clean.py", cwd=ws).returncode == 0


def test_exit_2_on_a_bad_flag(ws):
    assert check("--no-such-flag", cwd=ws).returncode == 2


def test_exit_2_on_a_missing_path(ws):
    run = check("kernels/missing.py", cwd=ws)
    assert (run.returncode, "no such file" in run.stderr) == (2, True)


def test_exit_2_on_a_bad_target(ws):
    run = check("kernels/clean.py", "--target", "cuda", cwd=ws)
    assert (run.returncode, "bad target" in run.stderr) == (2, True)


def test_exit_2_on_a_broken_config_file(tmp_path):
    (tmp_path / "broken.toml").write_text('[[launch]]\nfile = "k.py"\nlaunch = "add_kernel[(1,)](\n')
    assert check("--config", "broken.toml", cwd=tmp_path).returncode == 2


def test_exit_2_on_a_broken_workspace_toml(tmp_path):
    shutil.copy(ADD, tmp_path / "add.py")
    (tmp_path / "tilelens.toml").write_text('[[launch]\nfile = "add.py"\n')
    assert check("add.py", cwd=tmp_path).returncode == 2


def test_exit_2_on_a_bad_target_in_pyproject(tmp_path):
    shutil.copy(ADD, tmp_path / "add.py")
    (tmp_path / "pyproject.toml").write_text('[tool.tilelens]\ntarget = "cuda"\n')
    assert check("add.py", cwd=tmp_path).returncode == 2


# ---------------------------------------------------------------- which toml


@pytest.fixture(scope="module")
def both_tomls(tmp_path_factory) -> dict:
    """pyproject.toml launches with N = 100 (out of bounds), tilelens.toml with N = 128 (clean)."""
    root = tmp_path_factory.mktemp("both")
    (root / "kernels").mkdir()
    shutil.copy(FIXTURES / "toml_declared.py", root / "kernels" / "toml_declared.py")
    (root / "pyproject.toml").write_text(pyproject(100))
    (root / "tilelens.toml").write_text(launch_table("kernels/toml_declared.py", 128))
    run = check(".", "--format", "json", cwd=root)
    return {"returncode": run.returncode, "document": json.loads(run.stdout)}


def test_workspace_tilelens_toml_wins_over_pyproject(both_tomls):
    (launch,) = both_tomls["document"]["files"][0]["launches"]
    assert (launch["grid"], launch["diagnostics"]) == ([4, 1, 1], [])


def test_workspace_tilelens_toml_launch_is_clean(both_tomls):
    assert both_tomls["returncode"] == 0


@pytest.fixture(scope="module")
def config_run(tmp_path_factory) -> dict:
    """--config in a folder of its own naming one file relative to it and one by absolute path."""
    root = tmp_path_factory.mktemp("cfg")
    (root / "kernels").mkdir()
    (root / "configs").mkdir()
    shutil.copy(FIXTURES / "toml_declared.py", root / "kernels" / "relative.py")
    shutil.copy(FIXTURES / "toml_declared.py", root / "kernels" / "absolute.py")
    (root / "configs" / "launches.toml").write_text(
        'target = "cuda:90"\n\n'
        + launch_table("../kernels/relative.py", 100)
        + "\n"
        + launch_table((root / "kernels" / "absolute.py").as_posix(), 64)
    )
    run = check("--config", "configs/launches.toml", "--format", "json", cwd=root)
    document = json.loads(run.stdout)
    return {
        "returncode": run.returncode,
        "document": document,
        "files": {Path(f["path"]).name: f for f in document["files"]},
    }


def test_config_file_relative_path_is_relative_to_the_config(config_run):
    (launch,) = config_run["files"]["relative.py"]["launches"]
    assert [d["witness"]["element"] for d in launch["diagnostics"]] == [100]


def test_config_file_absolute_path_is_used_as_is(config_run):
    (launch,) = config_run["files"]["absolute.py"]["launches"]
    assert (launch["grid"], launch["diagnostics"]) == ([2, 1, 1], [])


def test_config_file_target_applies(config_run):
    assert config_run["document"]["target"] == "cuda:90"
