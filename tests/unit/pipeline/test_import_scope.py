"""`load_module` inside `file_scope` finds the roots where `file_scope` put them and leaves `sys.path`
as placing them afresh would; where the scope could not place every root (one is on sys.path
already) or something moved sys.path since, it places them afresh."""

from __future__ import annotations

import sys
from pathlib import Path

from tilelens_lsp.pipeline import imports


def _module_dir(tmp_path: Path, name: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{name}_kernel.py").write_text("VALUE = 1\n")
    return folder


def _layout(roots: list[Path], path: Path, before: list[str], monkeypatch, placed: bool) -> list[str]:
    sys.path[:] = list(before)
    with imports.file_scope(roots):
        if not placed:
            monkeypatch.setattr(imports, "_placed", None)  # what placing afresh gives
        imports.load_module(path, roots, imports.Imports())
        return list(sys.path)


def test_the_roots_file_scope_placed_are_where_load_module_would_place_them(tmp_path, monkeypatch):
    a, b = _module_dir(tmp_path, "a"), _module_dir(tmp_path, "b")
    saved = list(sys.path)
    try:
        for before in (saved, saved + [str(b)], [str(b)] + saved):  # a root already on sys.path, before or after
            for roots in ([a], [a, b], [b, a]):
                path = roots[0] / f"{roots[0].name}_kernel.py"
                fast = _layout(roots, path, before, monkeypatch, placed=True)
                afresh = _layout(roots, path, before, monkeypatch, placed=False)
                assert fast == afresh, (before[:2], roots)
                assert sys.path == before  # the scope restored it
    finally:
        sys.path[:] = saved


def test_a_sys_path_changed_inside_the_scope_is_placed_afresh(tmp_path):
    a = _module_dir(tmp_path, "a")
    saved = list(sys.path)
    try:
        with imports.file_scope([a]):
            sys.path.remove(str(a))
            sys.path.insert(0, str(a))  # moved before the stdlib
            imports.load_module(a / "a_kernel.py", [a], imports.Imports())
            assert sys.path.index(str(a)) > 0
            assert sys.path.count(str(a)) == 1
        assert sys.path == saved
    finally:
        sys.path[:] = saved
