"""Quick fixes, suppression comments and code lenses, through the real server over stdio.

Every quick fix is applied the way an editor applies it (the WorkspaceEdit's TextEdits on the
document, then didChange + didSave) and the file is analysed again: the fix counts only if the
verdict it targets is gone from the next publish.
"""

from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from .lsphelp import ADD_BUGGY, CLEAN, UNMASKED_LINE, Workspace, codes, kernel, plain

pytestmark = pytest.mark.asyncio(loop_scope="module")

ROW_SUM = kernel("""
    import triton
    import triton.language as tl

    # A 70000 x 40000 fp16 matrix: row * stride_row no longer fits in int32.
    # tilelens: row_sum_kernel[(70000,)](fp16[70000, 40000], fp32[70000], 40000, 40000, BLOCK=64)
    @triton.jit
    def row_sum_kernel(x_ptr, out_ptr, stride_row, n_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        row_start = row * stride_row
        acc = tl.zeros((BLOCK,), dtype=tl.float32)
        for col in range(0, n_cols, BLOCK):
            cols = col + tl.arange(0, BLOCK)
            acc += tl.load(x_ptr + row_start + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        tl.store(out_ptr + row, tl.sum(acc, axis=0))
""")
OVERFLOW_LINE = 8
assert ROW_SUM.splitlines()[OVERFLOW_LINE].strip() == "row_start = row * stride_row"

TILE_OFFSETS = kernel("""
    import triton
    import triton.language as tl

    # tilelens: tail_rows_kernel[(2,)](fp16[40000, 60000], fp32[32], 40000 - 32, 60000, 50, BM=16, BN=64)
    @triton.jit
    def tail_rows_kernel(x_ptr, out_ptr, row0, stride, n_cols, BM: tl.constexpr, BN: tl.constexpr):
        rows = row0 + tl.program_id(0) * BM + tl.arange(0, BM)
        cols = tl.arange(0, BN)
        offs = rows[:, None] * stride + cols[None, :]
        tile = tl.load(x_ptr + offs, mask=cols[None, :] < n_cols, other=0.0)
        tl.store(out_ptr + tl.program_id(0) * BM + tl.arange(0, BM), tl.sum(tile, axis=1))
""")

TWO_CONFIGS = ADD_BUGGY.replace(
    "# tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)",
    "# tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)\n"
    "# tilelens: add_kernel[(8,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=128)",
)

