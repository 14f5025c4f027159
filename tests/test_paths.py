"""paths.relative_posix, the one way a path is made relative to a root (locs, the CLI, the server)."""

from __future__ import annotations

import os

from tilelens_lsp.paths import relative_posix


def test_inside_outside_and_the_root_itself(tmp_path):
    (tmp_path / "ws" / "pkg").mkdir(parents=True)
    (tmp_path / "wsx").mkdir()
    ws = tmp_path / "ws"
    assert relative_posix(ws / "pkg" / "k.py", ws) == "pkg/k.py"
    assert relative_posix(ws, ws) == "."
    assert relative_posix(tmp_path / "wsx" / "k.py", ws) is None  # a sibling sharing the prefix
    assert relative_posix(tmp_path / "k.py", ws) is None


def test_symlinks_are_resolved_unless_the_caller_already_did(tmp_path):
    (tmp_path / "real" / "sub").mkdir(parents=True)
    os.symlink(tmp_path / "real", tmp_path / "link")
    assert relative_posix(tmp_path / "link" / "sub" / "k.py", tmp_path / "real") == "sub/k.py"
    assert relative_posix(str(tmp_path / "link" / "k.py"), str(tmp_path / "real"), resolved=True) is None


def test_a_root_with_a_trailing_separator(tmp_path):
    assert relative_posix(str(tmp_path / "a" / "b.py"), str(tmp_path) + os.sep, resolved=True) == "a/b.py"
