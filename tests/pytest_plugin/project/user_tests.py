"""A user's tests (copied as test_user.py): each launches kernels as the real code would."""
import numpy as np
import pytest
import triton

from kernels import Tensor, copy_kernel, gather_kernel, histogram_kernel, tail_kernel


@pytest.mark.parametrize("n", [1000, 4096])
def test_copy(n):
    x, y = Tensor("fp32", n, fill=np.arange(n)), Tensor("fp32", n)
    copy_kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
    assert (y.view() == x.view()).all()


@pytest.mark.parametrize("n", [1000, 1000 + 0])   # two tests, one launch
def test_tail(n):
    x = Tensor("fp32", n, fill=1.0)
    tail_kernel[(triton.cdiv(n, 128),)](x, n, BLOCK=128)
    assert (x.view() == 2.0).all()


def test_tail_clean_size():
    x = Tensor("fp32", 1024, fill=1.0)
    tail_kernel[(8,)](x, 1024, BLOCK=128)        # n a multiple of the block: no lane reaches n, clean
    assert (x.view() == 2.0).all()


def test_gather():
    ids = Tensor("i32", 8, fill=np.arange(8) % 4)
    src, out = Tensor("fp32", 4 * 16, fill=1.0), Tensor("fp32", 8 * 16)
    gather_kernel[(8,)](ids, src, out, D=16)
    assert (out.view() == 1.0).all()


def test_histogram():
    x, hist = Tensor("fp32", 100, fill=np.arange(100) % 4), Tensor("fp32", 4)
    histogram_kernel[(1,)](x, hist, 100, BLOCK=128)
    assert (hist.view() == 25.0).all()
