"""The shared client fixtures of the end-to-end LSP tests: one real server per module and per client
snapshot (VS Code, Neovim), in a workspace folder of its own. A module with other needs (settings,
one editor only) sets `client = client_fixture(...)` (lsphelp.py), which takes precedence over this one."""

from __future__ import annotations

import pytest

from .lsphelp import Workspace, client_fixture

client = client_fixture()


@pytest.fixture(scope="module")
def ws(client) -> Workspace:
    return client.ws
