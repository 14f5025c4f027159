"""The worker's timeout guards against hangs without making verdicts depend on the host's load: a busy
worker that a loaded host gives less than a core may use the timeout in CPU time (up to LOADED_CAP
timeouts on the clock); a worker that computes nothing is hung at the timeout, as before."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tilelens_lsp.settings import Settings
from tilelens_lsp.worker.process import BUSY_SHARE, LOADED_CAP, Worker, cpu_seconds, owed_seconds


def test_a_worker_that_computes_nothing_is_owed_nothing():
    assert owed_seconds(30, 30, 0.1) == 0.0


def test_a_busy_worker_short_of_a_core_is_owed_the_cpu_time_it_has_left():
    assert owed_seconds(30, 30, 15) == 15  # half a core: it may run to 60 s on the clock


def test_a_worker_that_has_used_its_timeout_in_cpu_time_is_owed_nothing():
    assert owed_seconds(30, 31, 30) == 0.0


def test_no_wait_goes_past_the_cap_on_the_clock():
    assert owed_seconds(30, LOADED_CAP * 30, 100) == 0.0
    assert owed_seconds(10, LOADED_CAP * 10 - 0.2, 9.96) == pytest.approx(0.2)  # owed 0.5 s, 0.2 s left


def test_a_share_below_the_busy_share_counts_as_hung():
    assert owed_seconds(30, 60, BUSY_SHARE * 60 - 1) == 0.0


def test_where_cpu_time_cannot_be_read_the_timeout_is_the_clock():
    assert owed_seconds(30, 30, None) == 0.0


def test_cpu_seconds_counts_this_process_computing():
    before = cpu_seconds(os.getpid())
    if before is None:
        pytest.skip("no /proc here: the timeout is the clock alone")
    t0 = time.process_time()
    while time.process_time() - t0 < 0.3:
        pass
    after = cpu_seconds(os.getpid())
    assert after is not None and after - before >= 0.2


BUSY = textwrap.dedent("""\
    import time
    import triton
    import triton.language as tl


    def busy(args):
        t0 = time.process_time()
        while time.process_time() - t0 < args["seconds"]:   # CPU seconds, whatever the clock says
            pass
        return 16


    # tilelens: k[(1,)](fp32[16], 2.0)
    @triton.heuristics({"BLOCK": busy})
    @triton.jit
    def k(x_ptr, seconds, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or cpu_seconds(os.getpid()) is None, reason="Linux only")
def test_a_launch_that_computes_within_its_timeout_is_answered_on_a_loaded_host(tmp_path: Path):
    # the worker shares one CPU with a process that never sleeps: 2 s of CPU take about 4 s on the
    # clock, past the 3 s timeout, yet well within it in CPU time
    f = tmp_path / "busy.py"
    f.write_text(BUSY)
    cpu = min(os.sched_getaffinity(0))
    worker = Worker(Settings(timeout=3.0))
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        worker.start()
        os.sched_setaffinity(hog.pid, {cpu})
        os.sched_setaffinity(worker.pid(), {cpu})
        t0 = time.monotonic()
        result = worker.analyze(f, tmp_path)
        elapsed = time.monotonic() - t0
    finally:
        hog.kill()
        hog.wait()
        worker.stop()
    assert [launch.status for launch in result.launches] == ["analyzed"]
    if elapsed <= 3.0:
        # the case this guards (past the timeout on the clock) did not occur: where the kernel ignores
        # CPU affinity (some sandboxes), the worker may get a CPU of its own; said, never passed as tested
        pytest.skip(f"the worker was not slowed past its timeout on the clock ({elapsed:.1f} s): no loaded host here")
