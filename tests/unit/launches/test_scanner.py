"""`# tilelens:` directives: every grammar form, every error kind, and that nothing is executed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelens_lsp.launches.evaluator import eval_grid
from tilelens_lsp.launches.kernels import KernelDef, find_kernels
from tilelens_lsp.launches.scanner import parse_directives
from tilelens_lsp.launches.specs import DTYPES, EvalError
from tilelens_lsp.model import DirectiveError, LaunchSpec, ScalarSpec, TensorSpec

KERNELS = {"add_kernel", "matmul_kernel", "k"}


def one_launch(text: str, known: set[str] | None = KERNELS) -> LaunchSpec:
    launches, errors = parse_directives(text, known)
    assert errors == [] and len(launches) == 1, (launches, errors)
    return launches[0]


def one_error(text: str, known: set[str] | None = KERNELS) -> DirectiveError:
    launches, errors = parse_directives(text, known)
    assert launches == [] and len(errors) == 1, (launches, errors)
    return errors[0]


def arg(expr: str, prelude: str = "") -> object:
    return one_launch(f"{prelude}# tilelens: k[(1,)]({expr})\n").args[0]


# ---------------------------------------------------------------- launches


def test_design_example_add_kernel():
    text = "# tilelens: N = 4000\n# tilelens: add_kernel[(cdiv(N, 1024),)](fp32[N], fp32[N], fp32[N], N, BLOCK_SIZE=1024)\n"
    launch = one_launch(text)
    vec = TensorSpec("fp32", (4000,), (1,), 0, 4000)
    assert launch.kernel == "add_kernel"
    assert launch.line == 2
    assert launch.grid == (4,)
    assert launch.args == (vec, vec, vec, ScalarSpec("int", 4000))
    assert launch.kwargs == (("BLOCK_SIZE", ScalarSpec("int", 1024)),)
    assert launch.origin == "comment"
    assert launch.source == "add_kernel[(cdiv(N, 1024),)](fp32[N], fp32[N], fp32[N], N, BLOCK_SIZE=1024)"


def test_multi_line_directive_continues_while_brackets_are_open():
    text = (
        "def f(): pass\n"
        "    # tilelens: M, N, K = 128, 256, 64\n"
        '# tilelens: matmul_kernel[lambda meta: (cdiv(M, meta["BLOCK_M"]) * cdiv(N, meta["BLOCK_N"]),)](\n'
        "# tilelens:     a=fp16[M, K], b=fp16[K, N].T,\n"
        "# tilelens:     c=fp16[M, N], M=M, N=N, K=K)\n"
        "# tilelens: k[(1,)](1)\n"
    )
    launches, errors = parse_directives(text, KERNELS)
    assert errors == []
    matmul, k = launches
    assert matmul.line == 3 and k.line == 6
    assert [name for name, _ in matmul.kwargs] == ["a", "b", "c", "M", "N", "K"]
    assert matmul.grid is None
    assert matmul.grid_expr == '(cdiv(M, meta["BLOCK_M"]) * cdiv(N, meta["BLOCK_N"]),)'
    assert dict(matmul.grid_env) == {"M": 128, "N": 256}
    assert eval_grid(matmul.grid_expr, matmul.grid_env, {"BLOCK_M": 64, "BLOCK_N": 128}) == (4,)
    assert "\n" not in matmul.source and matmul.source.endswith("K=K)")


def test_int_grid_becomes_a_one_tuple():
    assert one_launch("# tilelens: k[7](1)").grid == (7,)


def test_three_dimensional_grid_and_zero_sized_grid():
    assert one_launch("# tilelens: k[(2, 3, 4)](1)").grid == (2, 3, 4)
    assert one_launch("# tilelens: k[(0,)](1)").grid == (0,)


def test_grid_lambda_without_meta_is_evaluated_at_once():
    launch = one_launch("# tilelens: k[lambda meta: (2 * 3,)](1)")
    assert launch.grid == (6,) and launch.grid_expr is None


def test_grid_lambda_with_another_parameter_name_is_stored_over_meta():
    launch = one_launch("# tilelens: N = 100\n# tilelens: k[lambda META: (cdiv(N, META['B']),)](1)")
    assert launch.grid_expr is not None and "META" not in launch.grid_expr
    assert eval_grid(launch.grid_expr, launch.grid_env, {"B": 32}) == (4,)


def test_grid_bound_to_a_name_as_in_real_launch_code():
    text = (
        "# tilelens: N = 1000\n"
        "# tilelens: grid = lambda meta: (triton.cdiv(N, meta['BLOCK']),)\n"
        "# tilelens: k[grid](fp32[N], N)\n"
    )
    launch = one_launch(text)
    assert eval_grid(launch.grid_expr, launch.grid_env, {"BLOCK": 128}) == (8,)


def test_grid_env_holds_only_the_names_the_lambda_reads():
    text = "# tilelens: A, B, C = 1, 2, fp32[4]\n# tilelens: k[lambda meta: (A * meta['X'],)](C)"
    assert one_launch(text).grid_env == (("A", 1),)


def test_positional_and_keyword_arguments_keep_their_order():
    launch = one_launch("# tilelens: k[(1,)](1, 2.5, x=True, y='mean', z=None)")
    assert launch.args == (ScalarSpec("int", 1), ScalarSpec("float", 2.5))
    assert launch.kwargs == (
        ("x", ScalarSpec("bool", True)),
        ("y", ScalarSpec("str", "mean")),
        ("z", ScalarSpec("none", None)),
    )


def test_i64_forces_a_64_bit_scalar():
    assert arg("i64(5)") == ScalarSpec("i64", 5)


def test_directive_at_any_indentation_and_without_space_after_hash():
    text = "def f():\n        #tilelens: k[(1,)](1)\n"
    assert one_launch(text).line == 2


def test_trailing_comment_inside_a_directive_is_ignored():
    assert one_launch("# tilelens: k[(1,)](1)  # one program").grid == (1,)


def test_semicolon_separates_statements_in_one_directive():
    assert arg("N", "# tilelens: N = 3; M = 4\n") == ScalarSpec("int", 3)


def test_directive_text_inside_a_string_literal_is_not_a_directive():
    text = 'DOC = """\n# tilelens: k[(1,)](1)\n"""\n'
    assert parse_directives(text, KERNELS) == ([], [])


