"""A `module =` launch of an installed package has site-packages itself as its import root. Modules
under that root (torch, triton, the package) are installed, never the user's: the corpus sweep saw
every Liger module after the first fail to import ("Only a single TORCH_LIBRARY can be used to register
the namespace _inductor_test") because torch had been forgotten between files and imported again."""

from __future__ import annotations

import types
from pathlib import Path

from tilelens_lsp import pipeline


def _module(path: Path) -> types.ModuleType:
    m = types.ModuleType("m")
    m.__file__ = str(path)
    return m


def test_a_module_under_an_installed_root_is_not_the_users(tmp_path):
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("")
    assert not pipeline.is_user_module(_module(site / "torch" / "__init__.py"), [site])


def test_a_workspace_module_is_the_users_even_inside_a_prefix(tmp_path):
    (tmp_path / "helpers.py").write_text("")
    assert pipeline.is_user_module(_module(tmp_path / "helpers.py"), [tmp_path])
