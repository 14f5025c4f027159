"""Golden TTIR per Triton release: `tests/golden/<release>/<kernel>__<launch>.ttir`.

Every declared launch (each autotune config on its own) of every kernel file in
`tests/golden/kernels/` is compiled through the product's own path (tools/ttir_corpus.py: the
worker's import, the directives, the JIT binder, the host compile to TTIR for cuda:89) and written as
`module.str()` with portable locs: workspace files by repo-relative path, Triton's own files as
`triton/...`, anything else by bare name. A kernel file with `# golden: releases 3.6 3.8` is
compiled for those releases only (block pointers were removed in Triton 3.9).

    python tests/golden/generate.py            # (re)write the installed release's goldens
    python tests/golden/generate.py --check    # compare only; exit 1 on any difference

`test_golden.py` regenerates the same texts in memory and compares them byte for byte.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
KERNELS = HERE / "kernels"
TARGET = "cuda:89"

if str(REPO_ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(REPO_ROOT / "tools"))

from ttir_corpus import compile_file, file_releases  # noqa: E402


def installed_release() -> str:
    import triton

    from tilelens_lsp.releases import release_of

    return release_of(triton.__version__)


def golden_dir(release: str) -> Path:
    return HERE / release


def kernel_files_for(release: str) -> list[Path]:
    files = []
    for path in sorted(KERNELS.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "# tilelens:" not in text:
            continue  # helper modules
        allowed = file_releases(text)
        if allowed is None or release in allowed:
            files.append(path)
    return files


def generate(release: str | None = None) -> dict[str, str]:
    """File name → golden text for the installed release, in memory. Raises on any failure."""
    release = release or installed_release()
    if release != installed_release():
        raise ValueError(f"goldens of {release} need Triton {release} installed")
    goldens: dict[str, str] = {}
    failures: list[str] = []
    for path in kernel_files_for(release):
        for launch in compile_file(path, REPO_ROOT, TARGET):
            if launch.text is None:
                failures.append(f"{path.name}: {launch.name}: {launch.error}")
                continue
            name = f"{launch.name}.ttir"
            if name in goldens:
                failures.append(f"{path.name}: {launch.name}: a golden of that name exists already")
                continue
            for marker in ("tilelens_user_", str(REPO_ROOT), "/tmp/"):
                if marker in launch.text:
                    failures.append(f"{path.name}: {launch.name}: machine-dependent text {marker!r} in the TTIR")
            goldens[name] = launch.text if launch.text.endswith("\n") else launch.text + "\n"
    if failures:
        raise RuntimeError("golden generation failed:\n  " + "\n  ".join(failures))
    return goldens


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the files, write nothing")
    args = parser.parse_args(argv)
    release = installed_release()
    goldens = generate(release)
    folder = golden_dir(release)
    existing = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.ttir")} if folder.is_dir() else {}
    changed = sorted(n for n, t in goldens.items() if existing.get(n) != t)
    stale = sorted(set(existing) - set(goldens))
    if args.check:
        for n in changed:
            print(f"differs: {folder.name}/{n}")
        for n in stale:
            print(f"stale: {folder.name}/{n}")
        print(f"goldens {release}: {len(goldens)} generated, {len(changed)} differ, {len(stale)} stale")
        return 1 if changed or stale else 0
    folder.mkdir(exist_ok=True)
    for n in changed:
        (folder / n).write_text(goldens[n], encoding="utf-8")
    for n in stale:
        (folder / n).unlink()
    print(
        f"goldens {release}: {len(goldens)} written to {folder.relative_to(REPO_ROOT)} "
        f"({len(changed)} changed, {len(stale)} removed)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