def test_code_line_with_trailing_tilelens_comment_is_not_a_directive():
    assert parse_directives("x = 1  # tilelens: k[(1,)](1)\n", KERNELS) == ([], [])


def test_directives_are_still_read_in_a_file_that_does_not_tokenize():
    text = "def f(:\n    s = '''\n# tilelens: k[(1,)](1)\n"
    launches, _ = parse_directives(text, KERNELS)
    assert [launch.kernel for launch in launches] == ["k"]


def test_known_kernels_none_accepts_any_kernel_name():
    assert one_launch("# tilelens: whatever[(1,)](1)", known=None).kernel == "whatever"


# ---------------------------------------------------------------- tensor specs


def test_contiguous_spec_computes_row_major_strides():
    assert arg("fp16[3, 4, 5]") == TensorSpec("fp16", (3, 4, 5), (20, 5, 1), 0, 60)


def test_transposed_spec_swaps_strides():
    assert arg("fp16[4, 8].T") == TensorSpec("fp16", (8, 4), (1, 8), 0, 32)


def test_long_form_tensor_with_strides_offset_and_storage():
    spec = arg("tensor(fp16, (4, 8), strides=(1, 4), offset=2, storage=100)")
    assert spec == TensorSpec("fp16", (4, 8), (1, 4), 2, 100)


def test_long_form_storage_defaults_to_the_minimal_covering_size():
    # offset 10 + (4-1)*16 + (8-1)*1 + 1 = 66
    assert arg("tensor(fp32, (4, 8), strides=(16, 1), offset=10)").storage == 66


def test_long_form_accepts_positional_parameters_and_int_shape():
    assert arg("tensor(i8, 5, 2)") == TensorSpec("i8", (5,), (2,), 0, 9)


def test_empty_tensor_has_zero_storage():
    spec = arg("fp32[0, 5]")
    assert spec.shape == (0, 5) and spec.storage == 0 and spec.numel == 0


