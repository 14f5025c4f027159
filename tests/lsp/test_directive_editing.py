"""Help while writing `# tilelens:` directives, and hovers that follow unsaved edits, through the real
server over stdio (the `client` and `ws` fixtures of conftest.py: VS Code and Neovim snapshots)."""

from __future__ import annotations

import pytest
from lsprotocol import types

from .lsphelp import ADD_BUGGY, UNMASKED_LINE, Workspace, kernel

pytestmark = pytest.mark.asyncio(loop_scope="module")

# A launch being typed: its argument list continues on a `# tilelens:` line still empty.
TYPING = kernel("""
    import triton
    import triton.language as tl

    # tilelens: N = 4000
    # tilelens: add_kernel[(cdiv(N, 1024),)](fp32[N], fp32[N],
    # tilelens:     
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
        offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
        mask = offs < n_elements
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
""")
LINES = TYPING.split("\n")
LAUNCH, CONTINUATION, DEF = 4, 5, 7
assert LINES[DEF].startswith("def add_kernel(")


async def complete(ws: Workspace, uri: str, line: int, character: int) -> list[str]:
    result = await ws.client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)
        )
    )
    items = result.items if isinstance(result, types.CompletionList) else (result or [])
    return [item.label for item in items]


async def signature(ws: Workspace, uri: str, line: int, character: int) -> types.SignatureHelp | None:
    return await ws.client.text_document_signature_help_async(
        types.SignatureHelpParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)
        )
    )


# ---------------------------------------------------------------- completion


async def test_completion_in_a_launch_offers_the_parameters_not_yet_passed_as_keywords(ws: Workspace):
    uri = ws.open("typing.py", TYPING)
    labels = await complete(ws, uri, CONTINUATION, len(LINES[CONTINUATION]))
    assert {"out_ptr=", "n_elements=", "BLOCK_SIZE="} <= set(labels)
    assert "x_ptr=" not in labels and "y_ptr=" not in labels  # passed by position on the line above


async def test_completion_offers_dtypes_where_a_tensor_spec_starts_but_not_in_the_grid(ws: Workspace):
    uri = ws.uri("typing.py")
    argument = await complete(ws, uri, CONTINUATION, len(LINES[CONTINUATION]))
    assert {"fp16", "bf16", "fp32", "i64", "float16"} <= set(argument)
    grid = await complete(ws, uri, LAUNCH, LINES[LAUNCH].index("cdiv"))
    assert "N" in grid and "cdiv" in grid
    assert "fp16" not in grid


async def test_completion_at_a_directive_start_offers_the_kernels_of_the_file(ws: Workspace):
    text = TYPING.replace("# tilelens: N = 4000", "# tilelens: ")
    uri = ws.open("start.py", text)
    assert await complete(ws, uri, 3, len("# tilelens: ")) == ["add_kernel"]


async def test_completion_outside_a_directive_offers_nothing(ws: Workspace):
    uri = ws.uri("typing.py")
    assert await complete(ws, uri, DEF + 2, 12) == []


# ---------------------------------------------------------------- signature help and definition


async def test_signature_help_shows_the_kernels_parameters_and_highlights_the_active_one(ws: Workspace):
    help_ = await signature(ws, ws.uri("typing.py"), CONTINUATION, len(LINES[CONTINUATION]))
    assert help_ is not None
    [sig] = help_.signatures
    assert sig.label == "add_kernel[grid](x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr)"
    start, end = sig.parameters[help_.active_parameter].label
    assert sig.label[start:end] == "out_ptr"  # two arguments given: the third is next
    block = sig.parameters[4]
    assert sig.label[block.label[0] : block.label[1]] == "BLOCK_SIZE: tl.constexpr"
    assert "constexpr" in str(block.documentation)


async def test_signature_help_follows_a_keyword_argument(ws: Workspace):
    uri = ws.open("keyword.py", TYPING.replace("# tilelens:     \n", "# tilelens:     BLOCK_SIZE=\n"))
    line = LINES[CONTINUATION] + "BLOCK_SIZE="
    help_ = await signature(ws, uri, CONTINUATION, len(line))
    sig = help_.signatures[0]
    start, end = sig.parameters[help_.active_parameter].label
    assert sig.label[start:end] == "BLOCK_SIZE: tl.constexpr"


async def test_go_to_definition_from_the_directive_kernel_name_lands_on_its_def(ws: Workspace):
    uri = ws.uri("typing.py")
    found = await ws.client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=LAUNCH, character=LINES[LAUNCH].index("add_kernel") + 3),
        )
    )
    location = found[0] if isinstance(found, list) else found
    assert location.uri == uri
    assert location.range.start == types.Position(line=DEF, character=4)
    assert location.range.end == types.Position(line=DEF, character=4 + len("add_kernel"))


# ---------------------------------------------------------------- hover after unsaved edits


async def test_hover_follows_an_access_that_lines_inserted_above_moved(ws: Workspace):
    uri = ws.open("moved.py", ADD_BUGGY)
    await ws.diagnostics(uri)
    ws.edit("moved.py", (6, 0), (6, 0), "    # first new line\n    # second new line\n")
    moved = await ws.hover(uri, UNMASKED_LINE + 2)
    assert moved is not None and "load `x_ptr`" in moved.contents.value
    assert f"line {UNMASKED_LINE + 1}" in moved.contents.value  # where the analysis saw it
    assert await ws.hover(uri, UNMASKED_LINE) is None  # now `offs = ...`: no footprint here


async def test_hover_on_an_edited_access_line_says_the_result_is_stale_until_saved(ws: Workspace):
    uri = ws.open("stale.py", ADD_BUGGY)
    await ws.diagnostics(uri)
    line = ADD_BUGGY.split("\n")[UNMASKED_LINE]
    col = line.index("offs)") + len("offs")
    ws.edit("stale.py", (UNMASKED_LINE, col), (UNMASKED_LINE, col), " + 1")
    stale = await ws.hover(uri, UNMASKED_LINE)
    assert stale is not None
    assert "stale" in stale.contents.value and "version 1" in stale.contents.value
    assert "`x_ptr`" not in stale.contents.value
    assert "in bounds" in (await ws.hover(uri, UNMASKED_LINE + 1)).contents.value  # the line below is untouched

    edited = ADD_BUGGY.replace("tl.load(x_ptr + offs)", "tl.load(x_ptr + offs + 1)")
    await ws.diagnostics(ws.save("stale.py", edited))
    fresh = await ws.hover(uri, UNMASKED_LINE)
    assert fresh is not None and "load `x_ptr`" in fresh.contents.value and "stale" not in fresh.contents.value
