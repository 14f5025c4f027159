"""What a kernel author sees: verdicts on open and save, on the right line, and hover footprints.

One server per client snapshot (VS Code, Neovim), shared by the tests of this module in order
(the `client` and `ws` fixtures of conftest.py).
"""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from .lsphelp import ADD_BUGGY, ADD_FIXED, UNMASKED_LINE, Workspace, codes, kernel

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_unmasked_tail_load_is_out_of_bounds(ws: Workspace):
    uri = ws.open("add.py", ADD_BUGGY)
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL001"]
    d = diags[0]
    assert d.range.start == types.Position(line=UNMASKED_LINE, character=8)
    line = ADD_BUGGY.splitlines()[UNMASKED_LINE]
    assert line[d.range.start.character : d.range.end.character] == "tl.load(x_ptr + offs)"
    assert d.severity == types.DiagnosticSeverity.Error
    assert d.source == "tilelens"
    assert d.code_description is not None and d.code_description.href.endswith("#tl001")
    assert "x_ptr" in d.message and "element 1000" in d.message
    assert d.data["witness"]["element"] == 1000


async def test_hover_on_the_load_shows_pointer_and_footprint(ws: Workspace):
    hover = await ws.hover(ws.uri("add.py"), UNMASKED_LINE)
    assert hover is not None
    text = hover.contents.value
    assert "`x_ptr`" in text
    assert "1,024 of 1,000" in text
    assert "4,096 B" in text
    assert "element 1,000" in text  # the witness
    assert "✗" in text  # the map marks the elements past the storage


async def test_hover_on_a_masked_load_says_in_bounds(ws: Workspace):
    hover = await ws.hover(ws.uri("add.py"), UNMASKED_LINE + 1)
    assert hover is not None
    assert "`y_ptr`" in hover.contents.value
    assert "1,000 of 1,000" in hover.contents.value
    assert "in bounds" in hover.contents.value


async def test_hover_off_an_access_line_is_empty(ws: Workspace):
    assert await ws.hover(ws.uri("add.py"), 6) is None


async def test_resaving_an_unchanged_file_compiles_nothing(ws: Workspace):
    uri = ws.open("resaved.py", ADD_BUGGY)  # a file of its own: the test also runs alone
    assert codes(await ws.diagnostics(uri)) == ["TL001"]
    before = await ws.stats()
    ws.save("resaved.py")
    assert codes(await ws.diagnostics(uri)) == ["TL001"]
    after = await ws.stats()
    assert after["compiles"] == before["compiles"]
    assert after["cache_hits"] > before["cache_hits"]


async def test_fixing_the_mask_publishes_an_empty_list(ws: Workspace):
    uri = ws.save("add.py", ADD_FIXED)
    assert await ws.diagnostics(uri) == []


async def test_bad_directive_is_reported_on_its_line(ws: Workspace):
    text = ADD_FIXED.replace("fp32[1000], 1000, BLOCK=256", "fp33[1000], 1000, BLOCK=256")
    uri = ws.open("bad_directive.py", text)
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL020"]
    assert diags[0].range.start.line == 3
    assert "fp33" in diags[0].message


async def test_compile_error_is_reported_at_its_line(ws: Workspace):
    text = kernel("""
        import triton
        import triton.language as tl

        # tilelens: k[(4,)](fp32[1000], 1000, BLOCK=256)
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            mask = offs < n
            x = tl.load(x_ptr + offs, mask=mask, other=0.0) + "s"
            tl.store(x_ptr + offs, x, mask=mask)
    """)
    uri = ws.open("compile_error.py", text)
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL010"]
    assert diags[0].range.start.line == 8
    assert diags[0].severity == types.DiagnosticSeverity.Error


