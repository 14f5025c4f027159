"""Example launches for TL100 (tilelens_lsp/suggest.py, `tilelens-lsp suggest`): each suggestion is read
back by the file's own directive scanner and compiles as written; inserted, the file analyses with no
TL100, no TL010/TL020 and no race the placeholder grid made; `--write` keeps every other byte."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilelens_lsp import suggest
from tilelens_lsp.cli import suggest as suggest_cli
from tilelens_lsp.compile import synth
from tilelens_lsp.launches.kernels import kernel_head
from tilelens_lsp.launches.scanner import parse_directives
from tilelens_lsp.pipeline import analyze_path

KERNELS = """import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


@triton.jit
def rows_kernel(x_ptr, y_ptr, stride_xm, stride_xn, stride_ym, stride_yn, N, BLOCK_M: tl.constexpr,
                BLOCK_N: tl.constexpr):
    rm = tl.program_id(1) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rm[:, None] * stride_xm + rn[None, :] * stride_xn, mask=rn[None, :] < N)
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, x, mask=rn[None, :] < N)


@triton.jit
def no_program_id_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


@triton.jit
def dtype_kernel(x_ptr, OUT_DTYPE: tl.constexpr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.zeros((BLOCK,), OUT_DTYPE))


@triton.jit
def callable_kernel(x_ptr, OP: tl.constexpr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), OP(tl.zeros((BLOCK,), tl.float32)))


