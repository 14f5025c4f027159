"""A workspace inside the worker interpreter's own prefix (issue 24, item 2).

`python -m venv .` in the project, or a container with the project under `/usr/src/app` while
Python's prefix is `/usr`: the workspace's modules live under `sys.prefix`, and must still be taken
for the user's own (forgotten between files), not for installed ones. Before, x/y/k.py's masked
`common` stayed imported and x/z.py used it instead of its own unmasked one: `check` missed a TL001.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import relfig
from test_rel_isolation import check, common_tree, verdicts


def venv_in(folder: Path) -> Path:
    """A virtual environment *at* `folder` (its prefix), seeing this interpreter's packages."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "tilelens-test-parent.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_a_workspace_that_is_the_workers_venv_keeps_its_modules_apart(tmp_path):
    python = venv_in(tmp_path)
    prefix = subprocess.run(
        [str(python), "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert Path(prefix).resolve() == tmp_path.resolve()
    common_tree(tmp_path)
    proc = check("x", "--format", "json", "--jobs", "1", "--python", str(python), cwd=tmp_path)
    assert verdicts(proc) == {"x/k.py": ["TL001"], "x/y/k.py": [], "x/z.py": ["TL001"]}, proc.stderr
    assert proc.returncode == 1
    relfig.record("prefix", venv_workspace=True)
