"""analyze_path end to end, in process: every launch form, dtype, decorator config, compile and import error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support import FIXTURES, access, codes, launch_at, launches_at, line_of, only
from tilelens_lsp.launches.specs import DTYPES
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.settings import Settings

FORMS = FIXTURES / "launch_forms.py"


@pytest.fixture(scope="module")
def forms():
    return analyze_path(FORMS, FIXTURES)


def form(forms, needle: str):
    return launch_at(forms, line_of(FORMS, needle))


# ---------------------------------------------------------------- launch forms


def test_every_launch_form_is_accepted_without_a_directive_error(forms):
    assert [d.code for d in forms.diagnostics] == []


def test_every_launch_form_is_analyzed(forms):
    assert {launch.status for launch in forms.launches} == {"analyzed"}


def test_positional_arguments_bind_in_order(forms):
    launch = form(forms, "copy_kernel[(cdiv(N, 128),)](fp32[N]")
    assert (launch.grid, access(launch, "store", "out_ptr").elements) == ((8, 1, 1), ((0, 1000),))


def test_keyword_arguments_bind_by_name(forms):
    launch = form(forms, "x_ptr=fp32[N], out_ptr=fp32[N], n=N")
    assert (access(launch, "load", "x_ptr").elements, access(launch, "store", "out_ptr").elements) == (
        ((0, 1000),),
        ((0, 1000),),
    )


def test_triton_cdiv_computes_the_grid(forms):
    assert form(forms, "copy_kernel[(triton.cdiv(N, 128),)]").grid == (8, 1, 1)


def test_int_grid_is_one_dimensional(forms):
    assert form(forms, "copy_kernel[cdiv(N, 256)]").grid == (4, 1, 1)


def test_lambda_grid_reads_the_meta_parameters(forms):
    assert form(forms, 'copy_kernel[lambda meta: (cdiv(N, meta["BLOCK"]),)]').grid == (16, 1, 1)


def test_min_limits_the_grid_and_so_the_footprint(forms):
    launch = form(forms, "copy_kernel[(min(cdiv(N, 128), 4),)]")
    assert (launch.grid, access(launch, "store", "out_ptr").elements) == ((4, 1, 1), ((0, 512),))


def test_max_computes_the_grid(forms):
    assert form(forms, "copy_kernel[(max(2, 1),)]").grid == (2, 1, 1)


def test_multi_line_directive_is_one_launch_at_its_first_line(forms):
    launch = form(forms, "copy_kernel[(cdiv(N, 512),)](")
    assert (launch.config, launch.grid) == ({"BLOCK": 512}, (2, 1, 1))


def test_two_dimensional_tensor_is_contiguous_row_major(forms):
    load = access(form(forms, "copy2d_kernel[(1,)](fp16[M, K], fp16[M, K]"), "load", "a_ptr")
    assert (load.view_shape, load.view_strides, load.elements) == ((6, 20), (20, 1), ((0, 120),))


def test_transposed_tensor_is_a_column_major_view_of_the_same_storage(forms):
    load = access(form(forms, "fp16[K, M].T"), "load", "a_ptr")
    assert (load.view_shape, load.view_strides, load.elements) == ((6, 20), (1, 6), ((0, 120),))


def test_long_form_tensor_reads_rows_of_a_larger_storage(forms):
    load = access(form(forms, "tensor(fp16, (M, K), strides=(32, 1), offset=8"), "load", "a_ptr")
    assert load.elements == tuple((r * 32, r * 32 + 20) for r in range(6))


def test_long_form_tensor_keeps_its_offset_and_storage(forms):
    load = access(form(forms, "tensor(fp16, (M, K), strides=(32, 1), offset=8"), "load", "a_ptr")
    assert (load.view_offset, load.storage, load.in_bounds) == (8, 6 * 32, True)


def test_plain_int_stride_overflows_int32(forms):
    assert "TL003" in codes(form(forms, "row_kernel[(3,)](ROWS, 2**30, BLOCK=16)"))


def test_i64_stride_is_a_64_bit_argument_and_does_not_overflow(forms):
    launch = form(forms, "row_kernel[(3,)](ROWS, i64(2**30), BLOCK=16)")
    assert launch.diagnostics == ()


# ---------------------------------------------------------------- dtypes

DTYPE_FILE = FIXTURES / "dtypes.py"
AMD_ONLY = {"fp8e4b8", "fp8e5b16"}


@pytest.fixture(scope="module")
def on_cuda():
    return analyze_path(DTYPE_FILE, FIXTURES, Settings(target="cuda:89"))


@pytest.fixture(scope="module")
def on_hip():
    return analyze_path(DTYPE_FILE, FIXTURES, Settings(target="hip:gfx942"))


def dtype_launch(result, name: str):
    """The launch whose directive line ends with `# NAME`."""
    lines = DTYPE_FILE.read_text().splitlines()
    (line,) = [i for i, text in enumerate(lines, 1) if text.endswith(f"  # {name}")]
    return launch_at(result, line)


@pytest.mark.parametrize("name", DTYPES)
def test_every_dtype_compiles_on_a_target_that_supports_it(name, on_cuda, on_hip):
    launch = dtype_launch(on_hip if name in AMD_ONLY else on_cuda, name)
    assert (launch.status, launch.diagnostics) == ("analyzed", ())


@pytest.mark.parametrize("name", DTYPES)
def test_every_dtype_footprint_counts_elements_not_bytes(name, on_cuda, on_hip):
    launch = dtype_launch(on_hip if name in AMD_ONLY else on_cuda, name)
    assert [a.elements for a in launch.accesses] == [((0, 64),), ((0, 64),)]


def test_amd_fp8_on_cuda_is_a_compile_error_naming_the_supported_formats(on_cuda):
    diag = only(dtype_launch(on_cuda, "fp8e4b8"), "TL010")
    assert "fp8e4nv" in diag.message


# ---------------------------------------------------------------- autotune and heuristics

TUNED = FIXTURES / "tuned.py"


@pytest.fixture(scope="module")
def tuned():
    return analyze_path(TUNED, FIXTURES)


def test_each_autotune_config_is_its_own_launch_record(tuned):
    records = launches_at(tuned, line_of(TUNED, "two_configs_kernel["))
    assert [r.config for r in records] == [{"BLOCK": 128}, {"BLOCK": 256}]


def test_each_autotune_config_gets_its_own_grid(tuned):
    records = launches_at(tuned, line_of(TUNED, "two_configs_kernel["))
    assert [r.grid for r in records] == [(8, 1, 1), (4, 1, 1)]


def test_configs_that_specialize_identically_compile_once(tuned):
    assert len(launches_at(tuned, line_of(TUNED, "same_ttir_kernel["))) == 1


def test_heuristic_value_is_computed_from_the_declared_arguments(tuned):
    uneven = launch_at(tuned, line_of(TUNED, "even_kernel[(cdiv(1000, 128),)]"))
    even = launch_at(tuned, line_of(TUNED, "even_kernel[(cdiv(1024, 128),)]"))
    assert (uneven.config["EVEN_N"], even.config["EVEN_N"]) == (False, True)


def test_heuristic_value_selects_the_branch_that_is_compiled(tuned):
    even = launch_at(tuned, line_of(TUNED, "even_kernel[(cdiv(1024, 128),)]"))
    assert [a.line for a in even.accesses] == [line_of(TUNED, "        tl.store(x_ptr + offs, 0.0)")]


# ---------------------------------------------------------------- compile errors

ERRORS = FIXTURES / "compile_errors.py"


@pytest.fixture(scope="module")
def compile_errors():
    return analyze_path(ERRORS, FIXTURES)


def test_type_error_in_the_kernel_is_tl010_at_the_line_triton_names(compile_errors):
    diag = only(launch_at(compile_errors, line_of(ERRORS, "type_error_kernel[")), "TL010")
    assert diag.line == line_of(ERRORS, "tl.store(x_ptr + offs * 1.5, x)")


def test_type_error_message_is_tritons(compile_errors):
    diag = only(launch_at(compile_errors, line_of(ERRORS, "type_error_kernel[")), "TL010")
    assert "invalid operands of type pointer<fp32>" in diag.message


def test_a_kernel_triton_cannot_key_is_a_compile_error_not_a_crash(compile_errors):
    # Triton computes a kernel's cache key before compiling it; a real launch raises there, so does ours
    diag = only(launch_at(compile_errors, line_of(ERRORS, "plain_function_kernel[")), "TL010")
    assert "Unsupported function referenced: <function scale_on_host>" in diag.message


def test_compile_error_launch_status(compile_errors):
    assert {launch.status for launch in compile_errors.launches} == {"compile-error"}


def test_type_error_in_a_helper_of_another_file_lands_on_the_helpers_line(compile_errors):
    diag = only(launch_at(compile_errors, line_of(ERRORS, "helper_error_kernel[")), "TL010")
    assert (diag.stack[0].path, diag.stack[0].line) == (
        "jit_helpers.py",
        line_of(FIXTURES / "jit_helpers.py", "tl.load(ptr + offs * 0.5)"),
    )


def test_type_error_in_a_helper_keeps_the_call_site_in_the_kernel_file(compile_errors):
    diag = only(launch_at(compile_errors, line_of(ERRORS, "helper_error_kernel[")), "TL010")
    assert [(f.path, f.line) for f in diag.stack[1:]] == [
        ("compile_errors.py", line_of(ERRORS, "x = load_scaled(x_ptr, offs)"))
    ]


def test_type_error_in_a_helper_carries_the_helpers_message(compile_errors):
    diag = only(launch_at(compile_errors, line_of(ERRORS, "helper_error_kernel[")), "TL010")
    assert "invalid operands of type pointer<fp32>" in diag.message


# ---------------------------------------------------------------- imports


def test_missing_package_is_tl010_at_the_import_line():
    result = analyze_path(FIXTURES / "import_missing.py", FIXTURES)
    assert [(d.code, d.line) for d in result.diagnostics] == [
        ("TL010", line_of(FIXTURES / "import_missing.py", "import not_a_real_package_xyz"))
    ]


def test_missing_package_message_names_the_package():
    result = analyze_path(FIXTURES / "import_missing.py", FIXTURES)
    assert "not_a_real_package_xyz" in result.diagnostics[0].message


def test_module_raising_at_import_is_tl010_at_the_raising_line():
    result = analyze_path(FIXTURES / "import_raises.py", FIXTURES)
    assert [(d.code, d.line) for d in result.diagnostics] == [
        ("TL010", line_of(FIXTURES / "import_raises.py", "raise RuntimeError"))
    ]


def test_main_block_does_not_run(tmp_path: Path):
    script = Path(shutil.copy(FIXTURES / "main_guard.py", tmp_path / "main_guard.py"))
    analyze_path(script, tmp_path)
    assert not (tmp_path / "main_block_ran.marker").exists()


def test_file_with_a_main_block_is_still_analyzed(tmp_path: Path):
    script = Path(shutil.copy(FIXTURES / "main_guard.py", tmp_path / "main_guard.py"))
    assert [launch.status for launch in analyze_path(script, tmp_path).launches] == ["analyzed"]


def test_package_module_with_relative_imports_is_imported_by_its_dotted_name():
    root = FIXTURES / "pkgroot"
    result = analyze_path(root / "tlfix_pkg" / "kernels.py", root)
    assert ([d.code for d in result.diagnostics], [launch.status for launch in result.launches]) == ([], ["analyzed"])


def test_package_module_is_reported_by_its_workspace_path():
    root = FIXTURES / "pkgroot"
    assert analyze_path(root / "tlfix_pkg" / "kernels.py", root).path == "tlfix_pkg/kernels.py"


# ---------------------------------------------------------------- declared launches, never evaluated


def test_directive_that_calls_a_function_is_tl020_and_never_runs(tmp_path: Path):
    marker = tmp_path / "pwned"
    kernel = tmp_path / "evil.py"
    kernel.write_text(
        (FIXTURES / "graph_kernels.py")
        .read_text()
        .replace(
            "# tilelens: tail_kernel", f"# tilelens: X = __import__('os').system('touch {marker}')\n# tilelens: tail_kernel"
        )
    )
    result = analyze_path(kernel, tmp_path)
    assert ("TL020" in [d.code for d in result.diagnostics], marker.exists()) == (True, False)


def test_kernel_without_a_launch_gets_one_hint_on_its_def_line(tmp_path: Path):
    kernel = tmp_path / "k.py"
    kernel.write_text("\n".join(line for line in FORMS.read_text().splitlines() if "row_kernel[" not in line))
    result = analyze_path(kernel, tmp_path)
    assert [(d.code, d.line) for d in result.diagnostics] == [("TL100", line_of(kernel, "def row_kernel("))]


# ---------------------------------------------------------------- a long-lived process analyses many files


def folder_with_helper(root: Path, name: str, helper: str) -> Path:
    """`root/name/` holding fill_via_put.py and the given helper as put_helpers.py."""
    folder = root / name
    folder.mkdir()
    shutil.copy(FIXTURES / "fill_via_put.py", folder / "fill_via_put.py")
    shutil.copy(FIXTURES / helper, folder / "put_helpers.py")
    return folder / "fill_via_put.py"


def all_codes(result) -> list[str]:
    return sorted(d.code for d in result.all_diagnostics())


def test_same_named_helper_module_of_another_folder_is_not_reused(tmp_path: Path):
    masked = folder_with_helper(tmp_path, "a", "put_helpers_masked.py")
    unmasked = folder_with_helper(tmp_path, "b", "put_helpers_unmasked.py")
    analyze_path(masked, tmp_path)
    assert all_codes(analyze_path(unmasked, tmp_path)) == ["TL001"]


def test_edited_helper_module_is_imported_again(tmp_path: Path):
    kernel = folder_with_helper(tmp_path, "a", "put_helpers_masked.py")
    analyze_path(kernel, tmp_path)
    shutil.copy(FIXTURES / "put_helpers_unmasked.py", kernel.parent / "put_helpers.py")
    assert all_codes(analyze_path(kernel, tmp_path)) == ["TL001"]


def test_result_for_another_workspace_root_has_paths_relative_to_that_root():
    path = FIXTURES / "helper_calls.py"
    analyze_path(path, FIXTURES)
    again = analyze_path(path, FIXTURES.parent)
    frames = {f.path for launch in again.launches for d in launch.diagnostics for f in d.stack}
    assert frames == {"fixtures/jit_helpers.py", "fixtures/helper_calls.py"}


def test_launches_that_differ_only_in_a_scalar_value_never_share_a_cached_verdict(tmp_path):
    # n=64 and n=80 specialize alike (both divisible by 16), so they compile to the same TTIR; the
    # second reads and writes past the 64 elements. Sharing the first one's cached result would be a
    # false "clean".
    path = tmp_path / "copy.py"
    path.write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)\n\n\n"
        "# tilelens: copy_kernel[(5,)](fp32[64], fp32[64], 64, BLOCK=16)\n"
        "# tilelens: copy_kernel[(5,)](fp32[64], fp32[64], 80, BLOCK=16)\n"
    )
    clean, buggy = analyze_path(path, tmp_path).launches
    assert not clean.diagnostics
    assert sorted(d.code for d in buggy.diagnostics) == ["TL001", "TL001"]
