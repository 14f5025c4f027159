"""The engines' launch model names each declared tensor from the `LaunchSpec` itself
(`engines/model.launch_tensors`): the same names and specs as the fake tensors Triton's binder was
given (`compile/binding.fake_tensors`, the independent reading), for every bound config of the
conformance kernels, descriptors and tuples included."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilelens_lsp.compile.binding import fake_tensors
from tilelens_lsp.compile.compiler import compile_launch
from tilelens_lsp.engines.model import launch_tensors
from tilelens_lsp.pipeline import Imports, declared_launches, file_scope, import_roots, load_module

KERNELS = Path(__file__).resolve().parents[2] / "conformance" / "kernels"
ALL = sorted(p for p in KERNELS.glob("*.py") if "tilelens:" in p.read_text())
# the argument forms that name tensors differently (descriptors, tuples, views, strides, pointers),
# and the first few of the rest
FILES = [p for p in ALL if any(w in p.name for w in ("desc", "tuple", "view", "stride", "ptr"))] + ALL[:10]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_tensors_of_the_spec_are_the_tensors_the_binder_was_given(path: Path):
    _, launches, _, _ = declared_launches(path, path.read_text(), path.parent)
    roots = import_roots(path, path.parent)
    compared = 0
    with file_scope(roots):
        module = load_module(path, roots, Imports())
        for launch in launches:
            for c in compile_launch(getattr(module, launch.kernel), launch, "cuda:89", skip=lambda c: True):
                if c.bound is None:
                    continue
                given = {name: fake.spec for name, fake in fake_tensors(c.bound.arguments).items()}
                assert launch_tensors([p.name for p in c.jit.params], launch) == given
                compared += 1
    assert compared, "every file here declares a launch that binds"
