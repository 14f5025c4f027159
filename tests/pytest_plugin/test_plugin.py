"""`pytest --tilelens` on a small user project (numpy-backed tensors under TRITON_INTERPRET=1, no torch):
it finds what `tilelens-lsp capture` + `check` find, names the tests behind each finding, fails the
session as `check` exits, gives the same under pytest-xdist, and does nothing without `--tilelens`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # pytest runs in subprocesses, each with Triton's start-up and a worker
HERE = Path(__file__).resolve().parent
TAIL = "test_user.py::test_tail[1000_0], test_user.py::test_tail[1000_1]"


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("project")
    shutil.copy(HERE / "project" / "kernels.py", folder / "kernels.py")
    shutil.copy(HERE / "project" / "user_tests.py", folder / "test_user.py")
    (folder / "pytest.ini").write_text("[pytest]\n")  # the project's own root, not ours
    return folder


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _findings(document: dict) -> set[tuple]:
    return {
        (f["path"], d["code"], d["line"], d["column"], d["message"])
        for f in document["files"]
        for launch in f["launches"]
        for d in launch["diagnostics"]
    }


@pytest.fixture(scope="module")
def plugin_run(project):
    run = _pytest(project, "--tilelens", "--tilelens-json", "plugin.json", "--tilelens-save", "saved.toml")
    return run, json.loads((project / "plugin.json").read_text())


def test_without_the_flag_the_plugin_does_nothing(project):
    run = _pytest(project)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "tilelens" not in run.stdout and not (project / "saved-plain.toml").exists()


def test_a_finding_names_its_launch_and_the_tests_that_made_it(plugin_run):
    run, _ = plugin_run
    out = run.stdout
    assert "7 passed" in out
    assert run.returncode == 1, out  # the tests pass; the TL001 fails the session
    block = out[out.index("kernels.py:57:28: error: out-of-bounds load") :].splitlines()
    assert block[0].endswith("[TL001]")
    assert block[1] == "    launch: tail_kernel[(8,)](fp32[1000], 1000, BLOCK=128)"
    assert block[2] == f"    tests: {TAIL}"  # two tests made one launch: checked once
    assert "kernels.py:71:5: information: not analyzed: indirect-address" in out
    assert "test_tail_clean_size" not in out and "test_copy" not in out  # clean launches stay quiet
    assert "6 distinct record(s), 6 launch(es) checked" in out


def test_it_finds_what_capture_and_check_find(project, plugin_run):
    _, document = plugin_run
    captured = project / "captured"
    captured.mkdir(exist_ok=True)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    cap = subprocess.run(
        [
            sys.executable,
            "-m",
            "tilelens_lsp",
            "capture",
            "--out",
            str(project / "tilelens.toml"),
            "--",
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert cap.returncode == 0, cap.stderr
    try:
        chk = subprocess.run(
            [sys.executable, "-m", "tilelens_lsp", "check", "--config", "tilelens.toml", "--format", "json"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=600,
        )
        tables = tomllib.loads((project / "tilelens.toml").read_text())["launch"]
    finally:
        (project / "tilelens.toml").unlink()
    assert chk.returncode == 1, chk.stderr  # check fails where the plugin failed the session
    assert _findings(json.loads(chk.stdout)) == _findings(document)
    saved = tomllib.loads((project / "saved.toml").read_text())["launch"]
    assert sorted(t["launch"] for t in saved) == sorted(t["launch"] for t in tables)


def test_the_json_names_the_tests_of_each_launch(plugin_run):
    _, document = plugin_run
    launches = {launch["launch"]: launch for f in document["files"] for launch in f["launches"]}
    assert launches["tail_kernel[(8,)](fp32[1000], 1000, BLOCK=128)"]["tests"] == TAIL.split(", ")
    assert launches["tail_kernel[(8,)](fp32[1024], 1024, BLOCK=128)"]["tests"] == ["test_user.py::test_tail_clean_size"]
    assert document["pytest"]["launches"] == 6


def test_under_xdist_the_controller_merges_and_checks_once(project, plugin_run):
    _, alone = plugin_run
    run = _pytest(project, "-n", "2", "--tilelens", "--tilelens-json", "xdist.json", "--tilelens-save", "saved.toml")
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.count("=== tilelens ===") == 1
    assert f"    tests: {TAIL}" in run.stdout
    assert _findings(json.loads((project / "xdist.json").read_text())) == _findings(alone)
    # the second save added nothing: every table was there
    assert "0 launch table(s) added" in run.stdout
    assert len(tomllib.loads((project / "saved.toml").read_text())["launch"]) == 6


def test_fail_on_refused_fails_a_session_whose_only_finding_is_a_refusal(project):
    run = _pytest(project, "--tilelens", "--tilelens-fail-on", "refused", "-k", "histogram or copy")
    assert run.returncode == 1, run.stdout
    assert "[TL030]" in run.stdout and "[TL001]" not in run.stdout
