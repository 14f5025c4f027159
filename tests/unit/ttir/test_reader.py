"""The TTIR reader: text parsed op by op, checked against the MLIR bindings' own walk."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import FIXTURES, REPO, SAMPLES, compile_file
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir import reader as ttir

SAMPLE_FILES = sorted(SAMPLES.glob("*.py"))


@pytest.fixture(scope="module")
def compiled():
    """Every launch config of every sample and of graph_kernels.py (loops, branches, gathers)."""
    out = []
    for path in SAMPLE_FILES:
        out.extend(compile_file(path, REPO))
    out.extend(compile_file(FIXTURES / "graph_kernels.py", FIXTURES))
    return out


@pytest.fixture(scope="module")
def vector_add(compiled):
    return next(c for c in compiled if c.launch.kernel == "add_kernel")


def test_every_sample_launch_parses_and_aligns_with_the_bindings(compiled):
    for c in compiled:
        ttir.check_alignment(ttir.parse_module(c.text), c.module)


def test_entry_is_the_kernel_itself(compiled):
    assert all(ttir.parse_module(c.text).entry == c.launch.kernel for c in compiled)


def test_entry_arguments_are_the_non_constexpr_parameters_in_order(compiled):
    for c in compiled:
        module = ttir.parse_module(c.text)
        params = [n for n, ty in c.bound.signature.items() if ty != "constexpr"]
        assert len(module.funcs[module.entry].args) == len(params), c.launch.kernel


def test_pointer_arguments_read_their_pointee(vector_add):
    module = ttir.parse_module(vector_add.text)
    assert [ty.elem for _, ty in module.funcs[module.entry].args] == ["ptr<f32>"] * 3 + ["i32"]


def test_ops_keep_their_loc(vector_add):
    module = ttir.parse_module(vector_add.text)
    loads = [op for op in ttir.walk_region(module.funcs[module.entry].body) if op.name == "tt.load"]
    assert loads and all(op.loc for op in loads)


def test_loop_body_is_a_nested_region(compiled):
    matmul = next(c for c in compiled if c.launch.kernel == "matmul_kernel")
    module = ttir.parse_module(matmul.text)
    loop = next(op for op in module.funcs[module.entry].body.blocks[0].ops if op.name == "scf.for")
    assert any(op.name == "tt.load" for op in loop.regions[0].blocks[0].ops)


def _drop_first(text: str, op_name: str) -> str:
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if f" = {op_name} " in line)
    return "\n".join(lines[:index] + lines[index + 1 :])


def test_text_with_a_dropped_op_line_is_refused_as_reader_misalignment(vector_add):
    corrupted = ttir.parse_module(_drop_first(vector_add.text, "tt.make_range"))
    with pytest.raises(Refusal) as refused:
        ttir.check_alignment(corrupted, vector_add.module)
    assert refused.value.kind == "reader-misalignment"


def test_text_with_a_renamed_op_is_refused_as_reader_misalignment(vector_add):
    corrupted = ttir.parse_module(vector_add.text.replace("arith.addi", "arith.subi", 1))
    with pytest.raises(Refusal) as refused:
        ttir.check_alignment(corrupted, vector_add.module)
    assert refused.value.kind == "reader-misalignment"


def test_text_missing_an_operand_is_refused_as_reader_misalignment(vector_add):
    # the masked load `tt.load %ptr, %mask` read as an unmasked one would silently widen a footprint
    lines = vector_add.text.splitlines()
    i = next(i for i, line in enumerate(lines) if "tt.load" in line and line.count("%") >= 3)
    head, _, tail = lines[i].partition(" : ")
    lines[i] = head.rsplit(",", 1)[0] + " : " + tail
    corrupted = ttir.parse_module("\n".join(lines))
    with pytest.raises(Refusal) as refused:
        ttir.check_alignment(corrupted, vector_add.module)
    assert refused.value.kind == "reader-misalignment"


def test_text_without_a_public_function_is_refused_as_reader_misalignment():
    with pytest.raises(Refusal) as refused:
        ttir.parse_module("module {\n} loc(#loc)\n")
    assert refused.value.kind == "reader-misalignment"


def test_unterminated_region_is_refused_as_reader_misalignment(vector_add):
    truncated = "\n".join(vector_add.text.splitlines()[:6])
    with pytest.raises(Refusal) as refused:
        ttir.parse_module(truncated)
    assert refused.value.kind == "reader-misalignment"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("i32", ttir.Type((), "i32")),
        ("tensor<128xi32>", ttir.Type((128,), "i32")),
        ("tensor<64x32x!tt.ptr<f16>>", ttir.Type((64, 32), "ptr<f16>")),
        ("!tt.ptr<f32>", ttir.Type((), "ptr<f32>")),
        ("!tt.ptr<tensor<64x32xf16>>", ttir.Type((), "bptr<tensor<64x32xf16>>")),
    ],
)
def test_types_read_shape_and_element(text, expected):
    assert ttir.parse_type(text) == expected


def test_split_top_keeps_brackets_arrows_and_strings_whole():
    from tilelens_lsp.ttir.types import split_top

    assert split_top("tensor<4x!tt.ptr<f32>>, (i32, i64) -> f32, i1", ", ") == [
        "tensor<4x!tt.ptr<f32>>",
        "(i32, i64) -> f32",
        "i1",
    ]
    assert split_top('"a, (b.py":1:2 at "c\\" at d.py":3:4', " at ") == ['"a, (b.py":1:2', '"c\\" at d.py":3:4']
    assert split_top('"x.py":1:2,"y, z.py":3:4', ",") == ['"x.py":1:2', '"y, z.py":3:4']


def _split_by_hand(text: str, sep: str) -> list[str]:
    """The reference for `split_top`, one character at a time: a complete double-quoted string (escapes
    included) is opaque, `([{<` open and `)]}>` close (not the `>` of `->`), and `sep` splits at depth 0;
    a separator inside brackets is stepped over whole, as the tokenizer does."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j < len(text):  # a closed string: skip it whole
                i = j + 1
                continue
        if text.startswith(sep, i):
            if depth == 0:
                parts.append(text[start:i])
                start = i + len(sep)
            i += len(sep)
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}" or (c == ">" and not (i > 0 and text[i - 1] == "-")):
            depth -= 1
        i += 1
    parts.append(text[start:])
    return parts


