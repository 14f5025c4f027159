"""`tilelens_lsp.check_launch`: one launch's verdicts without running it, from spec strings, TensorSpec
objects or tensor-like values (no torch needed), found as `capture` + `check` would find them."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tilelens_lsp
from tilelens_lsp.api import Checker, LaunchCheck
from tilelens_lsp.model import TensorSpec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from launch_kernels import copy_kernel, gather_kernel, not_a_kernel, row_kernel, tail_kernel, tuned_kernel  # noqa: E402

check_launch = tilelens_lsp.check_launch


def test_a_masked_copy_is_clean_and_touches_every_element_once():
    result = check_launch(copy_kernel, (4,), "fp32[1000]", "fp32[1000]", 1000, BLOCK=256)
    assert isinstance(result, LaunchCheck)
    assert result.status == "analyzed" and result.clean
    assert not result.findings
    # 4 programs x 256 lanes, masked to offs < 1000: elements [0, 1000) of each tensor, in bounds
    assert {(a.op, a.pointer, a.elements, a.in_bounds) for a in result.accesses} == {
        ("load", "x_ptr", ((0, 1000),), True),
        ("store", "y_ptr", ((0, 1000),), True),
    }


def test_a_mask_one_past_the_end_is_tl001_with_the_lane_that_reads_it():
    result = check_launch(tail_kernel, (8,), "fp32[1000]", 1000, BLOCK=128)
    assert [d.code for d in result.findings] == ["TL001"]
    assert result.errors == result.findings and not result.clean
    # offs <= n lets exactly one lane past the storage through: offs == 1000, program 7, lane 104
    witness = result.findings[0].witness
    assert (witness.pid, witness.lane, witness.element) == ((7, 0, 0), (104,), 1000)
    assert result.findings[0].line == 15  # the load in launch_kernels.py


def test_the_same_kernel_is_clean_where_no_lane_reaches_the_end():
    assert check_launch(tail_kernel, (8,), "fp32[1024]", 1024, BLOCK=128).clean


def test_an_index_without_a_range_is_refused_and_a_refusal_is_a_finding():
    result = check_launch(gather_kernel, (8,), "i32[8]", "fp32[4, 16]", "fp32[8, 16]", D=16)
    assert result.status == "refused" and not result.clean
    assert [(d.code, d.kind) for d in result.findings] == [("TL030", "indirect-address")]


def test_a_declared_range_makes_the_same_gather_decidable():
    assert check_launch(gather_kernel, (8,), "i32[8].values(0, 4)", "fp32[4, 16]", "fp32[8, 16]", D=16).clean
    over = check_launch(gather_kernel, (8,), "i32[8].values(0, 5)", "fp32[4, 16]", "fp32[8, 16]", D=16)
    assert over.findings and not over.clean  # id 4 would read row 4 of a 4-row table


def test_a_wide_or_several_part_declared_range_is_kept_as_declared():
    # ranges at least 64 apart (the hook's gap between observed parts) once lost the declared set
    # (a spec has no elements to read): the gather was refused as an undeclared index
    wide = check_launch(gather_kernel, (8,), "i32[8].values(0, 100)", "fp32[100, 16]", "fp32[8, 16]", D=16)
    assert wide.status == "analyzed" and wide.clean
    parts = check_launch(gather_kernel, (8,), "i32[8].values([(0, 4), 96])", "fp32[97, 16]", "fp32[8, 16]", D=16)
    assert parts.status == "analyzed" and parts.clean
    over = check_launch(gather_kernel, (8,), "i32[8].values([(0, 4), 96])", "fp32[96, 16]", "fp32[8, 16]", D=16)
    # the value 96 (the declared point) reads row 96 of a 96-row table
    assert [d.code for d in over.findings] == ["TL002"] and "ids_ptr holds 96" in over.findings[0].message


def test_tensor_spec_objects_check_like_the_strings_they_spell():
    as_text = check_launch(tail_kernel, (8,), "fp32[1000]", 1000, BLOCK=128)
    as_spec = check_launch(tail_kernel, (8,), TensorSpec("fp32", (1000,), (1,), 0, 1000), 1000, BLOCK=128)
    assert as_spec.launch == as_text.launch
    assert [d.to_json() for d in as_spec.findings] == [d.to_json() for d in as_text.findings]


class _View:
    """A tensor-like value (what the hook reads of a torch tensor): x[:, :48] of a (4, 64) fp32 array."""

    dtype = np.dtype("float32")
    shape = (4, 48)

    def data_ptr(self):
        return 0

    def stride(self):
        return (64, 1)

    def storage_offset(self):
        return 0

    def element_size(self):
        return 4

    def untyped_storage(self):
        return _Storage()


class _Storage:
    def nbytes(self):
        return 4 * 64 * 4


def test_a_tensor_is_checked_as_its_exact_view():
    # the kernel reads BLOCK=64 columns of a 48-wide view: inside the storage, outside the view
    result = check_launch(row_kernel, (4,), _View(), "fp32[4, 48]", 64, 48, BLOCK=64)
    assert "tensor(fp32, (4, 48), strides=(64, 1), offset=0, storage=256)" in result.launch
    assert [d.code for d in result.findings] == ["TL004"]


def test_an_autotuned_kernel_is_checked_in_every_config():
    result = check_launch(tuned_kernel, lambda meta: ((1000 + meta["BLOCK"] - 1) // meta["BLOCK"],), "fp32[1000]", 1000)
    assert sorted(r.config["BLOCK"] for r in result.results) == [32, 64]
    assert result.clean


def test_what_is_no_launch_says_so():
    with pytest.raises(TypeError, match="not a Triton kernel"):
        check_launch(not_a_kernel, (1,), "fp32[4]")
    with pytest.raises(ValueError, match="not a tensor spec"):
        check_launch(copy_kernel, (1,), "fp32[4", "fp32[4]", 4, BLOCK=4)


def test_a_checker_of_its_own_takes_a_target():
    checker = Checker(target="cuda:90")
    try:
        assert checker.check_launch(copy_kernel, (4,), "fp32[1000]", "fp32[1000]", 1000, BLOCK=256).clean
    finally:
        checker.close()


def test_torch_tensors_are_checked_as_their_views_and_value_ranges():
    torch = pytest.importorskip("torch")
    table = torch.zeros(4, 64)[:, :48]  # a slice: its view, not its storage, is the tensor
    result = check_launch(row_kernel, (4,), table, torch.zeros(4, 48), 64, 48, BLOCK=64)
    assert "tensor(fp32, (4, 48), strides=(64, 1), offset=0, storage=256)" in result.launch
    assert [d.code for d in result.findings] == ["TL004"]
    ids = torch.arange(8, dtype=torch.int32) % 4  # ids 0..3: the range the tensor holds is recorded
    assert check_launch(gather_kernel, (8,), ids, torch.zeros(4, 16), torch.zeros(8, 16), D=16).clean


SELF_CHECKING_SCRIPT = """\
import triton
import triton.language as tl

