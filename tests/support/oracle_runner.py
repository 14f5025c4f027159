"""Runs `oracle.py` in subprocesses (the interpreter must own its process) and caches its answers.

The cache lives in `tests/conformance/.oracle_cache/` (gitignored), keyed by the kernel file, every
helper file, the oracle's own source and the Triton and numpy versions, so an edit anywhere that can
change an answer misses the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNELS_DIR = HERE.parent / "conformance" / "kernels"
CACHE_DIR = HERE.parent / "conformance" / ".oracle_cache"
REPO_ROOT = HERE.parent.parent


def corpus_files() -> list[Path]:
    return sorted(p.resolve() for p in KERNELS_DIR.glob("*.py"))


def _versions() -> str:
    out = subprocess.run(
        [sys.executable, "-c", "import triton, numpy; print(triton.__version__, numpy.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.strip()


def _cache_key(path: Path, versions: str) -> str:
    h = hashlib.sha256(versions.encode())
    for dep in [path, HERE / "oracle.py", HERE / "directives_fallback.py", *sorted((path.parent / "helpers").glob("*.py"))]:
        if dep.exists():
            h.update(dep.name.encode())
            h.update(dep.read_bytes())
    package = REPO_ROOT / "tilelens_lsp"
    # the product's parser (launches/) decides what the launches are
    for dep in [*sorted((package / "launches").glob("*.py")), package / "model.py"]:
        try:
            h.update(dep.name.encode())
            h.update(dep.read_bytes())
        except OSError:
            pass
    return h.hexdigest()[:24]


def _run_batch(files: list[Path]) -> list[dict]:
    env = dict(os.environ)
    env["TRITON_INTERPRET"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, str(HERE / "oracle.py"), *map(str, files)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(REPO_ROOT),
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        msg = f"oracle process failed (rc {proc.returncode}): {proc.stderr[-4000:]}"
        return [{"path": str(f), "errors": [msg], "runs": []} for f in files]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_oracle_files(files: list[Path], jobs: int | None = None, use_cache: bool = True) -> dict[str, dict]:
    """path -> the oracle's record for that file (see oracle.run_file)."""
    files = [Path(f).resolve() for f in files]
    versions = _versions()
    results: dict[str, dict] = {}
    todo: list[Path] = []
    keys = {f: _cache_key(f, versions) for f in files}
    for f in files:
        cached = CACHE_DIR / f"{f.stem}-{keys[f]}.json"
        if use_cache and cached.exists():
            results[str(f)] = json.loads(cached.read_text())
        else:
            todo.append(f)
    if todo:
        jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
        # Interleave so each worker gets a mix of cheap and costly files.
        batches = [todo[i::jobs] for i in range(jobs)]
        with ThreadPoolExecutor(jobs) as pool:
            for batch_result in pool.map(_run_batch, batches):
                for rec in batch_result:
                    results[rec["path"]] = rec
                    f = Path(rec["path"])
                    ok = not rec["errors"] and all("error" not in r for r in rec["runs"])
                    if use_cache and ok and f in keys:
                        CACHE_DIR.mkdir(exist_ok=True)
                        (CACHE_DIR / f"{f.stem}-{keys[f]}.json").write_text(json.dumps(rec))
    return results