async def test_helper_in_another_file_lands_on_the_call_site(ws: Workspace, client):
    ws.write(
        "helpers.py",
        kernel("""
        import triton
        import triton.language as tl


        @triton.jit
        def load_all(ptr, offs):
            return tl.load(ptr + offs)
    """),
    )
    uri = ws.open(
        "copy.py",
        kernel("""
        import triton
        import triton.language as tl
        from helpers import load_all

        # tilelens: copy_kernel[(4,)](fp32[1000], fp32[1000], 1000, BLOCK=256)
        @triton.jit
        def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = load_all(x_ptr, offs)
            tl.store(out_ptr + offs, x, mask=offs < n)
    """),
    )
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL001"]
    d = diags[0]
    assert d.range.start.line == 8  # `x = load_all(x_ptr, offs)`
    assert d.related_information, "both snapshots declare relatedInformation support"
    helper = d.related_information[0].location
    assert helper.uri == ws.uri("helpers.py")
    assert helper.range.start.line == 6  # `return tl.load(ptr + offs)`
    assert not list(ws.root.rglob("__pycache__")), "importing the kernel wrote into the workspace"


async def test_several_configs_prefix_the_message_with_the_launch(ws: Workspace):
    text = ADD_BUGGY.replace(
        "# tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)",
        "# tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)\n"
        "# tilelens: add_kernel[(8,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=128)",
    )
    uri = ws.open("two_configs.py", text)
    diags = await ws.diagnostics(uri)
    messages = sorted(d.message for d in diags)
    assert len(messages) == 2
    assert messages[0].startswith("add_kernel[BLOCK=128]: out-of-bounds load")
    assert messages[1].startswith("add_kernel[BLOCK=256]: out-of-bounds load")
    hover = await ws.hover(uri, UNMASKED_LINE + 1)
    assert "add_kernel[BLOCK=128]" in hover.contents.value and "add_kernel[BLOCK=256]" in hover.contents.value


async def test_closing_a_document_clears_its_diagnostics(ws: Workspace):
    uri = ws.close("two_configs.py")
    assert await ws.diagnostics(uri) == []
    assert await ws.hover(uri, UNMASKED_LINE) is None


_MASKED_HELPER = kernel("""
    import triton
    import triton.language as tl


    @triton.jit
    def load_upto(ptr, offs, n):
        return tl.load(ptr + offs, mask=offs < n, other=0.0)
""")

_USES_HELPER = kernel("""
    import triton
    import triton.language as tl
    from loaders import load_upto

    # tilelens: gather_kernel[(4,)](fp32[1000], fp32[1000], 1000, BLOCK=256)
    @triton.jit
    def gather_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = load_upto(x_ptr, offs, n)
        tl.store(out_ptr + offs, x, mask=offs < n)
""")


async def test_saving_a_helper_reanalyses_the_open_kernel_that_imports_it(ws: Workspace):
    """The kernel's verdict was made from the helper's text: a save that breaks the helper must not
    leave the kernel's file showing clean until the kernel's own next save."""
    ws.write("loaders.py", _MASKED_HELPER)
    uri = ws.open("gather.py", _USES_HELPER)
    assert await ws.diagnostics(uri) == []
    ws.client.diagnostics.pop(uri, None)
    ws.open("loaders.py")
    ws.save("loaders.py", _MASKED_HELPER.replace("mask=offs < n,", "mask=offs < n + 1,"))
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL001"]
    assert diags[0].range.start.line == 8  # the call site in gather.py
    # a helper that no longer imports: the kernel says so, and a fix brings its verdict back
    ws.client.diagnostics.pop(uri, None)
    ws.save("loaders.py", _MASKED_HELPER + "\nthis is not python\n")
    assert codes(await ws.diagnostics(uri)) == ["TL010"]
    ws.client.diagnostics.pop(uri, None)
    ws.save("loaders.py", _MASKED_HELPER)
    assert await ws.diagnostics(uri) == []
    ws.close("loaders.py")


async def test_writing_the_module_a_kernel_could_not_import_reanalyses_it(ws: Workspace):
    uri = ws.open("needs.py", _USES_HELPER.replace("from loaders import", "from later_loaders import"))
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL010"] and "later_loaders" in diags[0].message
    ws.client.diagnostics.pop(uri, None)
    ws.open("later_loaders.py", _MASKED_HELPER)  # a new file, written by the editor's first save
    ws.save("later_loaders.py")
    assert await ws.diagnostics(uri) == []
    ws.close("later_loaders.py")
    ws.close("needs.py")


