"""A probed request (`Worker.request(..., probe=True)`, what the server sends on a save) sends a ping
in the same write: a worker that was dead before it answered the ping (killed while idle) is
replaced quietly and the file analysed; a worker that dies after answering it (the file's own
doing) is still this file's crash (TL050). The ping used to be a round trip of its own."""

from __future__ import annotations

import os
import signal
import textwrap
import threading
from pathlib import Path

import pytest

from tilelens_lsp.settings import Settings
from tilelens_lsp.worker.process import Worker

CLEAN = textwrap.dedent("""\
    import triton
    import triton.language as tl

    # tilelens: k[(1,)](fp32[16], BLOCK=16)
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")
SELF_KILL = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n" + CLEAN


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("probe")
    (root / "clean.py").write_text(CLEAN)
    (root / "dies.py").write_text(SELF_KILL)
    return root


@pytest.fixture(scope="module")
def worker(folder: Path):
    w = Worker(Settings(timeout=60.0), cwd=str(folder))
    w.start()
    yield w
    w.stop()


def _dies_unseen(worker: Worker) -> None:
    """Stop the process (it still counts as alive and the request's write succeeds), kill it a moment later."""
    pid = worker.pid()
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)
    threading.Timer(0.3, os.kill, (pid, signal.SIGKILL)).start()


def _codes(result) -> list[str]:
    return [d.code for d in result.all_diagnostics()]


def test_a_worker_dead_before_the_probe_is_replaced_quietly(worker: Worker, folder: Path):
    assert _codes(worker.analyze(folder / "clean.py", folder, probe=True)) == []
    before = worker.pid()
    _dies_unseen(worker)
    result = worker.analyze(folder / "clean.py", folder, probe=True)
    assert _codes(result) == [] and [launch.status for launch in result.launches] == ["analyzed"]
    assert worker.alive() and worker.pid() != before


def test_without_the_probe_the_same_death_is_the_files_crash(worker: Worker, folder: Path):
    _dies_unseen(worker)
    result = worker.analyze(folder / "clean.py", folder)
    assert _codes(result) == ["TL050"]


def test_a_crash_after_the_probe_is_answered_is_the_files(worker: Worker, folder: Path):
    result = worker.analyze(folder / "dies.py", folder, probe=True)
    assert _codes(result) == ["TL050"] and "signal 9" in result.all_diagnostics()[0].message
    assert _codes(worker.analyze(folder / "clean.py", folder, probe=True)) == []
