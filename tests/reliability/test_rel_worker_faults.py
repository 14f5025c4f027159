"""Worker faults: every way the analysis worker can die or hang costs the file a TL050 and nothing else.

Drives `tilelens_lsp.worker.process.Worker` directly (what the server and `check` use): a module that
allocates without bound at import, kills itself with a signal, is killed from outside mid-request,
exits, or hangs in its import, a heuristic or Triton's compile. After each fault the very next
request, on a clean file, must be answered by a fresh worker.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest
import relfig
from lsp.lsphelp import CLEAN, kernel

from tilelens_lsp.settings import Settings
from tilelens_lsp.worker.process import LOADED_CAP, Worker

MEMORY_LIMIT_MB = 2000
HANG_TIMEOUT = 3.0  # seconds a hung request may take before the worker is replaced
SLACK = 5.0  # kill, reap and report on a loaded CI machine

KERNEL_TAIL = """
# tilelens: k[(1,)](fp32[16], BLOCK=16)
@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
"""


def module(prelude: str) -> str:
    return "import os, signal, sys, time\nimport triton\nimport triton.language as tl\n\n" + prelude + "\n" + KERNEL_TAIL


MEMORY_HOG = module("hog = [bytearray(10**8) for _ in range(1000)]   # 100 GB, past any limit")
SEGV = module("os.kill(os.getpid(), signal.SIGSEGV)")
SELF_KILL = module("os.kill(os.getpid(), signal.SIGKILL)")
ABORT = module("os.abort()")
HARD_EXIT = module("os._exit(3)")
HUNG_IMPORT = module("time.sleep(1000)")
HUNG_HEURISTIC = kernel("""
    import time
    import triton
    import triton.language as tl

    # tilelens: k[(1,)](fp32[16])
    @triton.heuristics({"BLOCK": lambda args: time.sleep(1000) or 16})
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")
HUNG_COMPILE = kernel("""
    import triton
    import triton.language as tl

    # tilelens: k[(1,)](fp32[16], BLOCK=16)
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        for i in tl.static_range(10**7):        # unrolled by Triton's code generator: never ends
            tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")
CHATTY = module('print(\'x\' * 10**6); sys.stdout.write(\'{"id": 1, "result": "forged"}\\n\'); sys.stdout.flush()')


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("faults")
    (root / "clean.py").write_text(CLEAN)
    return root


@pytest.fixture(scope="module")
def worker(folder: Path):
    w = Worker(Settings(memory_limit_mb=MEMORY_LIMIT_MB, timeout=30.0), cwd=str(folder))
    w.start()
    yield w
    w.stop()


def analyze(worker: Worker, folder: Path, name: str, text: str | None = None, timeout: float = 30.0):
    if text is not None:
        (folder / name).write_text(text)
    settings = Settings(memory_limit_mb=MEMORY_LIMIT_MB, timeout=timeout)
    t0 = time.monotonic()
    result = worker.analyze(folder / name, folder, settings=settings)
    return result, time.monotonic() - t0


def survives(worker: Worker, folder: Path, before: int | None) -> None:
    """The next request, on a clean file, is answered in full by a fresh worker."""
    result, _ = analyze(worker, folder, "clean.py")
    assert [d.code for d in result.all_diagnostics()] == []
    assert [launch.status for launch in result.launches] == ["analyzed"]
    assert worker.alive() and worker.pid() != before
    relfig.bump("faults", "survived")


def tl050(result) -> str:
    """The one TL050: on the file (line 1) when the import failed, else on the launch that failed
    (timeouts are per launch: a hung compile costs its launch, which becomes `crashed`)."""
    diags = result.all_diagnostics()
    assert [d.code for d in diags] == ["TL050"], [(d.code, d.message) for d in diags]
    on_launch = [launch for launch in result.launches if launch.diagnostics]
    expected_line = on_launch[0].line if on_launch else 1
    assert diags[0].severity == "warning" and diags[0].line == expected_line
    assert all(launch.status == "crashed" for launch in on_launch)
    return diags[0].message


CRASHES = [
    ("memory", MEMORY_HOG, r"ran out of memory \(limit 2000 MB\)"),
    ("sigsegv", SEGV, r"crashed \(signal 11\)"),
    ("self-sigkill", SELF_KILL, r"crashed \(signal 9\)"),
    ("abort", ABORT, r"crashed \(signal 6\)"),
    ("exit", HARD_EXIT, r"crashed \(exit code 3\)"),
]


@pytest.mark.parametrize("name,text,expected", CRASHES, ids=[c[0] for c in CRASHES])
def test_a_crashing_module_is_a_tl050_and_the_next_request_succeeds(worker, folder, name, text, expected):
    before = worker.pid()
    relfig.bump("faults", "injected")
    result, _ = analyze(worker, folder, f"{name}.py", text)
    assert re.search(expected, tl050(result)), tl050(result)
    assert "a fresh worker was started" in tl050(result)
    survives(worker, folder, before)


def test_a_worker_killed_from_outside_mid_request_is_a_tl050(worker, folder):
    (folder / "hung.py").write_text(HUNG_IMPORT)
    before = worker.pid()
    relfig.bump("faults", "injected")
    box: dict = {}
    thread = threading.Thread(target=lambda: box.update(r=analyze(worker, folder, "hung.py", timeout=60)))
    thread.start()
    time.sleep(1.0)  # the request is in flight: the import sleeps
    os.kill(worker.pid(), signal.SIGKILL)
    thread.join(SLACK + 5)
    assert not thread.is_alive()
    result, elapsed = box["r"]
    assert "crashed (signal 9)" in tl050(result) and elapsed < 10
    survives(worker, folder, before)


HANGS = [("import", HUNG_IMPORT), ("heuristic", HUNG_HEURISTIC), ("compile", HUNG_COMPILE)]


@pytest.mark.parametrize("where,text", HANGS, ids=[h[0] for h in HANGS])
def test_a_hung_request_is_a_tl050_within_the_timeout(worker, folder, where, text):
    before = worker.pid()
    relfig.bump("faults", "injected")
    result, elapsed = analyze(worker, folder, f"hung_{where}.py", text, timeout=HANG_TIMEOUT)
    assert f"timed out after {HANG_TIMEOUT:g} s" in tl050(result)
    # the compile hang computes: on a loaded machine it may use the timeout in CPU time (process.py)
    limit = LOADED_CAP * HANG_TIMEOUT if where == "compile" else HANG_TIMEOUT
    assert HANG_TIMEOUT <= elapsed < limit + SLACK
    survives(worker, folder, before)


STDIN_ABUSE = [  # in this order: a module that closes fd 0 leaves the (shared) worker without one
    ("reads-stdin", module("data = sys.stdin.read()   # would block on, or eat, the worker's requests"), []),
    ("input", module("answer = input('? ')"), ["TL010"]),
    ("closes-fd0", module("os.close(0)"), []),
]


@pytest.mark.parametrize("name,text,codes", STDIN_ABUSE, ids=[c[0] for c in STDIN_ABUSE])
def test_a_module_that_abuses_stdin_cannot_reach_the_request_pipe(worker, folder, name, text, codes):
    """Requests reach the worker on a private fd; fd 0 is /dev/null. Before, `os.close(0)` killed the
    worker after its reply (the *next* file got the TL050) and `sys.stdin.read()` hung until the timeout."""
    relfig.bump("faults", "injected")
    before = worker.pid()
    result, elapsed = analyze(worker, folder, f"{name}.py", text, timeout=10)
    assert [d.code for d in result.all_diagnostics()] == codes, [d.message for d in result.all_diagnostics()]
    if codes:
        assert "EOFError" in result.all_diagnostics()[0].message
    assert elapsed < 5
    result, _ = analyze(worker, folder, "clean.py")  # at once: no time to die in between
    assert [d.code for d in result.all_diagnostics()] == [], [d.message for d in result.all_diagnostics()]
    assert worker.pid() == before  # the same worker: nothing was lost
    relfig.bump("faults", "survived")


def test_output_of_user_code_cannot_forge_a_reply(worker, folder):
    """A module that prints (even a line that looks like a worker reply) goes to stderr, not the protocol."""
    result, _ = analyze(worker, folder, "chatty.py", CHATTY)
    assert [d.code for d in result.all_diagnostics()] == []
    assert [launch.status for launch in result.launches] == ["analyzed"]