async def test_a_helper_rewritten_by_another_program_reanalyses_the_kernel(ws: Workspace):
    """`git checkout` or a formatter run in a terminal announces nothing to the server: it notices
    the helper's new stamp within a poll and re-runs the kernel that imports it."""
    uri = ws.uri("gather.py")
    ws.client.diagnostics.pop(uri, None)
    ws.write("loaders.py", _MASKED_HELPER.replace("mask=offs < n,", "mask=offs <= n,"))
    assert codes(await ws.diagnostics(uri, timeout=30)) == ["TL001"]
    ws.client.diagnostics.pop(uri, None)
    ws.write("loaders.py", _MASKED_HELPER)
    assert await ws.diagnostics(uri, timeout=30) == []
    # a branch without the helper, then back: the import fails, and the helper's return is noticed
    ws.client.diagnostics.pop(uri, None)
    (ws.root / "loaders.py").unlink()
    assert codes(await ws.diagnostics(uri, timeout=30)) == ["TL010"]
    ws.client.diagnostics.pop(uri, None)
    ws.write("loaders.py", _MASKED_HELPER.replace("mask=offs < n,", "mask=offs <= n,"))
    assert codes(await ws.diagnostics(uri, timeout=30)) == ["TL001"]


async def test_a_helper_saved_while_the_first_run_still_goes_is_not_missed(ws: Workspace):
    """The kernel's first run has imported the helper and is still busy (its module sleeps after the
    import) when the helper is saved: no result names the helper yet, so the save re-runs nothing,
    and the result that arrives was made from the helper's old text. It is re-run at the next poll."""
    ws.write("slow_loaders.py", _MASKED_HELPER)
    slow = _USES_HELPER.replace("from loaders import load_upto", "from slow_loaders import load_upto\nimport time")
    slow = slow.replace("# tilelens:", "time.sleep(1.5)\n\n# tilelens:")
    uri = ws.open("slow_gather.py", slow)
    await asyncio.sleep(0.7)  # the import is under way: the helper is read, the module sleeps
    ws.open("slow_loaders.py")
    ws.save("slow_loaders.py", _MASKED_HELPER.replace("mask=offs < n,", "mask=offs <= n,"))
    diags = await ws.diagnostics(uri, timeout=30, until=lambda d: bool(d))
    assert codes(diags) == ["TL001"]
    ws.close("slow_loaders.py")
    ws.close("slow_gather.py")


async def test_an_open_file_rewritten_by_another_program_is_reanalysed(ws: Workspace):
    """The editor reloads the buffer of a file changed on disk with a didChange and no save."""
    uri = ws.open("reloaded.py", ADD_FIXED)
    assert await ws.diagnostics(uri) == []
    ws.client.diagnostics.pop(uri, None)
    ws.write("reloaded.py", ADD_BUGGY)
    ws.versions[uri] += 1
    ws.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=ws.versions[uri]),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=ADD_BUGGY)],
        )
    )
    diags = await ws.diagnostics(uri, timeout=30)
    assert codes(diags) == ["TL001"]
    assert diags[0].range.start.line == UNMASKED_LINE
    ws.close("reloaded.py")


async def test_helper_in_the_same_file_flags_the_access_and_its_call_site(ws: Workspace):
    uri = ws.open(
        "same_file_helper.py",
        kernel("""
        import triton
        import triton.language as tl


        @triton.jit
        def load_all(ptr, offs):
            return tl.load(ptr + offs)


        # tilelens: copy_kernel[(4,)](fp32[1000], fp32[1000], 1000, BLOCK=256)
        @triton.jit
        def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = load_all(x_ptr, offs)
            tl.store(out_ptr + offs, x, mask=offs < n)
    """),
    )
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL001", "TL001"]
    by_line = {d.range.start.line: d for d in diags}
    assert set(by_line) == {6, 13}  # the load in the helper, and the call
    assert "through this call" in by_line[13].message
    assert by_line[6].related_information[0].location.range.start.line == 13
    assert by_line[13].related_information[0].location.range.start.line == 6


