"""What a warm worker keeps is its own `WarmState`: the directives of one text are parsed once
however often the file is planned and analysed, and two states share nothing."""

from __future__ import annotations

from pathlib import Path

from tests.support.results import SAMPLES
from tilelens_lsp.pipeline import WarmState, analyze_path, plan_path


def test_one_text_is_parsed_once_per_state_and_again_when_it_changes(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    path = tmp_path / "vector_add.py"
    path.write_text((SAMPLES / "vector_add.py").read_text())
    state = WarmState()
    plan = plan_path(path, tmp_path, state=state)
    first = analyze_path(path, tmp_path, state=state)
    again = analyze_path(path, tmp_path, state=state, select=[0])
    assert state.directives.parses == 1
    assert plan["launches"] and first.launches
    assert again.launches[0].to_json() == first.launches[0].to_json()
    path.write_text(path.read_text() + "# an edit\n")
    analyze_path(path, tmp_path, state=state)
    assert state.directives.parses == 2


def test_two_states_share_no_result(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    path = tmp_path / "vector_add.py"
    path.write_text((SAMPLES / "vector_add.py").read_text())
    one, other = WarmState(), WarmState()
    analyze_path(path, tmp_path, state=one)
    analyze_path(path, tmp_path, state=one)
    analyze_path(path, tmp_path, state=other)
    assert one.stats.compiles >= 1 and one.stats.cache_hits == one.stats.compiles
    assert other.stats.compiles == one.stats.compiles and other.stats.cache_hits == 0
