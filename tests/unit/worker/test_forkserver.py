"""Warm workers forked from a fork server give the results a freshly started worker gives, keep no
state of one another's files, and still report how they died (the TL050 message names the signal).
"""

from __future__ import annotations

import gc
import textwrap
from pathlib import Path

import pytest

from tests.support import SAMPLES
from tilelens_lsp.settings import Settings
from tilelens_lsp.worker.forkserver import ForkServer
from tilelens_lsp.worker.process import Worker, spawn_process
from tilelens_lsp.worker.template import GC_THRESHOLDS, settled_heap

KERNEL = textwrap.dedent("""\
    import triton
    import triton.language as tl

    # tilelens: k[(1,)](fp32[8], BLOCK=16)
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")


@pytest.fixture(scope="module")
def server():
    settings = Settings()
    srv = ForkServer.start(settings, lambda extra, stdin: spawn_process(settings, extra, stdin))
    assert srv is not None, "the fork server did not start"
    yield srv
    srv.stop()


def test_forked_workers_answer_as_spawned_ones(server, tmp_path: Path):
    spawned, forked = Worker(Settings()), Worker(Settings(), fork_server=server)
    try:
        for f in sorted(SAMPLES.glob("*.py")):
            a = spawned.analyze(f, SAMPLES.parent)
            b = forked.analyze(f, SAMPLES.parent)
            assert a == b, f.name
            assert a.launches
        assert forked.hello is not None and forked.hello == spawned.hello
    finally:
        spawned.stop()
        forked.stop()


def test_one_forked_worker_leaves_nothing_to_the_next(server, tmp_path: Path):
    (tmp_path / "leaks.py").write_text(
        "import os, triton\nos.environ['TILELENS_LEAK'] = '1'\ntriton.tilelens_leak = True\n" + KERNEL
    )
    (tmp_path / "checks.py").write_text(
        "import os, triton\nassert 'TILELENS_LEAK' not in os.environ\nassert not hasattr(triton, 'tilelens_leak')\n" + KERNEL
    )
    first = Worker(Settings(), fork_server=server)
    second = Worker(Settings(), fork_server=server)
    try:
        assert first.analyze(tmp_path / "leaks.py", tmp_path).launches[0].status == "analyzed"
        result = second.analyze(tmp_path / "checks.py", tmp_path)  # forked after the leak
        assert [d.code for d in result.all_diagnostics()] == ["TL001"]  # imported fine: no TL010
        assert first.pid() != second.pid()
    finally:
        first.stop()
        second.stop()


def test_a_forked_worker_that_crashes_is_named_and_replaced(server, tmp_path: Path):
    (tmp_path / "segv.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n" + KERNEL)
    worker = Worker(Settings(), fork_server=server)
    try:
        result = worker.analyze(tmp_path / "segv.py", tmp_path)
        assert [d.code for d in result.all_diagnostics()] == ["TL050"]
        assert "crashed (signal 11)" in result.diagnostics[0].message
        (tmp_path / "fine.py").write_text(KERNEL)
        again = worker.analyze(tmp_path / "fine.py", tmp_path)
        assert [d.code for d in again.all_diagnostics()] == ["TL001"]
    finally:
        worker.stop()


def test_check_with_jobs_uses_warm_workers_and_matches_one_job(tmp_path: Path):
    import json
    import subprocess
    import sys

    out = {}
    for jobs in ("1", "3"):
        proc = subprocess.run(
            [sys.executable, "-m", "tilelens_lsp", "check", str(SAMPLES), "--format", "json", "--jobs", jobs],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=tmp_path,
        )
        assert proc.returncode == 1, proc.stderr  # the samples hold real bugs
        out[jobs] = json.loads(proc.stdout)
    assert out["1"] == out["3"]


def test_spawned_and_forked_workers_keep_what_they_prepared_out_of_the_collector(server, tmp_path: Path):
    """Triton and the pipeline, imported before any file, are frozen out of the garbage collector's
    walks (a full collection with a torch package imported took a tenth of a worker's time)."""
    out = tmp_path / "gc.txt"
    (tmp_path / "probe.py").write_text(
        f"import gc\nopen({str(out)!r}, 'a').write(f'{{gc.get_freeze_count()}} {{gc.get_threshold()[0]}}\\n')\n" + KERNEL
    )
    spawned, forked = Worker(Settings()), Worker(Settings(), fork_server=server)
    try:
        for w in (spawned, forked):
            assert w.analyze(tmp_path / "probe.py", tmp_path).launches[0].status == "analyzed"
    finally:
        spawned.stop()
        forked.stop()
    seen = [tuple(map(int, line.split())) for line in out.read_text().splitlines()]
    assert len(seen) == 2 and all(frozen > 10_000 and threshold == GC_THRESHOLDS[0] for frozen, threshold in seen), seen


def test_a_settled_heap_is_handed_back_on_the_way_out():
    before = gc.get_threshold()
    with settled_heap():
        assert gc.get_freeze_count() > 0 and gc.get_threshold() == GC_THRESHOLDS
    assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
