"""The server follows the workspace's tilelens.toml: a change re-analyses the open kernels it declares
launches for, the toml's own errors are published on the toml (not at 1:1 of a kernel file), and a
hover names a toml launch by the toml's file and line.

One server per client snapshot (VS Code, Neovim); the tests of this module share it, in order.
"""

from __future__ import annotations

import pytest
from lsprotocol import types

from .lsphelp import Workspace, codes, kernel

pytestmark = pytest.mark.asyncio(loop_scope="module")

FILL = kernel("""
    import triton
    import triton.language as tl


    @triton.jit
    def fill_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0)
""")
STORE_LINE = next(i for i, line in enumerate(FILL.splitlines()) if "tl.store" in line)


def table(n: int) -> str:
    return f'# launches of fill.py\n\n[[launch]]\nfile = "fill.py"\nlaunch = "fill_kernel[(4,)](fp32[{n}], {n}, BLOCK=32)"\n'


def changed(ws: Workspace, name: str) -> None:
    ws.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=ws.uri(name), type=types.FileChangeType.Changed)])
    )


async def test_a_clean_toml_launch_gives_no_diagnostic(ws: Workspace):
    ws.write("tilelens.toml", table(128))
    uri = ws.open("fill.py", FILL)
    assert codes(await ws.diagnostics(uri)) == []


async def test_a_toml_change_re_analyses_the_open_kernel(ws: Workspace):
    ws.write("tilelens.toml", table(100))
    changed(ws, "tilelens.toml")
    diags = await ws.diagnostics(ws.uri("fill.py"), until=lambda d: codes(d) == ["TL001"])
    assert diags[0].range.start.line == STORE_LINE


async def test_the_hover_names_the_toml_launch_by_file_and_line(ws: Workspace):
    hover = await ws.hover(ws.uri("fill.py"), STORE_LINE)
    assert hover is not None and "tilelens.toml:5" in hover.contents.value  # its `launch =` line


async def test_a_toml_error_is_published_on_the_toml_at_its_line(ws: Workspace):
    ws.write("tilelens.toml", table(100) + '\n[[launch]]\nmodule = "no_such_pkg.ops"\nlaunch = "k[(1,)]()"\n')
    ws.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=ws.uri("tilelens.toml")))
    )
    diags = await ws.diagnostics(ws.uri("tilelens.toml"), until=lambda d: bool(d))
    assert [(d.code, d.range.start.line) for d in diags] == [("TL010", 7)]  # 0-based: the `module =` line
    assert "no_such_pkg.ops" in diags[0].message


async def test_a_fixed_toml_clears_its_diagnostics(ws: Workspace):
    ws.write("tilelens.toml", table(128))
    changed(ws, "tilelens.toml")
    assert await ws.diagnostics(ws.uri("tilelens.toml"), until=lambda d: d == []) == []
    assert await ws.diagnostics(ws.uri("fill.py"), until=lambda d: d == []) == []


async def test_without_a_file_watcher_the_server_sees_the_change_itself(ws: Workspace):
    if ws.client.editor != "neovim":
        pytest.skip("VS Code watches files for the server")
    ws.write("tilelens.toml", table(96))  # no notification at all: the poll finds it
    diags = await ws.diagnostics(ws.uri("fill.py"), timeout=30, until=lambda d: codes(d) == ["TL001"])
    assert diags[0].range.start.line == STORE_LINE


async def test_a_module_that_only_re_exports_a_kernel_gets_its_toml_launchs_verdict(ws: Workspace):
    # it names neither Triton nor tilelens: the server once published nothing for it (a false clean
    # in the editor where `check` reported the TL001 of its toml launch)
    ws.write(
        "tilelens.toml", table(128) + '\n[[launch]]\nfile = "fills.py"\nlaunch = "fill[(4,)](fp32[100], 100, BLOCK=32)"\n'
    )
    changed(ws, "tilelens.toml")
    uri = ws.open("fills.py", "from fill import fill_kernel as fill\n\n__all__ = ['fill']\n")
    assert codes(await ws.diagnostics(uri, until=lambda d: codes(d) == ["TL001"])) == ["TL001"]


async def test_a_project_with_its_own_toml_inside_the_workspace_gets_its_launches(ws: Workspace):
    # a monorepo opened at its top: `check proj/fill.py` takes proj/ (its tilelens.toml) as the root
    # and reports the TL001; the editor once read only the workspace folder's toml and called the
    # kernel "not checked" (TL100)
    ws.write("proj/fill.py", FILL)
    ws.write("proj/tilelens.toml", table(100))
    uri = ws.open("proj/fill.py")
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL001"]
    assert diags[0].range.start.line == STORE_LINE
    ws.client.diagnostics.pop(uri, None)
    ws.write("proj/tilelens.toml", table(128))  # the project's toml is followed like the folder's
    changed(ws, "proj/tilelens.toml")
    assert await ws.diagnostics(uri, timeout=30) == []
    ws.close("proj/fill.py")
