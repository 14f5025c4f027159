"""When `pytest --tilelens` fails the session: `--tilelens-fail-on` over what `check` returned."""

from __future__ import annotations

from tilelens_lsp.model import Diagnostic
from tilelens_lsp.pytest_plugin import Outcome


def _outcome(*codes: str, exit_code: int = 0) -> Outcome:
    return Outcome(findings=[(None, Diagnostic(code, "m", 1), []) for code in codes], exit_code=exit_code)


def test_fail_on_error_fails_as_check_exits():
    assert _outcome("TL001", exit_code=1).fails("error")
    assert not _outcome("TL030", "TL002").fails("error")  # a refusal or a warning alone: check exits 0
    assert Outcome(problem="check could not run").fails("error")


def test_fail_on_refused_also_fails_on_a_refusal_and_never_fails_on_nothing():
    assert _outcome("TL030").fails("refused") and not _outcome("TL002").fails("refused")
    assert not _outcome("TL001", exit_code=1).fails("never")


def test_fail_on_refused_counts_a_launch_that_was_never_recorded_as_undecided():
    assert Outcome(unrecorded=1).fails("refused") and not Outcome(unrecorded=1).fails("error")
    assert Outcome(not_written=["k: why"]).fails("refused")
