"""Every grid test analyses afresh (no result cache) with the engine the launch's size chooses,
unless the test sets `TILELENS_ENGINE` itself."""

import pytest

from tilelens_lsp.engines import select


@pytest.fixture(autouse=True)
def _fresh_engine_choice(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    monkeypatch.delenv(select.ENGINE_ENV, raising=False)