def test_tensor_bound_to_a_name_can_be_reused_and_transposed():
    launch = one_launch("# tilelens: A = bf16[2, 3]\n# tilelens: k[(1,)](A, A.T)")
    assert launch.args[1] == TensorSpec("bf16", (3, 2), (1, 3), 0, 6)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_triton_dtype_name_is_accepted(dtype: str):
    assert arg(f"{dtype}[2]").dtype == dtype


@pytest.mark.parametrize(
    "alias, canonical",
    [
        ("float32", "fp32"),
        ("bfloat16", "bf16"),
        ("uint8", "u8"),
        ("int64", "i64"),
        ("bool", "i1"),
        ("float8e4nv", "fp8e4nv"),
    ],
)
def test_dtype_aliases_map_to_canonical_names(alias: str, canonical: str):
    assert arg(f"{alias}[2]").dtype == canonical
    assert arg(f"tensor({alias}, (2,))").dtype == canonical


# ---------------------------------------------------------------- expressions


@pytest.mark.parametrize(
    "expr, value",
    [
        ("7 + 3", 10),
        ("7 - 10", -3),
        ("6 * 7", 42),
        ("7 // 2", 3),
        ("7 % 4", 3),
        ("2 ** 10", 1024),
        ("-(3)", -3),
        ("cdiv(10, 4)", 3),
        ("triton.cdiv(10, 4)", 3),
        ("min(3, 1, 2)", 1),
        ("max((3, 9))", 9),
        ("2 ** 64 - 1", 2**64 - 1),
        ("0x10", 16),
        ("1.5 * 2", 3.0),
    ],
)
def test_arithmetic(expr: str, value: object):
    assert arg(expr).value == value


def test_names_are_bound_for_directives_below():
    assert arg("X * 2", "# tilelens: X = 4\n# tilelens: Y = X + 1\n") == ScalarSpec("int", 8)


def test_rebinding_a_name_affects_only_later_directives():
    text = "# tilelens: N = 1\n# tilelens: k[(1,)](N)\n# tilelens: N = 2\n# tilelens: k[(1,)](N)\n"
    launches, _ = parse_directives(text, KERNELS)
    assert [launch.args[0].value for launch in launches] == [1, 2]


def test_eval_grid_accepts_an_int_and_dict_env():
    assert eval_grid("meta['X'] * N", {"N": 2}, {"X": 3}) == (6,)


# ---------------------------------------------------------------- errors


def test_syntax_error_says_what_was_expected():
    err = one_error("# tilelens: k[(1,)](1 2)")
    assert err.message.startswith("syntax error") and "comma" in err.message
    assert (err.line, err.column) == (1, 21)


def test_unclosed_bracket_without_continuation_is_a_precise_error():
    err = one_error("# tilelens: k[(1,)](1,\nx = 1\n")
    assert "'(' is never closed: expected ')'" in err.message and "# tilelens:" in err.message
    assert (err.line, err.column) == (1, 20)


def test_not_a_launch_or_binding_is_an_error():
    assert "expected `NAME = expr` or `KERNEL[GRID](ARGS)`" in one_error("# tilelens: 3 + 4").message


def test_launch_without_grid_is_an_error():
    err = one_error("# tilelens: k(1)")
    assert "no grid" in err.message and err.kernel == "k"


def test_unknown_name_lists_the_names_in_scope():
    err = one_error("# tilelens: M, N = 1, 2\n# tilelens: k[(1,)](Q)")
    assert err.message == "unknown name 'Q' (names in scope: M, N)"
    assert (err.line, err.column, err.kernel) == (2, 21, "k")


def test_unknown_name_bound_further_down_says_so():
    err = one_error("# tilelens: k[(1,)](N)\n# tilelens: N = 1")
    assert "bound on line 2, below this directive" in err.message


def test_name_whose_binding_failed_reports_that_not_unknown():
    _, errors = parse_directives("# tilelens: N = Q\n# tilelens: k[(1,)](N)", KERNELS)
    assert [e.line for e in errors] == [1, 2]
    assert "'N' has no value: its binding on line 1 failed" in errors[1].message


