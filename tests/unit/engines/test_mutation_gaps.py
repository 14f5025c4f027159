"""Verdicts that only analysis can check (the tensors are too large to run under the interpreter):
each pins a graph rule that the mutation run (tools/mutation/mutate.py) found no other test pinning."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.support import FIXTURES
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.settings import Settings

FIXTURE = FIXTURES / "mutation_gaps.py"


def _launch(result, kernel):
    return next(l for l in result.launches if l.kernel == kernel)


@pytest.fixture(scope="module")
def result():
    return analyze_path(FIXTURE, FIXTURE.parent)


def test_overflow_in_a_branch_no_running_program_takes_is_not_reported(result):
    launch = _launch(result, "guarded_row_kernel")
    assert launch.status == "analyzed"
    assert [d.code for d in launch.diagnostics if d.code == "TL003"] == []


def test_overflow_of_a_loop_carried_offset_is_reported(result):
    launch = _launch(result, "carried_offset_kernel")
    assert "TL003" in [d.code for d in launch.diagnostics]


def test_a_launch_over_budget_still_reports_its_tail_bug(monkeypatch):
    # the enumeration alone: it visits the last programs first, so the tail bug survives truncation
    monkeypatch.setenv("TILELENS_ENGINE", "enumerate")
    small = replace(Settings(), enumeration_budget=6 << 20)  # about one batch of 1024 programs
    launch = _launch(analyze_path(FIXTURE, FIXTURE.parent, small), "big_tail_kernel")
    codes = [d.code for d in launch.diagnostics]
    assert "TL030" in codes and "TL001" in codes


def test_the_affine_summary_answers_the_same_launch_whole(monkeypatch):
    monkeypatch.setenv("TILELENS_ENGINE", "auto")
    small = replace(Settings(), enumeration_budget=6 << 20)
    launch = _launch(analyze_path(FIXTURE, FIXTURE.parent, small), "big_tail_kernel")
    assert [d.code for d in launch.diagnostics] == ["TL001"]
    assert launch.status == "analyzed" and all(a.exact for a in launch.accesses)
