"""Line breaks are `\\r\\n`, `\\r` and `\\n` only, as LSP and Python count them (issue 24, item 1).

`str.splitlines()` also breaks at form feeds, `\\x85`, U+2028 and more. A document with one of them
in a comment must not drift: incremental edits land where the editor put them, a suppression
silences the line it is on, ranges and quick fixes keep their columns.
"""

from __future__ import annotations

import pytest
import relfig
from lsp.lsphelp import Workspace, client_fixture, codes, kernel

from tilelens_lsp import suppress
from tilelens_lsp.lsp import codeactions, convert
from tilelens_lsp.model import Diagnostic, FileResult
from tilelens_lsp.textlines import split_lines

client = client_fixture("ws-lines", editors=("visual-studio-code",))


@pytest.fixture(scope="module")
def ws(client) -> Workspace:
    return client.ws


ODD = "\u2028"
ODD_BREAKS = ("\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029")

# The unmasked load and the line below it have the same length, so an edit meant for the end of
# the line below lands, in a copy that counts one line too many above, at the end of the load.
DRIFT = kernel("""
    import triton
    import triton.language as tl

    # page one{odd}page two
    # tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], 1000, BLOCK=256)
    @triton.jit
    def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs)
        z = x + 1.0 + 2.0 + 3.000
        tl.store(out_ptr + offs, z, mask=mask)
""")


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(split_lines(text)) if needle in line)


@pytest.mark.asyncio(loop_scope="module")
async def test_an_edit_below_a_u2028_lands_where_the_editor_put_it(ws: Workspace):
    """The editor appends a suppression to the line below the unmasked load; the server's copy must
    put it there too, not on the load (which would hide its TL001: a false clean in the editor)."""
    text = DRIFT.format(odd=ODD)
    x_line, z_line = _line_of(text, "x = tl.load"), _line_of(text, "z = x")
    lines = split_lines(text)
    assert len(lines[x_line]) == len(lines[z_line])
    uri = ws.open("drift.py", text)
    first = await ws.diagnostics(uri)
    assert [(str(d.code), d.range.start.line) for d in first if d.code == "TL001"] == [("TL001", x_line)]
    comment = "  # tilelens: ignore[TL001]"
    ws.edit("drift.py", (z_line, len(lines[z_line])), (z_line, len(lines[z_line])), comment)
    lines[z_line] += comment
    saved = "\n".join(lines)
    (ws.root / "drift.py").write_text(saved, encoding="utf-8", newline="")
    ws.save("drift.py")
    after = await ws.diagnostics(uri)
    assert [d.range.start.line for d in after if d.code == "TL001"] == [x_line], codes(after)
    relfig.bump("lines", "edits")


def test_ranges_keep_their_columns_below_odd_breaks():
    for odd in ODD_BREAKS:
        text = f"x = 1  # a{odd}b\ny = compute(a, b)\n"
        index = convert.ExpressionIndex(text)
        rng = convert.frame_range(index, 2, 5, "TL003", convert.utf16_units)
        assert (rng.start.line, rng.start.character, rng.end.character) == (1, 4, 17), repr(odd)
        relfig.bump("lines", "breaks")


def test_a_form_feed_above_a_kernel_keeps_the_suppress_fix_on_its_line():
    text = "import triton\n\x0c\n@triton.jit\ndef k(p):\n    v = tl.load(p + 1)  # \x0c note\n    w = v\n"
    diag = Diagnostic("TL003", "int32 overflow in `+`", 5, 9)
    ctx = convert.DocumentContext("file:///k.py", "k.py", text, None, False, convert.utf16_units)
    [lsp_diag] = convert.to_lsp_diagnostics(FileResult("k.py", (), (diag,)), ctx)
    assert (lsp_diag.range.start.line, lsp_diag.range.start.character) == (4, 8)
    [action] = [a for a in codeactions.code_actions("file:///k.py", text, [lsp_diag]) if "Suppress" in a.title]
    [edit] = action.edit.changes["file:///k.py"]
    lines = split_lines(text)
    start, end = edit.range.start, edit.range.end
    assert start.line == end.line == 4
    fixed = lines[4][: start.character] + edit.new_text + lines[4][end.character :]
    assert fixed.startswith("    v = tl.load(p + 1)") and fixed.endswith("# tilelens: ignore[TL003]")


def test_suppressions_count_lone_carriage_returns_as_breaks():
    text = "a = 1\rb = 2\rc = f(a)  # tilelens: ignore[TL001]\r"
    [s] = suppress.find(text)
    assert s.line == 3 and 3 in s.targets
