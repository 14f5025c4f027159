"""Run management and robustness: coalescing, cancellation, timeouts, dead workers, settings, toml.

One VS Code-like session (worker timeout 3 s) shared by the tests of this module, in order.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tilelens_lsp.lsp.tomlwatch import POLL_SECONDS

from .lsphelp import ADD_BUGGY, ADD_FIXED, CLEAN, HUNG, UNMASKED_LINE, Workspace, client_fixture, codes

pytestmark = pytest.mark.asyncio(loop_scope="module")


client = client_fixture("ws-runs", editors=("visual-studio-code",), options={"workerTimeout": 3})


async def _until(predicate, timeout: float = 15.0, step: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(step)
    raise AssertionError("condition not met in time")


async def test_killed_worker_is_replaced_on_the_next_save(ws: Workspace):
    uri = ws.open("clean.py", CLEAN)
    assert await ws.diagnostics(uri) == []
    before = await ws.stats()
    os.kill(before["worker_pid"], signal.SIGKILL)
    uri = ws.save("clean.py")
    assert await ws.diagnostics(uri) == []  # answered, and no crash blamed on the file
    after = await ws.stats()
    assert after["worker_pid"] != before["worker_pid"]
    assert after["worker_restarts"] > before["worker_restarts"]
    ws.close("clean.py")


async def test_hung_import_times_out_while_hover_answers(ws: Workspace):
    add = ws.open("add.py", ADD_BUGGY)
    assert codes(await ws.diagnostics(add)) == ["TL001"]
    start = time.monotonic()
    hung = ws.open("hung.py", HUNG)
    await asyncio.sleep(1.0)  # the import is now stuck in time.sleep(100)
    t0 = time.monotonic()
    hover = await ws.hover(add, UNMASKED_LINE)
    assert time.monotonic() - t0 < 1.0
    assert hover is not None and "x_ptr" in hover.contents.value
    diags = await ws.diagnostics(hung, timeout=20)
    assert codes(diags) == ["TL050"]
    assert "timed out after 3 s" in diags[0].message
    assert time.monotonic() - start < 8
    ws.close("hung.py")


async def test_a_newer_save_cancels_the_hung_run_of_its_document(ws: Workspace):
    before = await ws.stats()
    uri = ws.open("stuck.py", HUNG)
    await _until(lambda: _in_flight(ws, "stuck.py"))
    await asyncio.sleep(0.5)
    t0 = time.monotonic()
    uri = ws.save("stuck.py", CLEAN)
    assert await ws.diagnostics(uri, timeout=20) == []  # the stale run published nothing (no TL050)
    after = await ws.stats()
    assert after["cancelled"] > before["cancelled"]
    assert time.monotonic() - t0 < 10
    ws.close("stuck.py")


async def _in_flight(ws: Workspace, name: str) -> bool:
    return (await ws.stats())["in_flight"] == name


async def test_cancelling_the_progress_drops_the_run(ws: Workspace, client):
    before = await ws.stats()
    seen = set(client.progress_reports)
    uri = ws.open("slow.py", HUNG)

    async def began():
        for token, reports in client.progress_reports.items():
            if token not in seen and any(isinstance(r, types.WorkDoneProgressBegin) for r in reports):
                return token
        return None

    token = await _until(began, timeout=5)
    begin = client.progress_reports[token][0]
    assert begin.cancellable is True and "slow.py" in begin.message
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    await _until(lambda: _ended(client, token), timeout=5)
    await asyncio.sleep(1.0)
    assert uri not in client.diagnostics  # nothing new published for the cancelled run
    after = await ws.stats()
    assert after["cancelled"] > before["cancelled"]
    ws.close("slow.py")


async def _ended(client: LanguageClient, token) -> bool:
    return any(isinstance(r, types.WorkDoneProgressEnd) for r in client.progress_reports.get(token, []))


async def test_a_burst_of_saves_publishes_once_after_the_first(ws: Workspace):
    # the first save of a storm is a lone save and runs at once (latency); the saves that follow
    # within DEBOUNCE coalesce into one run that publishes once, when the storm is over
    uri = ws.open("burst.py", ADD_BUGGY)
    assert codes(await ws.diagnostics(uri)) == ["TL001"]
    before = await ws.stats()
    for i in range(50):
        ws.save("burst.py", ADD_BUGGY if i % 2 == 0 else ADD_FIXED)
        await asyncio.sleep(0.02)
    assert await ws.diagnostics(uri) == []  # the 50th save wrote the fixed kernel
    await asyncio.sleep(1.0)
    after = await ws.stats()
    assert after["published"] - before["published"] <= 2
    assert after["runs"] - before["runs"] <= 3
    ws.close("burst.py")


async def test_a_save_is_run_once_though_its_files_are_followed_on_disk(ws: Workspace):
    """The server follows the files an open document's verdict was made from (another program may
    rewrite them): the editor's own save of the file, or of a helper it imports, is taken in when
    announced, so the next polls start no second run."""
    ws.write("offsets.py", "SHIFT = 0\n")
    text = ADD_FIXED.replace("import triton.language as tl", "import triton.language as tl\nimport offsets")
    uri = ws.open("followed.py", text)
    assert await ws.diagnostics(uri) == []
    before = await ws.stats()
    ws.save("followed.py", text + "\n")
    assert await ws.diagnostics(uri) == []
    ws.open("offsets.py")
    ws.client.diagnostics.pop(uri, None)
    ws.save("offsets.py", "SHIFT = 1\n")
    assert await ws.diagnostics(uri) == []  # re-run: followed.py imports it
    await asyncio.sleep(2 * POLL_SECONDS + 0.5)
    after = await ws.stats()
    # followed.py twice (its save, its helper's); offsets.py names no kernel: published without a run
    assert after["runs"] - before["runs"] == 2
    ws.close("offsets.py")
    ws.close("followed.py")


async def test_editing_the_toml_reruns_open_documents(ws: Workspace, client):
    assert any(r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in client.registrations)
    plain = ADD_BUGGY.replace(
        "# tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)",
        "# launches come from tilelens.toml",
    )
    uri = ws.open("plain.py", plain)
    assert codes(await ws.diagnostics(uri)) == ["TL100"]
    ws.write(
        "tilelens.toml",
        '[[launch]]\nfile = "plain.py"\nlaunch = "add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)"\n',
    )
    client.diagnostics.pop(uri, None)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=ws.uri("tilelens.toml"), type=types.FileChangeType.Changed)]
        )
    )
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL001"]
    assert diags[0].range.start.line == UNMASKED_LINE
    ws.write("tilelens.toml", "")
    ws.close("plain.py")


async def test_documents_never_opened_are_ignored(ws: Workspace, client):
    ghost = ws.write("ghost.py", ADD_BUGGY)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=ghost, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="x = 1\n")],
        )
    )
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=ghost)))
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=ghost)))
    assert await ws.hover(ghost, UNMASKED_LINE) is None
    await asyncio.sleep(0.3)
    assert ghost not in client.diagnostics
    assert client.messages == []  # no "Error in server" popped up


async def test_unknown_methods_get_method_not_found(ws: Workspace):
    with pytest.raises(JsonRpcException, match="Method Not Found"):
        await ws.client.protocol.send_request_async("tilelens/noSuchThing", {})
    assert (await ws.stats())["open_documents"] >= 1  # still serving


async def test_undecodable_file_is_a_diagnostic_not_a_crash(ws: Workspace):
    ws.write("binary.py", b"import triton\n# tilelens: k[(1,)](fp32[4])\n\xff\xfe\x00garbage\n")
    uri = ws.open("binary.py")
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL010"] and "cannot read this file" in diags[0].message
    ws.close("binary.py")
    assert "compiles" in await ws.stats()


async def test_stats_say_which_engine_answered(ws: Workspace):
    before = await ws.stats()
    uri = ws.open("engines.py", ADD_FIXED.replace("# tilelens:", "# engines\n# tilelens:", 1))
    assert await ws.diagnostics(uri) == []
    after = await ws.stats()
    # a masked vector add stays affine: the summary answers it, nothing is enumerated
    assert after["summarized"] == before["summarized"] + 1
    assert after["enumerated"] == before["enumerated"]
    ws.close("engines.py")


async def test_files_outside_the_workspace_are_not_imported(ws: Workspace, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "add.py"
    outside.write_text(ADD_BUGGY)
    uri = outside.as_uri()
    ws.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=ADD_BUGGY)
        )
    )
    diags = await ws.diagnostics(uri)
    assert [d.severity for d in diags] == [types.DiagnosticSeverity.Information]
    assert "allowOutsideWorkspace" in diags[0].message


async def test_settings_change_reruns_and_restarts_the_worker(ws: Workspace, client):
    uri = ws.open("settings.py", ADD_BUGGY)
    assert codes(await ws.diagnostics(uri)) == ["TL001"]
    client.diagnostics.pop(uri, None)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tilelens": {"clients": ["footprint", "overflow"], "workerTimeout": 3}})
    )
    assert await ws.diagnostics(uri) == []  # the sanitizer is off: no TL001
    pid = (await ws.stats())["worker_pid"]
    client.diagnostics.pop(uri, None)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tilelens": {"target": "cuda:90", "workerTimeout": 3}})
    )
    assert codes(await ws.diagnostics(uri)) == ["TL001"]
    stats = await ws.stats()
    assert stats["worker_pid"] != pid and stats["settings"]["target"] == "cuda:90"