def test_unknown_kernel_lists_the_kernels_of_the_file():
    err = one_error("# tilelens: foo[(1,)](1)", {"add_kernel", "mul_kernel"})
    assert err.message == "unknown kernel 'foo' (kernels in this file: add_kernel, mul_kernel)"
    assert err.kernel == "foo" and err.column == 13


@pytest.mark.parametrize(
    "expr, dtype",
    [
        ("bf16", "bf16"),
        ("fp32", "fp32"),
        ("float16", "fp16"),
        ("tl.float16", "fp16"),
        ("tl.bf16", "bf16"),
        ("triton.language.bfloat16", "bf16"),
        ("tl.int32", "i32"),
        ("tl.float8e4nv", "fp8e4nv"),
    ],
)
def test_a_dtype_alone_is_a_dtype_valued_argument(expr: str, dtype: str):
    launch = one_launch(f"# tilelens: k[(1,)](fp32[4], {expr}, compute_type={expr})\n")
    assert launch.args[1] == ScalarSpec("dtype", dtype)
    assert launch.kwargs == (("compute_type", ScalarSpec("dtype", dtype)),)
    assert ScalarSpec.from_json(launch.args[1].to_json()) == launch.args[1]


def test_a_dtype_can_be_bound_to_a_name_and_spelled_tl_dtype_in_a_tensor_spec():
    launch = one_launch(
        "# tilelens: ACC = tl.float32\n# tilelens: k[(1,)](tl.float16[4], tensor(tl.bfloat16, (2,)), OUT_DTYPE=ACC)\n"
    )
    assert [a.dtype for a in launch.args] == ["fp16", "bf16"]
    assert launch.kwargs == (("OUT_DTYPE", ScalarSpec("dtype", "fp32")),)


def test_unknown_dtype_lists_triton_dtypes():
    err = one_error("# tilelens: k[(1,)](fp33[4])")
    assert err.message.startswith("unknown dtype 'fp33' (did you mean fp32? Triton dtypes: fp8e4nv")


def test_negative_tensor_size_is_an_error():
    err = one_error("# tilelens: k[(1,)](fp32[4, -2])")
    assert err.message == "negative tensor size -2 in dimension 1 of fp32[4, -2]"


def test_storage_smaller_than_the_view_is_an_error():
    assert "smaller than the 9 elements" in one_error("# tilelens: k[(1,)](tensor(fp32, (3, 3), storage=8))").message


def test_transpose_of_a_1d_spec_is_an_error():
    assert "'.T' needs a 2-D tensor spec, got 1-D fp32[4]" in one_error("# tilelens: k[(1,)](fp32[4].T)").message


def test_disallowed_call_names_the_allowed_functions():
    err = one_error("# tilelens: k[(1,)](open('x'))")
    assert err.message == (
        "calls of 'open' are not allowed in directives: only cdiv, triton.cdiv, min, max, i64, tensor, descriptor"
    )


def test_disallowed_attribute_is_an_error():
    assert "attribute '.path' is not allowed" in one_error("# tilelens: k[(1,)](os.path)").message


