"""What the analysis runs and compiles is the file as it is now, whatever its mtime says.

A `.pyc` left beside the user's file by their own runs is never executed: Python trusts a cached
`.pyc` whose recorded source mtime (whole seconds) and size match, so an edit that keeps the file's
size within the same second would otherwise run the module's code from before the edit. And a
kernel's source is read again on every analysis: `linecache` trusts an unchanged size and mtime, so
a same-size file put back with its old mtime (`cp -p`, `rsync -t`) had Triton compile the old kernel."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import textwrap

import pytest

from tilelens_lsp.pipeline import Imports, WarmState, analyze_path

SOURCE = textwrap.dedent("""\
    import triton
    import triton.language as tl

    OFFSET = tl.constexpr({offset})


    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK) + OFFSET, 1.0)
    # tilelens: k[(1,)](fp32[16], BLOCK=16)
""")


def test_a_stale_pyc_with_the_same_mtime_and_size_is_not_executed(tmp_path):
    path = tmp_path / "offset_kernel.py"
    path.write_text(SOURCE.format(offset=0))
    stamp = os.stat(path).st_mtime
    py_compile.compile(str(path), cfile=importlib.util.cache_from_source(str(path)), doraise=True)
    path.write_text(SOURCE.format(offset=1))  # the same size
    os.utime(path, (stamp, stamp))  # saved within the same second
    codes = [d.code for launch in analyze_path(path, tmp_path).launches for d in launch.diagnostics]
    assert "TL001" in codes  # the store one element past the end, as the file now says


HELPER_KERNEL = textwrap.dedent("""\
    import triton
    import triton.language as tl

    from offset_consts import OFFSET


    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK) + OFFSET, 1.0)
    # tilelens: k[(1,)](fp32[16], BLOCK=16)
""")


@pytest.mark.parametrize("reuse", [False, True], ids=["fresh", "warm worker"])
def test_a_helpers_stale_pyc_is_not_executed_either(tmp_path, reuse):
    helper = tmp_path / "offset_consts.py"
    helper.write_text("import triton.language as tl\nOFFSET = tl.constexpr(0)\n")
    stamp = os.stat(helper).st_mtime
    py_compile.compile(str(helper), cfile=importlib.util.cache_from_source(str(helper)), doraise=True)
    helper.write_text("import triton.language as tl\nOFFSET = tl.constexpr(1)\n")
    os.utime(helper, (stamp, stamp))
    path = tmp_path / "uses_consts.py"
    path.write_text(HELPER_KERNEL)
    state = WarmState(imports=Imports(reuse=reuse))
    codes = [d.code for launch in analyze_path(path, tmp_path, state=state).launches for d in launch.diagnostics]
    assert "TL001" in codes


SWAPPED = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK) {op} 1, 1.0)
    # tilelens: k[(1,)](fp32[16], BLOCK=16)
""")


def test_a_kernel_replaced_with_the_same_size_and_mtime_is_compiled_as_it_now_reads(tmp_path):
    path = tmp_path / "swapped_kernel.py"
    path.write_text(SWAPPED.format(op="*"))  # in bounds
    stamp = os.stat(path).st_mtime_ns
    state = WarmState(imports=Imports(reuse=True))  # a warm worker: it read this file before
    first = analyze_path(path, tmp_path, state=state)
    assert [d.code for launch in first.launches for d in launch.diagnostics] == []
    path.write_text(SWAPPED.format(op="+"))  # one past the end, the same size
    os.utime(path, ns=(stamp, stamp))
    second = analyze_path(path, tmp_path, state=state)
    assert "TL001" in [d.code for launch in second.launches for d in launch.diagnostics]


HELPER_OUTSIDE = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def step():
        return {step}
""")

USES_STEP = textwrap.dedent("""\
    import triton
    import triton.language as tl

    from outside_step import step


    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK) * step(), 1.0)
    # tilelens: k[(1,)](fp32[16], BLOCK=16)
""")


def test_a_jit_helper_outside_the_workspace_is_read_again_too(tmp_path, monkeypatch):
    """A folder of the user's on sys.path (their PYTHONPATH), not under any import root."""
    extra, ws = tmp_path / "extra", tmp_path / "ws"
    extra.mkdir()
    ws.mkdir()
    monkeypatch.syspath_prepend(str(extra))
    helper = extra / "outside_step.py"
    helper.write_text(HELPER_OUTSIDE.format(step=1))
    stamp = os.stat(helper).st_mtime_ns
    (ws / "uses_step.py").write_text(USES_STEP)
    state = WarmState(imports=Imports(reuse=True))
    first = analyze_path(ws / "uses_step.py", ws, state=state)
    assert [d.code for launch in first.launches for d in launch.diagnostics] == []
    helper.write_text(HELPER_OUTSIDE.format(step=2))  # every other lane past the end, the same size
    os.utime(helper, ns=(stamp, stamp))
    second = analyze_path(ws / "uses_step.py", ws, state=state)
    assert "TL001" in [d.code for launch in second.launches for d in launch.diagnostics]