import tilelens_lsp


@triton.jit
def tail(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs), mask=offs < n)


RESULT = tilelens_lsp.check_launch(tail, (8,), "fp32[1000]", 1000, BLOCK=128)
"""


def test_a_script_that_checks_its_own_kernel_at_module_level_gets_its_verdict(tmp_path, monkeypatch):
    """The worker imports the script to find the kernel, which runs the module-level call again: that
    call is refused at once there (it used to start a worker of its own, and so on until the first
    one's timeout: a TL050 after 30 s), and the first call gets the verdict."""
    import importlib

    (tmp_path / "selfcheck_script.py").write_text(SELF_CHECKING_SCRIPT)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("selfcheck_script")
    assert module.RESULT.status == "analyzed"
    assert [d.code for d in module.RESULT.findings] == ["TL001"]


def test_inside_a_worker_a_check_is_refused_and_never_clean(monkeypatch):
    from tilelens_lsp.worker.process import IN_WORKER_VARIABLE

    monkeypatch.setenv(IN_WORKER_VARIABLE, "1")
    result = check_launch(copy_kernel, (4,), "fp32[1000]", "fp32[1000]", 1000, BLOCK=256)
    assert result.status == "refused" and not result.clean
    assert [(d.code, d.kind) for d in result.findings] == [("TL030", "nested-check")]