@pytest.mark.parametrize(
    "expr, fragment",
    [
        ("[1, 2]", "a list is not allowed"),
        ("1 if 2 else 3", "a conditional expression is not allowed"),
        ("4 / 2", "operator '/' is not allowed in directives: use // for integer division"),
        ("1 << 2", "operator '<<' is not allowed"),
        ("~1", "operator '~' is not allowed"),
        ("1 < 2", "a comparison is not allowed"),
        ("f'{1}'", "an f-string is not allowed"),
        ("1j", "complex literals are not allowed"),
        ("tl.flaot16", "did you mean tl.float16?"),
        ("tl.fp99", "unknown dtype 'tl.fp99'"),
        ("tl", "unknown name 'tl'"),
        ("()", "an empty tuple is not a launch argument"),
        ("lambda meta: 1", "only allowed as the grid"),
        ("'a' * 3", "operator '*' needs numbers, got a string"),
        ("cdiv(1, 0)", "cdiv by zero"),
        ("7 % 0", "division by zero"),
        ("2 ** 65", "too large"),
        ("2 ** 64 * 2", "too large"),
        ("18446744073709551617", "too large"),
        ("(-8) ** 0.5", "complex number"),
        ("i64(2 ** 63)", "does not fit in a signed 64-bit int"),
        ("-2 ** 64", "does not fit in 64 bits"),
        ("1e308 * 10", "overflows the float range"),
        ("cdiv(1.5, 2)", "must be an int"),
        ("min()", "at least one value"),
        ("tensor(fp32)", "needs a shape"),
        ("tensor(fp32, 4, bogus=1)", "no parameter 'bogus'"),
        ("cdiv", "must be called"),
        ("descriptor(fp16[4, 8], block=(4,))", "needs 2 sizes, got 1"),
        ("descriptor(4, block=(4,))", "describes a tensor spec"),
        ("descriptor(fp16[4])", "needs a block"),
        ("descriptor(fp16[8], block=8, padding='one')", "padding"),
        ("fp32[1:2]", "a slice is not allowed"),
        ("fp16[4].T.T", "needs a 2-D tensor spec"),
    ],
)
def test_unsupported_or_invalid_expression_is_a_precise_error(expr: str, fragment: str):
    err = one_error(f"# tilelens: k[(1,)]({expr})")
    assert fragment in err.message, err.message
    assert err.kernel == "k" and err.line == 1


@pytest.mark.parametrize(
    "grid, fragment",
    [
        ("(-1,)", "grid dimension 0 is -1"),
        ("(1, 2, 3, 4)", "1 to 3 dimensions"),
        ("(2 ** 40,)", "above the 2**31-1 programs"),
        ("(1.5,)", "must be an int, got a float"),
        ("lambda a, b: 1", "exactly one parameter"),
        ("lambda meta: (Q,)", "unknown name 'Q'"),
        ("lambda meta: (meta,)", 'can only be read as meta["NAME"]'),
        ("lambda meta: (meta[1],)", "needs a string key"),
        ("lambda meta: 'x'", "must be an int"),
    ],
)
def test_bad_grid_is_a_precise_error(grid: str, fragment: str):
    assert fragment in one_error(f"# tilelens: k[{grid}](1)").message


def test_grid_lambda_reading_a_tensor_name_is_an_error():
    err = one_error("# tilelens: A = fp32[4]\n# tilelens: k[lambda meta: (A * meta['X'],)](1)")
    assert "can only use int, float, bool or str names; 'A' is a tensor spec" in err.message


def test_eval_grid_reports_a_missing_meta_key():
    with pytest.raises(EvalError, match=r"reads meta\[\"BLOCK\"\] but the launch has no 'BLOCK' \(it has: X\)"):
        eval_grid("(cdiv(N, meta['BLOCK']),)", (("N", 10),), {"X": 1})


def test_eval_grid_rejects_a_negative_result():
    with pytest.raises(EvalError, match="grid sizes must be >= 0"):
        eval_grid("(N - meta['B'],)", {"N": 1}, {"B": 5})


def test_binding_a_reserved_name_is_an_error():
    assert "'fp32' is reserved" in one_error("# tilelens: fp32 = 4").message


def test_overlong_or_overnested_directive_is_refused_not_crashed():
    assert "directive too long" in one_error("# tilelens: k[(1,)](" + "1 + " * 6000 + "1)").message
    assert "nested too deeply" in one_error("# tilelens: k[(1,)](" + "-" * 100 + "1)").message
    assert "never closed" in one_error("# tilelens: k[(1,)](" + "(" * 300 + "1").message


def test_one_bad_directive_never_stops_the_others():
    text = (
        "# tilelens: k[(1,)](Q)\n# tilelens: k[(1,](\n# tilelens: N = 2\n"
        "# tilelens: k[(1,)](open('f'))\n# tilelens: k[(N,)](N)\n"
    )
    launches, errors = parse_directives(text, KERNELS)
    assert [launch.grid for launch in launches] == [(2,)]
    assert [e.line for e in errors] == [1, 2, 4]


def test_every_bad_argument_of_a_launch_is_reported():
    _, errors = parse_directives("# tilelens: k[(-1,)](Q, fp33[1], x=R)", KERNELS)
    assert [e.column for e in errors] == [15, 22, 25, 36]


