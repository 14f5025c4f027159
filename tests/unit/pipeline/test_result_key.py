"""The result cache's key: equal inputs give one digest, and a change of any one field, a tensor's
own fields included, gives another (a key that missed a field would reuse a stale verdict)."""

from __future__ import annotations

from dataclasses import fields, replace

from tilelens_lsp.model import TensorSpec
from tilelens_lsp.pipeline.keys import ResultKey

TENSOR = TensorSpec("fp32", (64, 32), (32, 1), 0, 2048)


def _key(**changes) -> ResultKey:
    base = ResultKey(
        source_hash="s",
        kernel_key="k",
        depends="d",
        specialization="spec",
        grid=(2, 1, 1),
        target="cuda:89",
        triton="3.9.0",
        mapper="m",
        kernel_file="/w/k.py",
        clients=("bounds", "footprint"),
        budget=1000,
        engine_mode="auto",
        tensors=(("x_ptr", TENSOR),),
        scalars="[('n', '64')]",
    )
    return replace(base, **changes)


def test_equal_keys_have_one_digest():
    assert _key().digest() == _key().digest()
    assert _key(tensors=(("x_ptr", replace(TENSOR)),)).digest() == _key().digest()


def test_every_field_changes_the_digest():
    other = {
        "grid": (2, 2, 1),
        "clients": ("bounds",),
        "budget": 1001,
        "tensors": (("y_ptr", TENSOR),),
    }
    seen = {_key().digest()}
    for f in fields(ResultKey):
        value = other.get(f.name, getattr(_key(), f.name) + "'" if isinstance(getattr(_key(), f.name), str) else None)
        assert value is not None, f.name
        seen.add(_key(**{f.name: value}).digest())
    assert len(seen) == len(fields(ResultKey)) + 1


def test_every_field_of_a_tensor_changes_the_digest():
    changed = [
        replace(TENSOR, dtype="fp16"),
        replace(TENSOR, shape=(64, 31)),
        replace(TENSOR, strides=(1, 64)),
        replace(TENSOR, offset=1),
        replace(TENSOR, storage=4096),
        replace(TENSOR, values=(0, 10)),
        replace(TENSOR, values=((0, 10),)),
    ]
    digests = {_key(tensors=(("x_ptr", t),)).digest() for t in changed} | {_key().digest()}
    assert len(digests) == len(changed) + 1
