"""A file's result names the user's own files its import ran besides it (`FileResult.sources`): the
editor re-analyses an open file when one of them is saved, so a verdict made from a helper's old text
does not stand. Installed code and the file itself are not named; neither is the report's JSON."""

from __future__ import annotations

import os
import textwrap

from tilelens_lsp.cli.report import json_document
from tilelens_lsp.pipeline import Imports, WarmState, analyze_path

HELPER = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def load_upto(ptr, offs, n):
        return tl.load(ptr + offs, mask=offs < n, other=0.0)
""")

KERNEL = textwrap.dedent("""\
    import triton
    import triton.language as tl
    from pkg.loaders import load_upto


    @triton.jit
    def gather(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, load_upto(x_ptr, offs, n), mask=offs < n)
    # tilelens: gather[(4,)](fp32[1000], fp32[1000], 1000, BLOCK=256)
""")


def _workspace(tmp_path, helper: str = HELPER):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "loaders.py").write_text(helper)
    path = tmp_path / "gather.py"
    path.write_text(KERNEL)
    return path


def test_the_helpers_and_their_package_are_named_and_nothing_installed(tmp_path):
    path = _workspace(tmp_path)
    for state in (WarmState(), WarmState(imports=Imports(reuse=True))):
        for _ in range(2):  # the second time, a warm worker keeps the helpers: they are still named
            result = analyze_path(path, tmp_path, state=state)
            assert [launch.status for launch in result.launches] == ["analyzed"]
            real = os.path.realpath(tmp_path)
            assert result.sources == (os.path.join(real, "pkg", "__init__.py"), os.path.join(real, "pkg", "loaders.py"))


def test_a_helper_that_fails_to_import_is_named(tmp_path):
    path = _workspace(tmp_path, HELPER + "\nthis is not python\n")
    result = analyze_path(path, tmp_path)
    assert [d.code for d in result.diagnostics] == ["TL010"]
    assert os.path.join(os.path.realpath(tmp_path), "pkg", "loaders.py") in result.sources


def test_the_report_json_leaves_them_out(tmp_path):
    result = analyze_path(_workspace(tmp_path), tmp_path)
    assert result.sources
    assert "sources" not in json_document([result], "3.9.0", "cuda:89")["files"][0]


READS_DATA = textwrap.dedent("""\
    import json
    import os

    import triton
    import triton.language as tl

    HERE = os.path.dirname(__file__)
    BLOCK = tl.constexpr(json.load(open(os.path.join(HERE, "blocks.json")))["block"])
    try:
        TUNED = open(os.path.join(HERE, "tuned.json")).read()  # written by a later tuning run
    except FileNotFoundError:
        TUNED = None


    @triton.jit
    def load_upto(ptr, offs, n):
        return tl.load(ptr + offs, mask=offs < n, other=0.0)
""")


def test_data_files_the_import_read_are_named_even_when_their_reader_is_kept(tmp_path):
    """A JSON of block sizes read by a helper at import made the verdict too: the editor re-runs the
    kernel when it changes (a missing one read for, when it is written). A warm worker that keeps the
    helper the second time still names them."""
    path = _workspace(tmp_path, READS_DATA)
    (tmp_path / "pkg" / "blocks.json").write_text('{"block": 64}')
    real = os.path.realpath(tmp_path)
    state = WarmState(imports=Imports(reuse=True))
    ran = []
    for _ in range(2):
        result = analyze_path(path, tmp_path, state=state)
        ran.append("pkg.loaders" in state.imports.executed)
        assert [launch.status for launch in result.launches] == ["analyzed"]
        assert os.path.join(real, "pkg", "blocks.json") in result.sources
        assert os.path.join(real, "pkg", "tuned.json") in result.sources
    assert ran == [True, False]  # the second time the helper was kept, not run


def test_a_data_file_read_before_the_import_failed_is_named(tmp_path):
    path = _workspace(tmp_path, READS_DATA)
    (tmp_path / "pkg" / "blocks.json").write_text("{not json")
    result = analyze_path(path, tmp_path, state=WarmState(imports=Imports(reuse=True)))
    assert [d.code for d in result.diagnostics] == ["TL010"]
    assert os.path.join(os.path.realpath(tmp_path), "pkg", "blocks.json") in result.sources