def test_error_columns_count_characters_not_bytes():
    err = one_error("# tilelens: k[(1,)]('é', Q)")
    assert err.column == 26


def test_error_in_a_continuation_line_points_at_that_line():
    text = "# tilelens: k[(1,)](\n#   tilelens:    1,\n# tilelens:   Q)\n"
    err = one_error(text)
    assert (err.line, err.column, err.end_line) == (3, 15, 3)


def test_dunder_import_directive_runs_nothing(tmp_path: Path):
    marker = tmp_path / "pwned"
    text = f"# tilelens: add_kernel[(1,)](__import__('os').system('touch {marker}'))\n"
    launches, errors = parse_directives(text, KERNELS)
    assert launches == []
    assert len(errors) == 1 and "calls of '__import__('os').system' are not allowed" in errors[0].message
    assert not marker.exists()


@pytest.mark.parametrize(
    "payload",
    [
        "__import__('os').system('touch {m}')",
        "open('{m}', 'w')",
        "(lambda: open('{m}', 'w'))()",
        "[open('{m}', 'w') for _ in (1,)]",
        "eval(\"open('{m}', 'w')\")",
        "().__class__.__base__.__subclasses__()",
    ],
)
def test_no_directive_payload_is_executed(tmp_path: Path, payload: str):
    marker = tmp_path / "pwned"
    for text in (
        f"# tilelens: k[(1,)]({payload.format(m=marker)})",
        f"# tilelens: X = {payload.format(m=marker)}",
        f"# tilelens: k[lambda meta: {payload.format(m=marker)}](1)",
    ):
        launches, errors = parse_directives(text, KERNELS)
        assert launches == [] and len(errors) == 1
    assert not marker.exists()


# ---------------------------------------------------------------- kernels


KERNEL_FILE = """\
import triton
import triton.language as tl


@triton.jit
def helper(x):
    return x + 1


@triton.autotune(configs=[], key=["n"])
@triton.jit
def add_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    tl.store(y_ptr, helper(tl.load(x_ptr)))


@jit
def bare(a, *, b):
    pass


def host(x):
    return x


class Ops:
    @triton.jit(debug=True)
    def method_kernel(p):
        pass
"""


def test_find_kernels_reads_decorator_chains_and_params():
    kernels = find_kernels(KERNEL_FILE)
    assert [k.name for k in kernels] == ["helper", "add_kernel", "bare", "method_kernel"]
    add = kernels[1]
    assert add == KernelDef("add_kernel", 12, 1, ("x_ptr", "y_ptr", "n", "BLOCK"), False)
    assert kernels[2].params == ("a", "b")
    assert kernels[3].column == 5


def test_jit_function_called_from_a_kernel_is_a_helper():
    assert [k.name for k in find_kernels(KERNEL_FILE) if k.is_helper] == ["helper"]


def test_jit_function_launched_from_host_code_is_not_a_helper():
    text = KERNEL_FILE + "\ndef run():\n    helper[(1,)](1)\n"
    assert not any(k.is_helper for k in find_kernels(text))


ASSIGNED = """
import triton
from somewhere import libentry

def impl(x_ptr, n):
    pass

@triton.jit
def fast(u, eps):
    return u

if VENDOR == "a":
    transform = fast
else:
    transform = fast

wrapped = libentry()(triton.jit(impl))
not_a_kernel = len
"""


def test_kernels_bound_by_assignment_are_found_with_their_params():
    kernels = {k.name: k for k in find_kernels(ASSIGNED)}
    assert kernels["wrapped"] == KernelDef("wrapped", 17, 1, ("x_ptr", "n"), False)
    assert kernels["transform"].params == ("u", "eps") and kernels["transform"].line == 13
    assert "not_a_kernel" not in kernels and "impl" not in kernels


def test_find_kernels_survives_a_syntax_error_and_keeps_intact_kernels():
    text = KERNEL_FILE + "\n@triton.jit\ndef broken(x:\n    pass\n"
    names = [k.name for k in find_kernels(text)]
    assert names[:2] == ["helper", "add_kernel"] and "broken" not in names
    assert find_kernels("def (((") == []


def test_find_kernels_on_empty_text():
    assert find_kernels("") == []