async def test_identical_verdicts_of_several_configs_are_merged(ws: Workspace):
    text = kernel("""
        import triton
        import triton.language as tl

        # tilelens: k[(4,)](fp32[1000], 1000, BLOCK=256)
        # tilelens: k[(8,)](fp32[1000], 1000, BLOCK=128)
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs, mask=offs < n, other=0.0) + "s"
            tl.store(x_ptr + offs, x, mask=offs < n)
    """)
    uri = ws.open("merged.py", text)
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL010"]
    assert diags[0].message.startswith("k (2 configs): Triton compile error")
    assert diags[0].data["launches"] == ["k[BLOCK=256]", "k[BLOCK=128]"]


_TOP = "# a note typed before the editor closed\n# and not saved\n# yet\n"


async def test_a_buffer_unsaved_at_open_shows_the_saved_files_verdicts_on_their_lines(ws: Workspace):
    """An editor that restores unsaved buffers (VS Code's hot exit) opens the file with text that is
    not on disk. The analysis is of the file on disk: its verdicts land on the lines of the buffer
    that hold those statements, and a suppression typed but never saved silences nothing."""
    ws.write("restored.py", ADD_BUGGY)
    lines = ADD_BUGGY.splitlines(keepends=True)
    lines[UNMASKED_LINE] = lines[UNMASKED_LINE].rstrip("\n") + "  # tilelens: ignore[TL001]\n"
    buffer = _TOP + "".join(lines)
    uri = ws.uri("restored.py")
    ws.versions[uri] = 1
    ws.client.diagnostics.pop(uri, None)
    ws.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=buffer)
        )
    )
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL001"]
    assert diags[0].range.start == types.Position(line=UNMASKED_LINE + 3, character=8)
    assert "unsaved changes" in diags[0].message  # the comment typed after it
    hover = await ws.hover(uri, UNMASKED_LINE + 4)  # the masked load, unchanged three lines down
    assert hover is not None and "`y_ptr`" in hover.contents.value
    ws.close("restored.py")


async def test_a_rerun_of_a_file_with_unsaved_edits_places_its_verdicts_on_the_buffers_lines(ws: Workspace):
    """A helper's save re-runs the kernel that imports it while the kernel's own buffer has unsaved
    lines above the call: the verdict, about the file on disk, goes on the call's line as the buffer
    has it now."""
    ws.write("loaders.py", _MASKED_HELPER)
    uri = ws.open("gather2.py", _USES_HELPER)
    assert await ws.diagnostics(uri) == []
    ws.edit("gather2.py", (0, 0), (0, 0), _TOP)  # typed, not saved
    ws.client.diagnostics.pop(uri, None)
    ws.open("loaders.py")
    ws.save("loaders.py", _MASKED_HELPER.replace("mask=offs < n,", "mask=offs < n + 1,"))
    diags = await ws.diagnostics(uri)
    assert codes(diags) == ["TL001"]
    assert diags[0].range.start.line == 8 + 3  # the call site, three unsaved lines down
    ws.save("loaders.py", _MASKED_HELPER)
    ws.close("loaders.py")
    ws.close("gather2.py")


_READS_BLOCK = """\
import json
import os

import triton
import triton.language as tl

BLOCK = tl.constexpr(json.load(open(os.path.join(os.path.dirname(__file__), "fill_sizes.json")))["block"])


# tilelens: fill[(1,)](fp32[64])
@triton.jit
def fill(out_ptr):
    tl.store(out_ptr + tl.arange(0, BLOCK), 1.0)
"""


async def test_a_data_file_read_at_import_reanalyses_the_kernel_when_it_changes(ws: Workspace):
    """The block size comes from a JSON the module reads at import: the verdict was made from it, so
    a save of it in the editor, or a rewrite by another program, re-runs the kernel."""
    ws.write("fill_sizes.json", '{"block": 64}')
    uri = ws.open("fill_from_json.py", _READS_BLOCK)
    assert await ws.diagnostics(uri) == []
    ws.client.diagnostics.pop(uri, None)
    ws.write("fill_sizes.json", '{"block": 128}')  # another program: noticed by the poll
    assert codes(await ws.diagnostics(uri, timeout=30)) == ["TL001"]
    ws.client.diagnostics.pop(uri, None)
    ws.open("fill_sizes.json")
    ws.save("fill_sizes.json", '{"block": 32}')  # the editor's save
    assert await ws.diagnostics(uri, timeout=30) == []
    ws.close("fill_sizes.json")
    ws.close("fill_from_json.py")
