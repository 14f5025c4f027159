"""Resources (issue 24, items 14-16): enormous tensors, big documents, and writing in place.

Each test failed on the code before its fix; the comment above it says how.
"""

from __future__ import annotations

import textwrap

import relfig

from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.settings import Settings

HUGE = textwrap.dedent("""
    import triton
    import triton.language as tl

    # tilelens: k[(2,)](fp32[2**32, 2**32], BLOCK=16)
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0)
""").lstrip("\n")


# Before: the storage's 2**64 elements overflowed numpy's int64 in the race client (TL050).
def test_a_tensor_of_2_to_the_64_elements_gets_its_race_not_a_crash(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    (tmp_path / "tilelens.toml").touch()
    (tmp_path / "k.py").write_text(HUGE)
    result = analyze_path(tmp_path / "k.py", tmp_path, Settings())
    codes = [d.code for launch in result.launches for d in launch.diagnostics] + [d.code for d in result.diagnostics]
    assert "TL050" not in codes, [d.message for launch in result.launches for d in launch.diagnostics]
    assert "TL005" in codes  # both programs store elements 0..15: the race the client exists for
    relfig.bump("resources", "tested")


# ---------------------------------------------------------------- 16. suggest --write in place

LONELY = textwrap.dedent("""
    import triton
    import triton.language as tl


    @triton.jit
    def lonely(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0, mask=offs < n)
""").lstrip("\n")


def _suggest_write(folder, name):
    import os
    import subprocess
    import sys

    from lsp.lsphelp import REPO

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env["TILELENS_CACHE_DIR"] = "off"
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "suggest", "--write", name],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


# Before: the file was replaced by a new one: a hard link kept the old text.
def test_suggest_write_edits_the_file_itself_so_its_hard_links_see_it(tmp_path):
    (tmp_path / "tilelens.toml").touch()
    path, link = tmp_path / "k.py", tmp_path / "k_link.py"
    path.write_text(LONELY)
    link.hardlink_to(path)
    inode = path.stat().st_ino
    run = _suggest_write(tmp_path, "k.py")
    assert run.returncode == 0, run.stderr
    assert "# tilelens: lonely[" in path.read_text()
    assert path.stat().st_ino == inode and link.read_text() == path.read_text()
    relfig.bump("resources", "tested")


# Before: a read-only file was rewritten all the same (its folder was writable).
def test_suggest_write_refuses_a_read_only_file(tmp_path):
    (tmp_path / "tilelens.toml").touch()
    path = tmp_path / "k.py"
    path.write_text(LONELY)
    path.chmod(0o444)
    try:
        run = _suggest_write(tmp_path, "k.py")
        assert run.returncode == 2 and "read-only" in run.stderr, run.stderr
        assert path.read_text() == LONELY
    finally:
        path.chmod(0o644)
    relfig.bump("resources", "tested")


# ---------------------------------------------------------------- 14. a document over the limit

BIG_KERNEL = textwrap.dedent("""
    import triton
    import triton.language as tl

    # tilelens: k[(4,)](fp32[1000], 1000, BLOCK=256)
    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0)
""").lstrip("\n")


def test_the_server_refuses_a_document_over_the_limit_check_refuses(tmp_path):
    """Before: `check` refused a 9 MiB file (TL010) but the server analysed it, at ~13x its size in memory."""
    import asyncio

    from lsp.lsphelp import SERVER, start_session
    from lsprotocol import types

    from tilelens_lsp.settings import MAX_FILE_BYTES

    filler = "# " + "x" * 98 + "\n"
    text = BIG_KERNEL + filler * (MAX_FILE_BYTES // len(filler) + 10_000)
    assert len(text.encode()) > MAX_FILE_BYTES

    async def session() -> list[types.Diagnostic]:
        client = await SERVER.start()
        try:
            ws = await start_session(client, tmp_path / "ws")
            uri = ws.open("big.py", text)
            return await ws.diagnostics(uri, timeout=120)
        finally:
            await client.shutdown_session()
            await client.stop()

    diags = asyncio.run(session())
    assert [str(d.code) for d in diags] == ["TL010"], [(d.code, d.message) for d in diags]
    assert "MiB limit" in diags[0].message
    relfig.bump("resources", "tested")
