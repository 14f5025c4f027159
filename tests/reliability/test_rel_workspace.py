"""Nothing is written into the workspace, and the result cache outside it survives corruption.

A whole LSP session (open, hover, save, a worker crash, close) and a `tilelens-lsp check` run over a
workspace holding a package with relative imports, a loose kernel, a crashing module and a toml
launch leave every path, size, mtime and hash of the tree as it was: no `__pycache__`, no cache, no
temp file. The cache lives in `TILELENS_CACHE_DIR`; a corrupt entry is a miss (same results as a cold
run) and entries are replaced atomically (no `.tmp-*` left, even with two runs racing).
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
import relfig
from lsp.lsphelp import ADD_BUGGY, REPO, SERVER, UNMASKED_LINE, Workspace, codes, kernel, make_client
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tilelens_lsp.model import LaunchResult

HELPERS = kernel("""
    import triton
    import triton.language as tl


    @triton.jit
    def block_offsets(pid, BLOCK: tl.constexpr):
        return pid * BLOCK + tl.arange(0, BLOCK)
""")
KERN = kernel("""
    import triton
    import triton.language as tl

    from .helpers import block_offsets


    @triton.jit
    def scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
        offs = block_offsets(tl.program_id(0), BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
""")
TOML = """
[[launch]]
file = "pkg/kern.py"
launch = "scale_kernel[(8,)](fp32[1000], 1000, BLOCK=128)"
"""
CRASH = kernel("""
    import os
    import signal
    import triton
    import triton.language as tl

    os.kill(os.getpid(), signal.SIGSEGV)

    # tilelens: k[(1,)](fp32[16], BLOCK=16)
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")


def make_workspace(root: Path) -> Path:
    files = {
        "tilelens.toml": TOML,
        "add.py": ADD_BUGGY,
        "crash.py": CRASH,
        "pkg/__init__.py": "",
        "pkg/helpers.py": HELPERS,
        "pkg/kern.py": KERN,
        "notes.txt": "not a kernel\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def snapshot(root: Path) -> dict[str, tuple]:
    """Every path under `root`: kind, size, mtime (ns) and content hash; folders with their mtime
    (which changes when an entry is created or removed in them, even a temp file)."""
    out: dict[str, tuple] = {".": ("dir", os.stat(root).st_mtime_ns)}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            st = os.lstat(path)
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir", st.st_mtime_ns)
            else:
                out[rel] = ("file", st.st_size, st.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest())
    return out


def user_env(cache: Path | str) -> dict[str, str]:
    """Like a user's shell: bytecode writing on; the cache where the test says."""
    env = {k: v for k, v in SERVER.server_env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["TILELENS_CACHE_DIR"] = str(cache)
    return env


def check(paths: list[str], cwd: Path, cache: Path | str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", *paths, *extra],
        cwd=cwd,
        env=user_env(cache),
        capture_output=True,
        text=True,
        timeout=300,
    )


# ---------------------------------------------------------------- no writes


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("user-cache")


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("ws-nowrite"))


@pytest.fixture(scope="module")
def before(root: Path) -> dict:
    return snapshot(root)


CACHE_HOME = Path(os.environ.get("TILELENS_CACHE_DIR") or "/nonexistent")  # tests/conftest.py's, outside


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=SERVER.server_command, client_factory=make_client, server_env=user_env(CACHE_HOME)
    )
)
async def client(lsp_client: LanguageClient, root: Path, before: dict):
    await lsp_client.initialize_session(
        types.InitializeParams(  # as lsphelp.start_session, minus its touch
            capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options={"workerTimeout": 30},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_an_lsp_session_writes_nothing_into_the_workspace(client: LanguageClient, root: Path, before: dict):
    ws = Workspace(root, client)
    add = ws.open("add.py")
    assert codes(await ws.diagnostics(add)) == ["TL001"]
    assert (await ws.hover(add, UNMASKED_LINE)) is not None
    kern = ws.open("pkg/kern.py")
    assert codes(await ws.diagnostics(kern)) == []
    assert (await ws.hover(kern, 9)) is not None  # the toml launch's load and store
    ws.save("add.py")
    assert codes(await ws.diagnostics(add)) == ["TL001"]
    pid = (await ws.stats())["worker_pid"]
    crash = ws.open("crash.py")
    assert codes(await ws.diagnostics(crash)) == ["TL050"]  # the worker died importing it
    ws.save("add.py")
    assert codes(await ws.diagnostics(add)) == ["TL001"]  # a fresh worker answers
    assert (await ws.stats())["worker_pid"] != pid
    for uri, name in ((add, "add.py"), (kern, "pkg/kern.py"), (crash, "crash.py")):
        ws.close(name)
        assert await ws.diagnostics(uri) == []
    assert snapshot(root) == before
    relfig.record("workspace", files=sum(1 for v in before.values() if v[0] == "file"))
    relfig.bump("workspace", "sessions")


def test_check_writes_nothing_into_the_workspace(root: Path, before: dict, outside: Path):
    result = check(["."], root, outside / "cache")
    assert result.returncode == 1, result.stderr
    assert "add.py:10:" in result.stdout and "[TL001]" in result.stdout
    assert "crash.py:1:1: warning:" in result.stdout and "[TL050]" in result.stdout
    result = check(["--format", "sarif", str(root)], REPO, outside / "cache")  # warm, from elsewhere
    assert result.returncode == 1
    assert snapshot(root) == before
    relfig.record("workspace", files=sum(1 for v in before.values() if v[0] == "file"))
    relfig.bump("workspace", "checks", 2)


# ---------------------------------------------------------------- the cache


def entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file())


GARBAGE = [b"", b"{", b"\x00\xff" * 64, b"null", b"[]", b'{"kernel": 1}', b'{"status": "analyzed"}']


def test_a_corrupt_cache_is_ignored_and_rewritten_atomically(tmp_path: Path):
    ws = make_workspace(tmp_path / "ws")
    (ws / "crash.py").unlink()  # a crash is not a result: nothing to cache
    shutil.copytree(REPO / "samples", ws / "samples", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    cold = check(["--format", "json", "."], ws, cache)
    assert cold.returncode == 1, cold.stderr
    written = entries(cache)
    assert written and not [p for p in written if p.name.startswith(".tmp-")]
    for path in written:  # each entry is whole: it loads back
        LaunchResult.from_json(json.loads(path.read_text()))
    for i, path in enumerate(written):  # corrupt every one, a different way each
        path.write_bytes(GARBAGE[i % len(GARBAGE)])
    corrupt = check(["--format", "json", "."], ws, cache)
    assert (corrupt.returncode, corrupt.stdout) == (cold.returncode, cold.stdout)
    rewritten = entries(cache)
    assert [p.name for p in rewritten] == [p.name for p in written]
    for path in rewritten:  # the corrupt entries were replaced by good ones
        LaunchResult.from_json(json.loads(path.read_text()))
    mtimes = {p: p.stat().st_mtime_ns for p in rewritten}
    warm = check(["--format", "json", "."], ws, cache)
    assert warm.stdout == cold.stdout
    assert {p: p.stat().st_mtime_ns for p in entries(cache)} == mtimes  # served from the cache
    relfig.record(
        "cache",
        corrupted=len(written),
        identical=True,
        tmp_left=len([p for p in entries(cache) if p.name.startswith(".tmp-")]),
    )


def test_an_entry_that_cannot_be_replaced_leaves_no_temp_file(tmp_path: Path):
    ws = make_workspace(tmp_path / "ws")
    (ws / "crash.py").unlink()
    cache = tmp_path / "cache"
    cold = check(["--format", "json", "."], ws, cache)
    for path in entries(cache):  # each entry's name is now taken by a folder
        path.unlink()
        (path / "in-the-way").mkdir(parents=True)
    blocked = check(["--format", "json", "."], ws, cache)
    assert blocked.stdout == cold.stdout
    left = [p for p in cache.rglob(".tmp-*")]
    assert left == [], left


def test_two_runs_racing_on_one_cache_leave_only_whole_entries(tmp_path: Path):
    ws = make_workspace(tmp_path / "ws")
    (ws / "crash.py").unlink()
    reference = check(["--format", "json", "."], ws, tmp_path / "reference-cache")
    cache = tmp_path / "cache"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda _: check(["--format", "json", "."], ws, cache), range(2)))
    assert [r.stdout for r in runs] == [reference.stdout] * 2
    found = entries(cache)
    assert found and not [p for p in found if p.name.startswith(".tmp-")]
    for path in found:
        LaunchResult.from_json(json.loads(path.read_text()))
