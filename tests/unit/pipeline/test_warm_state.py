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


def test_a_verdict_reaches_the_disk_after_the_answer_and_a_fresh_state_reads_it(tmp_path: Path, monkeypatch):
    """The disk write is no part of a save's wait: `on_done` (the worker's reply) comes while no entry
    is on disk, the entry is there once `analyze_path` returns, and a fresh state (a new worker) hits it."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("TILELENS_CACHE_DIR", str(cache))
    path = tmp_path / "vector_add.py"
    path.write_text((SAMPLES / "vector_add.py").read_text())
    on_disk_at_reply: list[int] = []

    def entries() -> int:
        return len(list(cache.rglob("*.json")))

    first = analyze_path(path, tmp_path, state=WarmState(), on_done=lambda _: on_disk_at_reply.append(entries()))
    assert on_disk_at_reply == [0]
    assert entries() == len(first.launches) >= 2
    fresh = WarmState()
    again = analyze_path(path, tmp_path, state=fresh)
    assert fresh.stats.compiles == 0 and fresh.stats.cache_hits == len(first.launches)
    assert [r.to_json() for r in again.launches] == [r.to_json() for r in first.launches]
