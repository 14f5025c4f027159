"""A workspace toml cannot make the server import a file outside the workspace (issue 24, item 6).

Before, `file = "../elsewhere/k.py"` in the workspace's tilelens.toml made the server take that file
for the workspace's own when it was opened, and import it, with allowOutsideWorkspace off. Only a
`module =` table (a kernel of an installed package the workspace declares launches for) does that.
"""

from __future__ import annotations

import pytest
import relfig
from lsp.lsphelp import Workspace, client_fixture, kernel
from lsprotocol import types

client = client_fixture("ws-outside", editors=("visual-studio-code",))


@pytest.fixture(scope="module")
def ws(client) -> Workspace:
    return client.ws


@pytest.mark.asyncio(loop_scope="module")
async def test_a_toml_file_entry_outside_the_workspace_is_not_imported(ws: Workspace):
    elsewhere = ws.root.parent / f"{ws.root.name}-elsewhere"
    elsewhere.mkdir(exist_ok=True)
    marker = elsewhere / "imported"
    outside = elsewhere / "k.py"
    outside.write_text(
        kernel(f"""
        import pathlib
        import triton
        import triton.language as tl
        pathlib.Path({str(marker)!r}).write_text("imported")

        # launches: see the workspace's tilelens: table
        @triton.jit
        def k(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
    """)
    )
    (ws.root / "tilelens.toml").write_text(
        f'[[launch]]\nfile = "../{elsewhere.name}/k.py"\nlaunch = "k[(1,)](fp32[16], BLOCK=16)"\n'
    )
    uri = outside.as_uri()
    ws.versions[uri] = 1
    ws.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=outside.read_text())
        )
    )
    diags = await ws.diagnostics(uri)
    assert not marker.exists(), "the server imported a file outside the workspace"
    assert [d.message for d in diags if "outside the workspace" in d.message], diags
    relfig.bump("outside", "refused")