# tilelens: declared_kernel[(1,)](fp32[16], BLOCK=16)
@triton.jit
def declared_kernel(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
"""


@pytest.fixture(scope="module")
def kernels_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("suggest") / "kernels.py"
    path.write_text(KERNELS)
    return path


@pytest.fixture(scope="module")
def found(kernels_file):
    return {s.kernel: s for s in suggest.suggest_launches(kernels_file, kernels_file.parent)}


def test_every_kernel_without_a_launch_is_answered_and_no_other(found):
    assert sorted(found) == ["callable_kernel", "dtype_kernel", "no_program_id_kernel", "rows_kernel", "scale_kernel"]


def test_each_suggestion_reads_back_as_one_launch_of_its_kernel(found):
    for name in ("scale_kernel", "rows_kernel", "no_program_id_kernel", "dtype_kernel"):
        launches, errors = parse_directives("\n".join(found[name].lines), {name})
        assert errors == [] and [x.kernel for x in launches] == [name]


def test_the_grid_spans_only_the_axes_the_kernel_reads(found):
    assert "scale_kernel[(2,)](" in "\n".join(found["scale_kernel"].lines)
    assert "rows_kernel[(1, 2)](" in "\n".join(found["rows_kernel"].lines)
    assert "no_program_id_kernel[(1,)](" in "\n".join(found["no_program_id_kernel"].lines)


def _launch_text(s) -> str:
    """The directive of a suggestion on one line, as the scanner joins its continuation lines."""
    return " ".join(x[len("# tilelens:") :].strip() for x in s.lines if x.startswith("# tilelens:"))


def test_strides_of_one_tensor_are_row_major(found):
    text = _launch_text(found["rows_kernel"])
    assert "stride_xm=128, stride_xn=1" in text and "stride_ym=128, stride_yn=1" in text


def test_tensors_are_as_small_as_the_footprint_allows(found):
    # two programs of 32 elements: 64; one program of 32 rows of stride 128 on axis 1 (two programs): 8192
    assert "x_ptr=fp32[64], out_ptr=fp32[64]" in _launch_text(found["scale_kernel"])
    assert "x_ptr=fp32[8192], y_ptr=fp32[8192]" in _launch_text(found["rows_kernel"])
    assert "x_ptr=fp32[32]" in _launch_text(found["no_program_id_kernel"])


def test_a_dtype_valued_constexpr_gets_a_dtype(found):
    assert "OUT_DTYPE=fp32" in _launch_text(found["dtype_kernel"])


def test_a_kernel_no_directive_can_launch_gets_a_reason_not_a_launch(found):
    s = found["callable_kernel"]  # a function-valued constexpr: no directive value is callable
    assert s.lines == () and "no example launch of callable_kernel compiles" in s.error


def test_inserted_the_suggestions_analyse_with_no_tl100_and_no_error(found, kernels_file, tmp_path):
    text = KERNELS
    for s in sorted((s for s in found.values() if s.lines), key=lambda s: -kernel_head(text, s.kernel)[0]):
        first, indent = kernel_head(text, s.kernel)
        lines = text.split("\n")
        lines[first - 1 : first - 1] = [indent + x for x in s.lines]
        text = "\n".join(lines)
    out = tmp_path / "kernels.py"
    out.write_text(text)
    result = analyze_path(out, tmp_path)
    codes = sorted(d.code for d in result.all_diagnostics())
    assert codes == ["TL100"], [(d.code, d.message) for d in result.all_diagnostics()]  # callable_kernel's only
    assert len(result.launches) == 5  # declared_kernel's and the four inserted


def test_long_launches_wrap_over_continuation_lines_that_read_back():
    launch = "k[(2,)](" + ", ".join(f"arg_number_{i}=fp32[4194304]" for i in range(8)) + ", BLOCK=32)"
    lines = suggest.directive_lines(launch, width=100)
    assert len(lines) > 2 and all(len(x) <= 100 for x in lines) and lines[-1] == "# tilelens: )"
    [one], errors = parse_directives("\n".join(lines), {"k"})
    assert errors == [] and len(one.args) + len(one.kwargs) == 9


def test_layout_strides_group_by_tensor():
    assert synth.layout_strides(["stride_am", "stride_ak", "stride_bk", "stride_bn", "x_row_stride"]) == {
        "stride_am": 128,
        "stride_ak": 1,
        "stride_bk": 128,
        "stride_bn": 1,
    }
    assert synth.layout_strides(["stride_b", "stride_h", "stride_t", "stride_d"]) == {
        "stride_b": 128**3,
        "stride_h": 128**2,
        "stride_t": 128,
        "stride_d": 1,
    }


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "suggest", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_the_cli_prints_launches_and_names_what_it_cannot_launch(kernels_file):
    run = _cli(str(kernels_file), cwd=kernels_file.parent)
    assert run.returncode == 1  # callable_kernel has no launch
    assert "# tilelens: scale_kernel[(2,)](" in run.stdout and "callable_kernel: no example launch" in run.stderr
    assert kernels_file.read_text() == KERNELS


def test_cli_write_inserts_above_the_decorators_and_keeps_every_other_byte(tmp_path):
    original = KERNELS.replace("\n", "\r\n").encode()
    path = tmp_path / "crlf.py"
    path.write_bytes(original)
    run = _cli(str(path), "--write", "--kernel", "scale_kernel", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    after = path.read_bytes()
    assert b"\r\n# tilelens: scale_kernel[(2,)](" in after and after.count(b"\n") == after.count(b"\r\n")
    inserted = after.split(b"@triton.jit\r\ndef scale_kernel")[0]
    assert after.replace(inserted, original.split(b"@triton.jit\r\ndef scale_kernel")[0], 1) == original
    result = analyze_path(path, tmp_path)
    assert [d.code for d in result.all_diagnostics() if "scale_kernel" in d.message] == []


def _failing_write(real):
    """os.write that writes a few bytes, then finds the disk full."""
    calls = []

    def write(fd, data):
        calls.append(fd)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fd, bytes(data[:5]))

    return write


def _failing_replace(src, dst):
    raise OSError(errno.EIO, "Input/output error")


@pytest.mark.parametrize("where", ["write", "replace"])
def test_a_write_that_fails_part_way_leaves_the_file_as_it_was(tmp_path, monkeypatch, where):
    path = tmp_path / "k.py"
    path.write_bytes(KERNELS.encode())
    path.chmod(0o640)
    fail = _failing_write(os.write) if where == "write" else _failing_replace
    monkeypatch.setattr(os, where, fail)
    with pytest.raises(OSError):
        suggest_cli.replace_if_unchanged(path, KERNELS, b"# tilelens: launches\n" + KERNELS.encode() * 2)
    monkeypatch.undo()
    assert path.read_bytes() == KERNELS.encode() and path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"]  # no temporary file left behind


def test_the_rewritten_file_keeps_its_mode_and_is_whole(tmp_path):
    path = tmp_path / "k.py"
    path.write_bytes(KERNELS.encode())
    path.chmod(0o640)
    data = b"# tilelens: launches\n" + KERNELS.encode()
    suggest_cli.replace_if_unchanged(path, KERNELS, data)
    assert path.read_bytes() == data and path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["k.py"]
    with pytest.raises(ValueError, match="changed"):  # the text it was made for, or nothing
        suggest_cli.replace_if_unchanged(path, KERNELS, b"")
    assert path.read_bytes() == data


def test_lines_are_verified_as_the_scanner_reads_them(kernels_file):
    from tilelens_lsp.pipeline import import_module

    module = import_module(kernels_file, kernels_file.parent)
    good = ("# tilelens: scale_kernel[(2,)](fp32[64], fp32[64], 64, BLOCK=32)",)
    ttir, error = suggest.compile_as_written(module, "scale_kernel", good, "cuda:89")
    assert error == "" and "tt.get_program_id x" in ttir
    for bad, why in [
        (("# tilelens: scale_kernel[(2,)](fp33[64], fp32[64], 64, BLOCK=32)",), "fp33"),
        (("# tilelens: scale_kernel[(2,)](fp32[64], 64, BLOCK=32)",), ""),
        (("# tilelens: other_kernel[(2,)](fp32[64])",), ""),
    ]:
        ttir, error = suggest.compile_as_written(module, "scale_kernel", bad, "cuda:89")
        assert ttir == "" and error and why in error, (bad, error)


def test_a_python_path_is_the_callers_relative_path_and_a_bare_name_stays_a_name(tmp_path, monkeypatch):
    from tilelens_lsp.cli.options import interpreter_arg

    monkeypatch.chdir(tmp_path)
    assert interpreter_arg(".venv/bin/python") == str(tmp_path / ".venv" / "bin" / "python")
    assert interpreter_arg("python3") == "python3"


GATHERS = """import triton
import triton.language as tl


@triton.jit
def embedding_kernel(ids_ptr, weight_ptr, out_ptr, n_tokens, dim, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    tok = tl.load(ids_ptr + pid)
    cols = tl.arange(0, BLOCK_D)
    mask = cols < dim
    row = tl.load(weight_ptr + tok * dim + cols, mask=mask)
    tl.store(out_ptr + pid * dim + cols, row, mask=mask)


@triton.jit
def rows_kernel(x_ptr, y_ptr, n_rows, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, x, mask=mask)


@triton.jit
def _row_of(p, i):
    return tl.load(p + i)


@triton.jit
def helper_gather_kernel(src, dst, rows_of, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    r = _row_of(rows_of, offs)     # an index loaded in a helper: the source reading does not see it
    tl.store(dst + offs, tl.load(src + r, mask=m), mask=m)
"""


@pytest.fixture(scope="module")
def gathers_written(tmp_path_factory) -> Path:
    """GATHERS with `tilelens-lsp suggest --write`'s launches inserted."""
    path = tmp_path_factory.mktemp("gathers") / "gathers.py"
    path.write_text(GATHERS)
    run = _cli(str(path), "--write", cwd=path.parent)
    assert run.returncode == 0, run.stderr
    return path


def _written_launch(path: Path, kernel: str) -> str:
    lines = path.read_text().split("\n")
    directives = [x[len("# tilelens:") :].strip() for x in lines if x.startswith("# tilelens:")]
    text = " ".join(directives)
    start = text.index(f"{kernel}[")
    return text[start : text.index(") ", start) + 1] if ") " in text[start:] else text[start:]


def test_an_index_tensor_is_declared_with_a_range_so_the_gather_it_feeds_is_analysed(gathers_written):
    assert ".values(0, 128)" in _written_launch(gathers_written, "embedding_kernel")
    check = subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", "--format", "json", str(gathers_written)],
        cwd=gathers_written.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    import json

    [result] = json.loads(check.stdout)["files"]
    assert sorted((r["kernel"], r["status"]) for r in result["launches"]) == [
        ("embedding_kernel", "analyzed"),
        ("helper_gather_kernel", "analyzed"),
        ("rows_kernel", "analyzed"),
    ]
    assert [d["code"] for r in result["launches"] for d in r["diagnostics"]] == []


def test_placeholder_scalars_fit_the_grid_the_tiles_and_the_tensor_sizes(gathers_written):
    # two programs, one row each: two rows; a 32-wide tile covers 32 columns; rows of stride 128
    rows = _written_launch(gathers_written, "rows_kernel")
    assert "rows_kernel[(2,)](" in rows and "n_rows=2, n_cols=32, stride=128" in rows
    assert "x_ptr=fp32[256], y_ptr=fp32[256]" in rows
    # two tokens of a 128-row table of 32-wide rows: ids hold two tokens, the table 128 x 32
    emb = _written_launch(gathers_written, "embedding_kernel")
    assert "ids_ptr=i32[2].values(0, 128), weight_ptr=fp32[4096], out_ptr=fp32[64]" in emb
    assert "n_tokens=2" in emb and "dim=32" in emb
    # two programs of a 32-wide tile: n covers the 64 elements they reach
    assert "n=64, BLOCK=32" in _written_launch(gathers_written, "helper_gather_kernel")


def test_an_index_the_source_reading_misses_is_ranged_after_the_analysis_refuses_it(gathers_written):
    assert "rows_of=i32[64].values(0, 128)" in _written_launch(gathers_written, "helper_gather_kernel")