NO_LAUNCH = kernel("""
    import triton
    import triton.language as tl


    @triton.jit
    def lonely_kernel(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")

INDIRECT = kernel("""
    import triton
    import triton.language as tl

    # tilelens: gather_kernel[(1,)](i32[16], fp32[64], fp32[16], BLOCK=16)
    @triton.jit
    def gather_kernel(idx_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        idx = tl.load(idx_ptr + offs)
        tl.store(out_ptr + offs, tl.load(x_ptr + idx))
""")


async def quick_fixes(ws: Workspace, uri: str, diags: list[types.Diagnostic]) -> list[types.CodeAction]:
    rng = diags[0].range
    actions = await ws.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=diags),
        )
    )
    return [a for a in actions or [] if isinstance(a, types.CodeAction)]


def apply(text: str, action: types.CodeAction, uri: str) -> str:
    """Apply the action's TextEdits (UTF-16 positions; these tests are ASCII) as an editor does."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    edits = sorted(action.edit.changes[uri], key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
    for e in edits:
        start = offsets[e.range.start.line] + e.range.start.character
        end = offsets[e.range.end.line] + e.range.end.character
        text = text[:start] + e.new_text + text[end:]
    return text


async def fix_and_reanalyse(ws: Workspace, name: str, text: str, code: str, title: str):
    """Open `text`, apply the quick fix titled `title...` for `code`, save; the new text and diagnostics."""
    uri = ws.open(name, text)
    diags = [d for d in await ws.diagnostics(uri) if d.code == code]
    assert diags, f"no {code} to fix in {name}"
    actions = await quick_fixes(ws, uri, diags[:1])
    chosen = [a for a in actions if a.title.startswith(title)]
    assert len(chosen) == 1, [a.title for a in actions]
    fixed = apply(text, chosen[0], uri)
    return chosen[0], fixed, await ws.diagnostics(ws.save(name, fixed))


# ---------------------------------------------------------------- TL100: declare an example launch

MATMUL_NO_LAUNCH = kernel("""
    import triton
    import triton.language as tl


    class Helpers:
        @staticmethod
        def unused():
            return 0


    @triton.autotune(configs=[triton.Config({"BLOCK_M": 32, "BLOCK_N": 32}),
                              triton.Config({"BLOCK_M": 64, "BLOCK_N": 32})], key=["M", "N"])
    @triton.jit
    def tile_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                    stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
        rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in range(0, K, BLOCK_K):
            a = tl.load(a_ptr + rm[:, None] * stride_am + (k + rk)[None, :] * stride_ak)
            b = tl.load(b_ptr + (k + rk)[:, None] * stride_bk + rn[None, :] * stride_bn)
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, acc)
""")


async def _declare_and_reanalyse(ws: Workspace, name: str, text: str, kernel_name: str):
    uri = ws.open(name, text)
    diags = [d for d in await ws.diagnostics(uri) if d.code == "TL100"]
    assert [d.message.split(" ")[0] for d in diags] == [kernel_name]
    assert "tilelens: " + kernel_name not in diags[0].message  # no unverified directive is offered
    actions = [a for a in await quick_fixes(ws, uri, diags) if a.title.startswith("Declare an example launch")]
    assert len(actions) == 1 and actions[0].is_preferred and actions[0].edit is None  # resolved on demand
    resolved = await ws.client.code_action_resolve_async(actions[0])
    assert resolved.edit is not None, "the fix found no launch that compiles"
    fixed = apply(text, resolved, uri)
    return fixed, await ws.diagnostics(ws.save(name, fixed))


async def test_the_tl100_fix_inserts_a_launch_that_compiles_and_is_analysed(ws: Workspace):
    fixed, after = await _declare_and_reanalyse(ws, "lonely.py", NO_LAUNCH, "lonely_kernel")
    assert "# tilelens: lonely_kernel[(1,)](x_ptr=fp32[32], BLOCK=32)\n@triton.jit" in fixed
    assert after == []  # no TL100, no TL010/TL020: the inserted launch compiled and analysed clean
    [(_, title, _), _] = await lens_titles(ws, ws.uri("lonely.py"))
    assert title == "tilelens: 1 launch · 1 config · clean"


async def test_the_tl100_fix_gives_an_autotuned_matmul_a_launch_without_self_made_races(ws: Workspace):
    fixed, after = await _declare_and_reanalyse(ws, "tile_matmul.py", MATMUL_NO_LAUNCH, "tile_matmul")
    inserted = [line for line in fixed.splitlines() if line.startswith("# tilelens:")]
    assert inserted[0] == "# tilelens: tile_matmul[(2, 2)]("  # the two axes the kernel reads
    assert "stride_am=128, stride_ak=1" in fixed and "BLOCK_M=" not in fixed  # the autotuner supplies it
    assert after == [], [(d.code, d.message) for d in after]
    [(_, title, _), _] = await lens_titles(ws, ws.uri("tile_matmul.py"))
    assert title == "tilelens: 1 launch · 2 configs · clean"


async def test_the_declare_launch_command_applies_the_edit_for_clients_that_cannot_resolve(ws: Workspace):
    uri = ws.open("lonely_cmd.py", NO_LAUNCH)
    await ws.diagnostics(uri)
    ws.client.applied_edits.clear()
    answer = plain(
        await ws.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tilelens.declareLaunch", arguments=[uri, "lonely_kernel"])
        )
    )
    assert answer == {"applied": True}
    [applied] = ws.client.applied_edits
    [edit] = applied.edit.changes[uri]
    assert edit.range.start == edit.range.end == types.Position(line=4, character=0)  # above @triton.jit
    assert edit.new_text.splitlines()[-1] == "# tilelens: lonely_kernel[(1,)](x_ptr=fp32[32], BLOCK=32)"


async def test_a_kernel_the_fix_cannot_launch_gets_a_message_not_a_broken_launch(ws: Workspace):
    broken = NO_LAUNCH.replace(
        "tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)", "tl.store(x_ptr + tl.arange(0, BLOCK), undefined_name)"
    )
    uri = ws.open("unlaunchable.py", broken)
    diags = [d for d in await ws.diagnostics(uri) if d.code == "TL100"]
    [action] = [a for a in await quick_fixes(ws, uri, diags) if a.title.startswith("Declare")]
    resolved = await ws.client.code_action_resolve_async(action)
    assert resolved.edit is None
    message = await ws.message(lambda m: "no example launch of lonely_kernel compiles" in m)
    assert "undefined_name" in message


# ---------------------------------------------------------------- TL003: compute in 64 bits


async def test_the_int64_fix_widens_the_program_id_and_the_overflow_is_gone(ws: Workspace):
    action, fixed, after = await fix_and_reanalyse(ws, "row_sum.py", ROW_SUM, "TL003", "Compute in 64 bits")
    assert action.is_preferred and action.kind == types.CodeActionKind.QuickFix
    assert fixed.splitlines()[OVERFLOW_LINE].strip() == "row_start = row.to(tl.int64) * stride_row"
    assert "TL003" not in codes(after)
    assert after == []  # the out-of-bounds load the wrapped offset caused is gone too


async def test_the_int64_fix_widens_a_subscripted_tile_index(ws: Workspace):
    action, fixed, after = await fix_and_reanalyse(ws, "tile_offsets.py", TILE_OFFSETS, "TL003", "Compute in 64 bits")
    assert "offs = rows[:, None].to(tl.int64) * stride + cols[None, :]" in fixed
    assert "TL003" not in codes(after)


# ---------------------------------------------------------------- TL020: did you mean


async def test_the_did_you_mean_fix_replaces_a_misspelt_dtype(ws: Workspace):
    text = CLEAN.replace("fp32[16]", "fp33[16]")
    action, fixed, after = await fix_and_reanalyse(ws, "dtype_typo.py", text, "TL020", "Replace 'fp33' with 'fp32'")
    assert action.is_preferred and fixed == CLEAN
    assert after == []


async def test_the_did_you_mean_fix_replaces_a_misspelt_kernel_name(ws: Workspace):
    text = (
        CLEAN.replace("# tilelens: k[", "# tilelens: kk[")
        .replace("def k(", "def kernel_k(")
        .replace("# tilelens: kk[", "# tilelens: kernel_c[")
    )
    action, fixed, after = await fix_and_reanalyse(ws, "kernel_typo.py", text, "TL020", "Replace 'kernel_c' with 'kernel_k'")
    assert "# tilelens: kernel_k[(1,)]" in fixed
    assert after == []


async def test_the_did_you_mean_fix_replaces_a_misspelt_parameter_name(ws: Workspace):
    text = PARAMS.replace("n_cols=100", "n_col=100")
    action, fixed, after = await fix_and_reanalyse(ws, "param_typo.py", text, "TL020", "Replace 'n_col' with 'n_cols'")
    assert action.is_preferred and fixed == PARAMS
    assert after == []


PARAMS = kernel("""
    import triton
    import triton.language as tl

    # tilelens: row_kernel[(4,)](fp32[4, 100], n_cols=100, BLOCK=128)
    @triton.jit
    def row_kernel(x_ptr, n_cols, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + tl.program_id(0) * n_cols + offs, 1.0, mask=offs < n_cols)
""")


# ---------------------------------------------------------------- suppression


async def test_the_suppress_fix_silences_an_error_on_its_line(ws: Workspace):
    action, fixed, after = await fix_and_reanalyse(ws, "suppress_tl001.py", ADD_BUGGY, "TL001", "Suppress TL001")
    assert not action.is_preferred
    assert fixed.splitlines()[UNMASKED_LINE].endswith("x = tl.load(x_ptr + offs)  # tilelens: ignore[TL001]")
    assert after == []


async def test_the_suppress_fix_silences_a_hint_on_the_def_line(ws: Workspace):
    action, fixed, after = await fix_and_reanalyse(ws, "suppress_tl100.py", NO_LAUNCH, "TL100", "Suppress TL100")
    assert "def lonely_kernel(x_ptr, BLOCK: tl.constexpr):  # tilelens: ignore[TL100]" in fixed
    assert after == []


async def test_a_suppression_on_the_line_above_silences_the_line_below(ws: Workspace):
    text = ADD_BUGGY.replace(
        "    x = tl.load(x_ptr + offs)\n", "    # tilelens: ignore[TL001]\n    x = tl.load(x_ptr + offs)\n"
    )
    uri = ws.open("above.py", text)
    assert await ws.diagnostics(uri) == []


async def test_an_unused_suppression_is_an_information_diagnostic_on_the_comment(ws: Workspace):
    text = CLEAN.replace(
        "tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)", "tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)  # tilelens: ignore[TL001]"
    )
    uri = ws.open("unused.py", text)
    [d] = await ws.diagnostics(uri)
    line = text.splitlines()[d.range.start.line]
    assert (d.code, d.severity) == ("TL060", types.DiagnosticSeverity.Information)
    assert line[d.range.start.character : d.range.end.character] == "# tilelens: ignore[TL001]"


async def test_a_second_code_joins_the_existing_suppression(ws: Workspace):
    text = ADD_BUGGY.replace("x = tl.load(x_ptr + offs)", "x = tl.load(x_ptr + offs)  # tilelens: ignore[TL002]")
    uri = ws.open("join.py", text)
    diags = [d for d in await ws.diagnostics(uri) if d.code == "TL001"]
    [action] = [a for a in await quick_fixes(ws, uri, diags) if a.title.startswith("Suppress")]
    assert apply(text, action, uri).splitlines()[UNMASKED_LINE].endswith("# tilelens: ignore[TL002, TL001]")


# ---------------------------------------------------------------- code lens


async def lens_titles(ws: Workspace, uri: str) -> list[tuple[int, str, str]]:
    lenses = await ws.client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return [(lens.range.start.line, lens.command.title, lens.command.command) for lens in lenses or []]


async def test_a_clean_file_says_so_above_its_kernel(ws: Workspace):
    uri = ws.open("clean.py", CLEAN)
    assert await ws.diagnostics(uri) == []
    titles = await lens_titles(ws, uri)
    assert titles == [(4, "tilelens: 1 launch · 1 config · clean", "tilelens.showLaunches"), (4, "re-run", "tilelens.rerun")]


async def test_the_lens_counts_errors_launches_and_configs(ws: Workspace):
    uri = ws.open("lens_errors.py", TWO_CONFIGS)
    await ws.diagnostics(uri)
    [(_, title, _), _] = await lens_titles(ws, uri)
    assert title == "tilelens: 2 launches · 2 configs · 1 error"


async def test_the_lens_names_the_refusal_kind(ws: Workspace):
    uri = ws.open("lens_refused.py", INDIRECT)
    assert codes(await ws.diagnostics(uri)) == ["TL030"]
    [(_, title, _), _] = await lens_titles(ws, uri)
    assert title == "tilelens: 1 launch · 1 config · refused: indirect-address"


async def test_a_kernel_without_a_launch_says_so_and_its_lens_declares_one(ws: Workspace):
    name = "lens_none.py"
    uri = ws.open(name, NO_LAUNCH)
    await ws.diagnostics(uri)
    [(line, title, _), (_, declare, command)] = await lens_titles(ws, uri)
    assert (line, title, declare) == (4, "tilelens: no launch declared", "declare an example launch")
    ws.client.applied_edits.clear()
    assert command == "tilelens.declareLaunch"
    answer = plain(
        await ws.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=command, arguments=[uri, "lonely_kernel"])
        )
    )
    assert answer == {"applied": True}
    [applied] = ws.client.applied_edits
    fixed = apply(NO_LAUNCH, applied, uri)
    assert await ws.diagnostics(ws.save(name, fixed)) == []
    [(_, title, _), (_, rerun, _)] = await lens_titles(ws, uri)
    assert (title, rerun) == ("tilelens: 1 launch · 1 config · clean", "re-run")


