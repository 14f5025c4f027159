"""The VS Code extension builds, passes its unit tests and packages to a .vsix (editors/vscode/ci.sh).

Needs Node 20+ with npm and the npm registry (or a warm npm cache); no VS Code.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

EXTENSION_DIR = Path(__file__).resolve().parents[2] / "editors" / "vscode"


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not on PATH: the VS Code extension cannot be built")
def test_extension_builds_tests_and_packages_to_a_vsix():
    proc = subprocess.run(
        ["bash", str(EXTENSION_DIR / "ci.sh")],
        cwd=EXTENSION_DIR,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, f"ci.sh failed ({proc.returncode}):\n{proc.stdout[-8000:]}\n{proc.stderr[-8000:]}"

    packages = list(EXTENSION_DIR.glob("*.vsix"))
    assert len(packages) == 1, packages
    with zipfile.ZipFile(packages[0]) as vsix:
        names = set(vsix.namelist())
        readme = vsix.read("extension/readme.md").decode("utf-8")
    assert {"extension/package.json", "extension/dist/extension.js", "extension/images/icon.png"} <= names, sorted(names)
    # the project has no public home, so no URL is made up for it: the README's links to its
    # screenshots stay relative and the screenshots travel in the package
    shots = re.findall(r"\]\((images/screenshots/[\w-]+\.png)\)", readme)
    assert len(shots) == 5 and "https://github.com/tilelens" not in readme, readme[:3000]
    assert {f"extension/{s}" for s in shots} <= names, sorted(names)
    for block in re.findall(r"```.*?```", readme, re.S):
        assert "https://" not in block, block
