"""A branch on a loaded scalar narrows it in the grid engine, as in the enumeration: the side of
`if y != ignore_index:`, the rest of a kernel after `if y == ignore_index: ...; return`.

Liger's cross entropy over 131,072 rows (`kernels/cross_entropy_*.py`) is answered by the grid engine,
which used to read the label's logit at -100 (a TL002 on a correct kernel at every training size).
Pinned here: the correct kernel is clean there; a label one past the vocabulary keeps its TL002 with
the value that takes it out; and on the guard fixtures of the enumeration (a narrowing holds inside
its branch and on its own edge only, never after the join), the forced grid engine reports the same
verdicts at the same lines.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import FIXTURES, line_of, verdicts_by_kernel
from tilelens_lsp.engines import select
from tilelens_lsp.pipeline import analyze_path

KERNELS = Path(__file__).resolve().parent / "kernels"
V = 128256


def _launch(path: Path):
    (launch,) = analyze_path(path, workspace_root=path.parent).launches
    return launch


def test_cross_entropy_with_an_ignore_index_at_training_size_is_clean():
    launch = _launch(KERNELS / "cross_entropy_ignore_index.py")
    assert launch.grid == (131072, 1, 1)
    assert (launch.engine, launch.status, launch.diagnostics) == ("grid", "analyzed", ())


def test_a_label_past_the_vocabulary_is_a_possible_out_of_bounds_at_that_label():
    path = KERNELS / "cross_entropy_label_past_vocab.py"
    launch = _launch(path)
    assert (launch.engine, launch.status) == ("grid", "analyzed")
    (found,) = launch.diagnostics
    assert (found.code, found.line) == ("TL002", line_of(path, "the label's logit"))
    assert found.witness.value == V
    assert found.witness.element == 131072 * V  # row 131071's label V: one past the storage


@pytest.mark.parametrize(
    "name,kernels",
    [("guard_scopes.py", ["after_join_kernel", "wrong_edge_kernel"]), ("guard_join.py", None)],
)
def test_the_grid_engine_narrows_on_the_branches_the_enumeration_narrows_on(name, kernels, monkeypatch):
    path = FIXTURES / name
    monkeypatch.setenv(select.ENGINE_ENV, "enumerate")
    enumerated = verdicts_by_kernel(path)
    monkeypatch.setenv(select.ENGINE_ENV, "grid")
    gridded = verdicts_by_kernel(path)
    for kernel in kernels or list(enumerated):
        assert enumerated[kernel], f"{kernel}: a fixture with a finding after its branch"
        assert gridded[kernel] == enumerated[kernel], kernel