async def test_a_file_outside_the_workspace_says_why_it_was_not_analysed(ws: Workspace, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "add.py"
    outside.write_text(CLEAN)
    uri = outside.as_uri()
    ws.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=CLEAN)
        )
    )
    await ws.diagnostics(uri)
    [(_, title, _), _] = await lens_titles(ws, uri)
    assert "outside the workspace" in title and "allowOutsideWorkspace" in title


async def test_the_lens_command_answers_the_per_launch_summary(ws: Workspace):
    uri = ws.open("summary.py", TWO_CONFIGS)
    await ws.diagnostics(uri)
    answer = plain(
        await ws.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tilelens.showLaunches", arguments=[uri, "add_kernel"])
        )
    )
    rows = answer["launches"]
    assert [(r["config"]["BLOCK"], r["grid"], r["verdict"]) for r in rows] == [
        (256, [4, 1, 1], "1 error"),
        (128, [8, 1, 1], "1 error"),
    ]
    assert answer["text"].splitlines()[0] == "tilelens: add_kernel: 2 launches · 2 configs · 1 error"


async def test_the_rerun_command_analyses_the_file_again(ws: Workspace):
    uri = ws.open("rerun.py", CLEAN)
    await ws.diagnostics(uri)
    before = (await ws.stats())["runs"]
    ws.client.diagnostics.pop(uri, None)
    await ws.client.workspace_execute_command_async(types.ExecuteCommandParams(command="tilelens.rerun", arguments=[uri]))
    assert await ws.diagnostics(uri) == []
    assert (await ws.stats())["runs"] == before + 1


async def test_publishing_asks_the_client_to_refresh_its_lenses(ws: Workspace, client):
    if not ws.client.capabilities.workspace.code_lens or not ws.client.capabilities.workspace.code_lens.refresh_support:
        pytest.skip("this client snapshot has no codeLens/refresh")
    before = ws.client.lens_refreshes
    uri = ws.open("refresh.py", CLEAN)
    await ws.diagnostics(uri)
    for _ in range(250):  # the refresh request follows the publish: wait for it, not for a time
        if ws.client.lens_refreshes > before:
            break
        await asyncio.sleep(0.02)
    assert ws.client.lens_refreshes > before
