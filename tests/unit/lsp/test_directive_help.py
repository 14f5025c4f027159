"""Completion, signature help and go to definition inside `# tilelens:` directives, on text alone."""

from __future__ import annotations

import textwrap

from tilelens_lsp.lsp import directive_help as dh

SOURCE = textwrap.dedent('''\
    import triton
    import triton.language as tl

    # tilelens: M, K = 64, 32
    # tilelens: MARK
    @triton.autotune(configs=[triton.Config({"BLOCK_M": 32}, num_warps=4)], key=["M"])
    @triton.heuristics(values={"EVEN_K": lambda args: args["K"] % 16 == 0})
    @triton.jit
    def mm_kernel(a_ptr, c_ptr, M, K: int, BLOCK_M: tl.constexpr, EVEN_K: tl.constexpr, ACC: tl.constexpr = 1):
        """Row sums of a tile."""
        x = helper(1)


    @triton.jit
    def helper(x):
        return x


    # tilelens: N = 7
''')


def at_mark(directive: str) -> tuple[str, int, int]:
    """The source with `directive` on the MARK line, and the cursor at its end."""
    text = SOURCE.replace("MARK", directive)
    return text, 4, len("# tilelens: " + directive)


def labels(directive: str) -> list[str] | None:
    items = dh.complete(*at_mark(directive))
    return None if items is None else [i.label for i in items]


def active(directive: str) -> str | None:
    sig = dh.signature_help(*at_mark(directive))
    if sig is None or sig.active is None or sig.active >= len(sig.parameters):
        return None
    start, end, _ = sig.parameters[sig.active]
    return sig.label[start:end]


def test_a_directive_starts_with_a_launchable_kernel_never_a_helper():
    assert labels("mm") == ["mm_kernel"]


def test_decorator_supplied_constexprs_are_not_offered_as_keywords():
    offered = labels("mm_kernel[(1,)](fp16[M, K], fp32[M], ")
    assert "M=" in offered and "K=" in offered and "ACC=" in offered
    assert "BLOCK_M=" not in offered and "EVEN_K=" not in offered  # autotune and heuristics set them
    assert "a_ptr=" not in offered and "c_ptr=" not in offered  # given by position


def test_a_keyword_given_is_not_offered_again():
    assert "K=" not in labels("mm_kernel[(1,)](fp16[M, K], fp32[M], K=K, ")


def test_names_bound_above_are_offered_and_names_bound_below_are_not():
    offered = labels("mm_kernel[(1,)](fp16[M, K], fp32[M], M=")
    assert "M" in offered and "K" in offered and "N" not in offered


def test_a_name_bound_earlier_in_the_same_directive_is_offered():
    assert "Q" in labels("Q = 3; mm_kernel[(Q,)](fp16[")


def test_a_runtime_keyword_value_may_be_a_tensor_spec_a_constexpr_value_may_not():
    assert "fp16" in labels("mm_kernel[(1,)](c_ptr=")
    assert "fp16" not in labels("mm_kernel[(1,)](ACC=")


def test_the_long_tensor_form_takes_a_dtype_first_and_its_keywords_after():
    assert "bf16" in labels("mm_kernel[(1,)](tensor(")
    after_shape = labels("mm_kernel[(1,)](tensor(fp16, (M, K), strides=(1, M), ")
    assert after_shape[:3] == ["offset=", "storage=", "values="]


def test_after_a_tensor_spec_a_dot_offers_the_transpose_and_a_value_range():
    assert labels("mm_kernel[(1,)](fp16[K, M].") == ["T", "values"]
    assert labels("mm_kernel[(1,)](triton.") == ["cdiv"]


def test_nothing_is_offered_inside_a_string_a_trailing_comment_or_right_after_an_operand():
    assert labels('mm_kernel[(1,)](fp16[M, K], mode="fa') is None
    assert labels("mm_kernel[(1,)](fp16[M, K])  # a note ") is None
    assert labels("mm_kernel[(1,)](M ") is None


def test_the_grid_takes_names_and_functions_not_dtypes():
    offered = labels("mm_kernel[(")
    assert "cdiv" in offered and "M" in offered and "fp16" not in offered


def test_a_continuation_line_completes_in_the_launch_it_continues():
    text = SOURCE.replace("# tilelens: MARK", "# tilelens: mm_kernel[(1,)](fp16[M, K],\n# tilelens:     ")
    offered = [i.label for i in dh.complete(text, 5, len("# tilelens:     "))]
    assert "c_ptr=" in offered and "a_ptr=" not in offered


def test_a_suppression_comment_completes_the_codes_not_listed_yet():
    offered = labels("ignore[TL001, ")
    assert "TL002" in offered and "TL001" not in offered
    assert labels("ignore[TL001]") is None


def test_the_marker_itself_gets_no_completion():
    assert dh.complete(SOURCE, 4, 3) is None


def test_signature_help_marks_constexprs_and_what_decorators_supply():
    sig = dh.signature_help(*at_mark("mm_kernel[(1,)]("))
    docs = {sig.label[s:e]: doc for s, e, doc in sig.parameters}
    assert "constexpr" in docs["ACC: tl.constexpr = 1"]
    assert "@triton.autotune" in docs["BLOCK_M: tl.constexpr"]
    assert "@triton.heuristics" in docs["EVEN_K: tl.constexpr"]
    assert docs["K: int"].startswith("runtime")
    assert "Row sums of a tile." in sig.documentation


def test_signature_help_highlights_the_argument_under_the_cursor():
    assert active("mm_kernel[(1,)](") == "a_ptr"
    assert active("mm_kernel[(1,)](fp16[M, K], fp32[") == "c_ptr"  # inside a nested tensor spec
    assert active("mm_kernel[(1,)](fp16[M, K], ACC=") == "ACC: tl.constexpr = 1"
    assert active("mm_kernel[(cdiv(M, ") == "b"
    assert active("mm_kernel[(1,)](tensor(fp16, (M, K), offset=") == "offset=0"


def test_definition_of_a_kernel_name_is_its_def_and_of_a_name_its_binding():
    text, line, _ = at_mark("mm_kernel[(M,)](fp16[M, K], fp32[M])")
    kernel = dh.definition(text, line, len("# tilelens: mm_"))
    assert (kernel.line, text.split("\n")[kernel.line][kernel.start : kernel.end]) == (8, "mm_kernel")
    name = dh.definition(text, line, len("# tilelens: mm_kernel[("))
    assert (name.line, name.start, name.end) == (3, len("# tilelens: "), len("# tilelens: M"))


def test_kernels_keep_their_parameters_when_the_file_around_them_does_not_parse():
    broken = SOURCE + "\ndef oops(:\n"
    kernel = dh.kernels(broken)["mm_kernel"]
    assert [p.name for p in kernel.params][:3] == ["a_ptr", "c_ptr", "M"]
    assert kernel.params[4].constexpr