@given(st.text(alphabet='ab ,:-><()[]{}"\\to', max_size=40), st.sampled_from([", ", " : ", " -> ", " to ", " at ", ","]))
@settings(max_examples=400, deadline=None)
def test_split_top_agrees_with_a_character_by_character_split(text, sep):
    from tilelens_lsp.ttir.types import split_top

    assert split_top(text, sep) == _split_by_hand(text, sep)


def test_operand_types_are_read_after_the_last_top_level_colon():
    """Attributes hold ` : ` too (`{axis = 0 : i32}`); the operand types are the function type's left side."""
    from tilelens_lsp.ttir.types import Type, operand_types

    gather = "%5 = tt.gather %src[%idx] {axis = 0 : i32} : (tensor<16xi32>, tensor<4x64xi32>) -> tensor<64xi32> loc(#loc)"
    assert operand_types(gather) == [Type((16,), "i32"), Type((4, 64), "i32")]
    assert operand_types("%3 = tt.histogram %2 : tensor<64xi32> -> tensor<16xi32> loc(#loc3)") == [Type((64,), "i32")]
    assert operand_types('%2 = "tt.histogram"(%1) : (tensor<8x!tt.ptr<f16>>) -> tensor<4xi32>') == [Type((8,), "ptr<f16>")]
    assert operand_types("%3 = tt.histogram %2") == [] and operand_types("%1 = arith.addi %a, %b : i32") == []


def test_parse_type_answers_alike_when_asked_again():
    # printed types are memoized: a second answer is the first, padding and all
    first = [ttir.parse_type(t) for t in (" tensor<8x!tt.ptr<f16>> ", "i64", "tensor<4x4xi1>")]
    assert [ttir.parse_type(t.strip()) for t in (" tensor<8x!tt.ptr<f16>> ", "i64", "tensor<4x4xi1>")] == first
    assert first == [ttir.Type((8,), "ptr<f16>"), ttir.Type((), "i64"), ttir.Type((4, 4), "i1")]


def test_every_result_type_agrees_with_the_bindings(compiled):
    """The reader's result type of every op is the one the bindings give its results, also where
    the printed form puts it elsewhere (a reduction's type after its region, a select's after its
    condition's, a boolean constant's nowhere)."""
    from tests.support import FIXTURES, compile_file
    from tilelens_lsp.ttir.types import parse_type

    extra = compile_file(FIXTURES / "typed_results.py", FIXTURES)
    names = set()
    for c in compiled + extra:
        bound: list[tuple[str, list[str]]] = []

        def visit(op, bound=bound) -> None:
            name = op.get_name()
            if name in ("builtin.module", "tt.func") or (name == "scf.yield" and op.get_num_operands() == 0):
                return
            bound.append((name, [str(op.get_result(i).get_type()) for i in range(op.get_num_results())]))

        c.module.walk(visit)
        parsed = [
            op
            for f in ttir.parse_module(c.text).funcs.values()
            for op in ttir.walk_region(f.body)
            if not (op.name == "scf.yield" and not op.operands)
        ]
        assert [name for name, _ in bound] == [op.name for op in parsed]
        for (name, types), op in zip(bound, parsed):
            assert list(op.result_types) == [parse_type(t) for t in types], (name, op.text)
            names.add(name)
    assert {"tt.reduce", "tt.scan", "tt.split", "arith.select", "arith.constant"} <= names


def test_a_function_returning_a_tuple_reads_its_arguments_only():
    text = (
        "module {\n"
        '  tt.func private @tile_of(%t: i32 loc("t"(#loc)), %n: i32 loc("a (b)"(#loc))) -> (i32, i32) '
        "attributes {noinline = true} {\n"
        "    tt.return %t, %n : i32, i32 loc(#loc)\n"
        "  } loc(#loc)\n"
        "  tt.func public @k(%x: !tt.ptr<f32>) attributes {noinline = false} {\n"
        "    tt.return loc(#loc)\n"
        "  } loc(#loc)\n"
        "}\n"
    )
    funcs = ttir.parse_module(text).funcs
    assert [name for name, _ in funcs["tile_of"].args] == ["%t", "%n"]
    assert [ty for _, ty in funcs["tile_of"].args] == [ttir.Type((), "i32")] * 2
