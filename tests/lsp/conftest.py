"""The shared client fixtures of the end-to-end LSP tests: one real server per module and per client
snapshot (VS Code, Neovim), in a workspace folder of its own. A module with other needs (settings,
one editor only) defines its own `client`, which takes precedence over this one."""

from __future__ import annotations

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from lsphelp import SERVER, Workspace, start_session


@pytest_lsp.fixture(config=SERVER, scope="module", params=["visual-studio-code", "neovim"])
async def client(lsp_client: LanguageClient, request, tmp_path_factory):
    root = tmp_path_factory.mktemp(f"{request.module.__name__.removeprefix('test_')}-{request.param}")
    lsp_client.ws = await start_session(lsp_client, root, request.param)
    lsp_client.editor = request.param
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def ws(client) -> Workspace:
    return client.ws
