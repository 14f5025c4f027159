"""Golden TTIR of the installed Triton release, regenerated in memory and compared byte for byte.

Goldens of other releases are not checked here (they need that release installed: `.ci/matrix.sh
RELEASE`). A difference means the host compile, the binder or the portable locs changed: regenerate
with `python tests/golden/generate.py` only after reading the diff.
"""

from __future__ import annotations

import difflib
import importlib.util
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def _load_generator():
    spec = importlib.util.spec_from_file_location("tilelens_golden_generate", HERE / "generate.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


generate = _load_generator()

RELEASE = generate.installed_release()
FOLDER = generate.golden_dir(RELEASE)


@pytest.fixture(scope="module")
def regenerated() -> dict[str, str]:
    return generate.generate(RELEASE)


def _expected_names() -> list[str]:
    return sorted(p.name for p in FOLDER.glob("*.ttir")) if FOLDER.is_dir() else []


def test_release_has_goldens():
    if not FOLDER.is_dir():
        pytest.skip(f"no goldens for Triton {RELEASE}: run `python tests/golden/generate.py` under it")
    assert _expected_names(), f"{FOLDER} holds no .ttir file"


def test_same_set_of_goldens(regenerated):
    if not FOLDER.is_dir():
        pytest.skip(f"no goldens for Triton {RELEASE}")
    assert sorted(regenerated) == _expected_names()


@pytest.mark.parametrize("name", _expected_names())
def test_golden_byte_for_byte(name, regenerated):
    expected = (FOLDER / name).read_bytes()
    actual = regenerated.get(name)
    assert actual is not None, f"the generator no longer produces {RELEASE}/{name}"
    actual_bytes = actual.encode("utf-8")
    if actual_bytes != expected:
        diff = "".join(
            difflib.unified_diff(
                expected.decode("utf-8").splitlines(True),
                actual.splitlines(True),
                f"golden/{RELEASE}/{name}",
                "regenerated",
                n=2,
            )
        )
        pytest.fail(f"{RELEASE}/{name} differs from its golden:\n{diff[:6000]}")


def test_goldens_are_portable():
    """No absolute path, temporary name or per-machine module name in any stored golden."""
    for folder in sorted(p for p in HERE.iterdir() if p.is_dir() and p.name[:1].isdigit()):
        for path in sorted(folder.glob("*.ttir")):
            text = path.read_text(encoding="utf-8")
            for marker in ('loc("/', "tilelens_user_", "/tmp/", "site-packages"):
                assert marker not in text, f"{folder.name}/{path.name} holds {marker!r}"
