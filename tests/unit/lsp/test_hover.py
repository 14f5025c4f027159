"""The hover's rendering (lsp/hover.py) on analyses of kernels written for it: a view over-read (TL004)
draws the cells outside the view and never says "in bounds", a race lists both programs and the element,
and the plain-text form for clients without Markdown keeps every fact without the markup."""

from __future__ import annotations

import textwrap

import pytest

from tilelens_lsp.lsp import hover
from tilelens_lsp.pipeline import analyze_path

KERNELS = textwrap.dedent("""\
    import triton
    import triton.language as tl


    # tilelens: row_read_kernel[(4,)](tensor(fp32, (4, 10), strides=(16, 1), storage=64), fp32[64], 16, BLOCK=16)
    @triton.jit
    def row_read_kernel(x_ptr, out_ptr, stride, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols)
        tl.store(out_ptr + row * BLOCK + cols, x)


    # tilelens: same_block_kernel[(2,)](fp32[16], BLOCK=16)
    @triton.jit
    def same_block_kernel(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
    """)
VIEW_LOAD, RACE_STORE = 10, 17


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hover")
    (folder / "k.py").write_text(KERNELS)
    return analyze_path(folder / "k.py", folder)


def _hover(result, line: int) -> str:
    text = KERNELS.split("\n")[line - 1]
    markdown = hover.hover_markdown(result, result.path, line, text)
    assert markdown is not None, f"no hover on line {line}: {text}"
    return markdown


def _map(markdown: str) -> list[str]:
    """The first map's rows (between the ```text fence and its closing fence, the caption left out)."""
    lines = markdown.split("\n")
    start = lines.index("```text") + 1
    return lines[start : lines.index("```", start) - 1]


def test_a_view_over_read_draws_the_cells_past_each_row_and_is_not_in_bounds(analysed):
    assert any(d.code == "TL004" for r in analysed.launches for d in r.diagnostics)
    markdown = _hover(analysed, VIEW_LOAD)
    # four rows of ten columns, every column read, and each row read on into the padding after it
    assert _map(markdown) == [hover.FULL * 10 + hover.VIEW_OUT] * 4
    lines = markdown.split("\n")
    load = next(i for i, x in enumerate(lines) if x.startswith("- load `x_ptr`"))
    bounds = lines[load + 1]
    assert "outside its view (TL004)" in bounds and "in bounds" not in bounds
    assert any(x.strip().startswith("- TL004:") for x in markdown.split("\n"))


def test_a_race_is_listed_with_both_programs_and_the_element(analysed):
    [race] = [d for r in analysed.launches for d in r.diagnostics if d.code == "TL005"]
    markdown = _hover(analysed, RACE_STORE)
    [line] = [x for x in markdown.split("\n") if x.strip().startswith("- TL005:")]
    assert line.strip() == "- " + hover.escape_markdown(f"TL005: {race.message}")
    assert "program (0, 0, 0)" in race.message and "program (1, 0, 0)" in race.message
    assert "element" in race.message


def test_plain_text_keeps_the_facts_and_drops_the_markup(analysed):
    markdown = _hover(analysed, VIEW_LOAD)
    plain = hover.plaintext(markdown)
    assert "```" not in plain and "**" not in plain and "`" not in plain and "\\" not in plain
    assert "row_read_kernel[BLOCK=16] · grid (4×1×1)" in plain
    assert "outside its view (TL004)" in plain
    # the map is still there, row for row
    assert plain.count(hover.FULL * 10 + hover.VIEW_OUT) == 4


def test_markdown_escapes_brackets_so_a_launch_name_is_never_a_link():
    assert hover.escape_markdown("kernel[BLOCK=256]") == "kernel\\[BLOCK=256\\]"
    assert hover.plaintext(hover.escape_markdown("kernel[BLOCK=256] | a_b *c*")) == "kernel[BLOCK=256] | a_b *c*"


def test_a_plain_bar_marks_reads_past_a_one_dimensional_view_and_past_its_storage():
    from tilelens_lsp.model import Access

    def bar(hi: int, storage: int) -> str:
        access = Access(
            "load",
            1,
            1,
            "x",
            "fp32",
            True,
            ((0, hi),),
            True,
            view_numel=16,
            storage=storage,
            element_size=4,
            touched=hi,
            contiguous=True,
            view_shape=(16,),
            view_strides=(1,),
        )
        return hover.footprint_map(access)[0]

    assert bar(16, 16) == hover.FULL * 16
    assert bar(20, 32) == hover.FULL * 16 + hover.VIEW_OUT  # inside the storage, past the view
    assert bar(40, 32) == hover.FULL * 16 + hover.OUT  # past the storage


def test_a_refused_line_hovers_with_why_and_the_declaration_that_decides_it(tmp_path):
    text = textwrap.dedent("""\
        import triton
        import triton.language as tl


        # tilelens: gather_kernel[(1,)](i32[16], fp32[64], fp32[16], BLOCK=16)
        @triton.jit
        def gather_kernel(idx_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            idx = tl.load(idx_ptr + offs)
            tl.store(out_ptr + offs, tl.load(x_ptr + idx))
        """)
    (tmp_path / "g.py").write_text(text)
    result = analyze_path(tmp_path / "g.py", tmp_path)
    [refusal] = [d for r in result.launches for d in r.diagnostics if d.code == "TL030"]
    markdown = hover.hover_markdown(result, result.path, refusal.line, text.split("\n")[refusal.line - 1])
    assert markdown is not None and "not analysed" in markdown
    plain = hover.plaintext(markdown)
    assert "indirect-address" in plain and "idx_ptr=i32[16].values(LO, HI)" in plain and "gather_kernel" in plain
