"""Records round-trip through JSON unchanged, including real analyses."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support import FIXTURES, SAMPLES
from tilelens_lsp.launches.scanner import parse_directives
from tilelens_lsp.model import (
    Access,
    Diagnostic,
    DirectiveError,
    FileResult,
    Frame,
    LaunchResult,
    LaunchSpec,
    ScalarSpec,
    TensorSpec,
    Witness,
    arg_from_json,
    arg_to_json,
)
from tilelens_lsp.pipeline import analyze_path


def through_json(record):
    """`record` written as JSON text and read back with its own class."""
    return type(record).from_json(json.loads(json.dumps(record.to_json())))


WITNESS = Witness(pid=(3, 1, 0), lane=(4, 7), iteration=(2, 5), element=100)
STACK = (Frame("jit_helpers.py", 19, 5), Frame("kernels/add.py", 16, 5))

RECORDS = [
    TensorSpec("fp16", (6, 20), (1, 6), offset=8, storage=128),
    ScalarSpec("int", 4000),
    ScalarSpec("i64", 2**40),
    ScalarSpec("float", 2.5),
    ScalarSpec("bool", True),
    ScalarSpec("str", "mean"),
    ScalarSpec("none", None),
    DirectiveError(12, 5, "unknown kernel 'add'", end_line=13, kernel="add"),
    Frame("triton/language/core.py", 10, 1),
    WITNESS,
    Witness(pid=(0, 0, 0), lane=(), iteration=None, value=2**31),
    Witness(pid=(1, 0, 0), lane=(10,), iteration=(2,), element=170),
    Diagnostic("TL001", "out-of-bounds store", 19, 5, stack=STACK, witness=WITNESS, kind="sanitizer"),
    Diagnostic("TL030", "not analyzed: indirect-address", 9, 9, kind="indirect-address", end_line=9, end_column=40),
    Diagnostic("TL100", "add_kernel has no declared launch", 3, 1),
    Access(
        "load", 10, 9, "x_ptr", "fp32", False, ((0, 16), (32, 48)), True, "k.py", 64, 64, 0, 4, 32, False, (4, 16), (16, 1)
    ),
    LaunchResult(
        "add_kernel",
        7,
        {"BLOCK": 128, "EVEN": False},
        "analyzed",
        (Access("store", 12, 5, "out_ptr", "fp32", True, ((0, 100),), True),),
        (Diagnostic("TL003", "i32 overflow", 11, 13, witness=WITNESS),),
        (4, 1, 1),
    ),
    FileResult(
        "kernels/add.py", (LaunchResult("k", 1, {}, "compile-error"),), (Diagnostic("TL010", "importing failed", 3),)
    ),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_record_round_trips_through_json(record):
    assert through_json(record) == record


@pytest.mark.parametrize("arg", [RECORDS[0], RECORDS[2], RECORDS[6]], ids=["tensor", "i64", "none"])
def test_launch_argument_round_trips_with_its_type_tag(arg):
    assert arg_from_json(json.loads(json.dumps(arg_to_json(arg)))) == arg


def test_declared_launches_of_every_form_round_trip():
    launches, errors = parse_directives((FIXTURES / "launch_forms.py").read_text())
    assert [LaunchSpec.from_json(json.loads(json.dumps(s.to_json()))) for s in launches] == launches


def test_lambda_grid_launch_keeps_its_expression_and_names():
    launches, _ = parse_directives((FIXTURES / "launch_forms.py").read_text())
    spec = next(s for s in launches if s.grid_expr)
    assert LaunchSpec.from_json(json.loads(json.dumps(spec.to_json()))).grid_env == spec.grid_env


def test_single_loop_iteration_is_written_as_an_int_as_documented():
    assert Witness((1, 0, 0), (10,), (2,), 170).to_json()["iteration"] == 2


def test_missing_loop_iteration_is_written_as_null():
    assert json.loads(json.dumps(Witness((1, 0, 0), (10,), None, 170).to_json()))["iteration"] is None


def test_diagnostic_severity_follows_its_code():
    assert [Diagnostic(c, "", 1).severity for c in ("TL001", "TL002", "TL030", "TL100")] == [
        "error",
        "warning",
        "information",
        "hint",
    ]


def test_all_diagnostics_lists_file_level_then_launch_level():
    result = RECORDS[-1]
    assert [d.code for d in result.all_diagnostics()] == ["TL010"]


ints = st.integers(-(2**63), 2**63 - 1)
frames = st.builds(Frame, st.text(min_size=1, max_size=20), st.integers(1, 10**6), st.integers(1, 10**4))
witnesses = st.builds(
    Witness,
    st.tuples(ints, ints, ints),
    st.lists(ints, max_size=3).map(tuple),
    st.none() | st.lists(st.integers(0, 10**6), min_size=1, max_size=3).map(tuple),
    st.none() | ints,
    st.none() | ints,
)


@settings(max_examples=60, deadline=None)
@given(
    st.builds(
        Diagnostic,
        st.sampled_from(["TL001", "TL002", "TL003", "TL010", "TL030"]),
        st.text(max_size=40),
        st.integers(1, 10**6),
        st.integers(1, 10**4),
        st.just(""),
        st.lists(frames, max_size=4).map(tuple),
        st.none() | witnesses,
        st.none() | st.text(max_size=10),
    )
)
def test_any_diagnostic_round_trips_through_json(diag):
    assert through_json(diag) == diag


# ---------------------------------------------------------------- real analyses


@pytest.mark.parametrize(
    "path",
    [
        FIXTURES / "graph_kernels.py",
        FIXTURES / "helper_calls.py",
        FIXTURES / "compile_errors.py",
        FIXTURES / "tuned.py",
        FIXTURES / "import_missing.py",
        SAMPLES / "matmul.py",
    ],
    ids=lambda p: p.name,
)
def test_real_file_result_round_trips_through_json(path):
    result = analyze_path(path, FIXTURES if path.parent == FIXTURES else SAMPLES.parent)
    assert through_json(result) == result
