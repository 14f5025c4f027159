"""Installed packages imported once, in a branch of the fork server, are shared by the workers forked
from it, give the results of workers that import them themselves, and never make forking unsafe: a
failing import is skipped, one that starts a thread gets the branch killed (workers are forked from
the server as before), and what an import changes in the environment does not reach the workers.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tilelens_lsp.settings import Settings
from tilelens_lsp.worker import pool
from tilelens_lsp.worker.forkserver import ForkServer
from tilelens_lsp.worker.pool import analyze_files, installed_packages
from tilelens_lsp.worker.process import Worker, spawn_process

KERNEL = textwrap.dedent("""\
    import triton
    import triton.language as tl

    # tilelens: k[(2,)](fp32[8], BLOCK=4)
    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        tl.store(x_ptr + pid * BLOCK + tl.arange(0, BLOCK), 1.0)
""")


def _site(tmp_path: Path, init: str = "") -> Path:
    """A fake installed package `pkgx` whose `__init__` logs each execution, with two kernel modules."""
    site = tmp_path / "lib" / "site-packages"
    pkg = site / "pkgx"
    pkg.mkdir(parents=True)
    log = tmp_path / "imports.log"
    (pkg / "__init__.py").write_text(f"import os\nopen({str(log)!r}, 'a').write(f'{{os.getpid()}}\\n')\n" + init)
    (pkg / "a.py").write_text(KERNEL)
    (pkg / "b.py").write_text(KERNEL.replace("fp32[8]", "fp32[7]"))
    # as a file after the first of its package sees it in a worker that imports it itself
    leak = "import os\nassert 'TILELENS_BRANCH_LEAK' not in os.environ, 'an import changed the environment'\n"
    (pkg / "c.py").write_text(leak + KERNEL)
    return site


def _imports(tmp_path: Path) -> int:
    log = tmp_path / "imports.log"
    return len(log.read_text().split()) if log.exists() else 0


@pytest.fixture
def start(tmp_path: Path, monkeypatch):
    """`start(init)`: the fake package written (before any interpreter looks at its folder), then a
    fork server whose path has it; the server is stopped after the test."""
    started: list[ForkServer] = []

    def go(init: str = "") -> tuple[Path, ForkServer]:
        site = _site(tmp_path, init)
        monkeypatch.setenv("PYTHONPATH", str(site))
        settings = Settings()
        srv = ForkServer.start(settings, lambda extra, stdin: spawn_process(settings, extra, stdin))
        assert srv is not None, "the fork server did not start"
        started.append(srv)
        return site, srv

    yield go
    for srv in started:
        srv.stop()


def test_the_packages_of_installed_modules_only():
    paths = [
        Path("/v/lib/python3.11/site-packages/liger_kernel/ops/rms_norm.py"),
        Path("/v/lib/python3.11/site-packages/liger_kernel/ops/swiglu.py"),
        Path("/usr/lib/python3/dist-packages/flag_gems/ops/mm.py"),
        Path("/work/project/kernels/add.py"),  # the user's own: always imported by each worker
        Path("/v/lib/python3.11/site-packages/loose_module.py"),  # no package to share
        Path("/v/lib/python3.11/site-packages/odd-name/x.py"),  # not importable by name
    ]
    assert installed_packages(paths) == ["liger_kernel.ops", "flag_gems.ops"]


def test_a_branch_imports_once_and_its_workers_answer_as_cold_ones(tmp_path: Path, start):
    site, server = start("os.environ['TILELENS_BRANCH_LEAK'] = '1'\n")
    branch = server.branch(["pkgx", "no_such_package_tl"], timeout=60)
    assert branch is not None
    warm_server = branch.server()
    assert warm_server is not None, branch.why
    assert branch.reply["preloaded"] == ["pkgx"] and "no_such_package_tl" in branch.reply["failed"]
    assert _imports(tmp_path) == 1
    cold = Worker(Settings())
    warm = [Worker(Settings(), fork_server=warm_server) for _ in range(2)]
    try:
        for w, name in zip(warm, ("a.py", "b.py")):
            got, want = w.analyze(site / "pkgx" / name, tmp_path), cold.analyze(site / "pkgx" / name, tmp_path)
            assert got == want and got.launches, name
            assert got.launches[0].status == "analyzed", got
        codes = {d.code for d in warm[1].analyze(site / "pkgx" / "b.py", tmp_path).launches[0].diagnostics}
        assert "TL001" in codes  # b.py stores 8 floats into 7: the shared package hides nothing
        # the forked workers did not execute the package again; the cold worker did, once
        assert _imports(tmp_path) == 2
        # the package's change to the environment was put back (as a worker does after each file)
        for w in (warm[0], cold):
            assert w.analyze(site / "pkgx" / "c.py", tmp_path).launches[0].status == "analyzed"
    finally:
        for w in [cold, *warm]:
            w.stop()


def test_a_package_that_starts_a_thread_gets_its_branch_killed(tmp_path: Path, start):
    site, server = start("import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n")
    branch = server.branch(["pkgx"], timeout=60)
    assert branch is not None
    assert branch.server() is None
    assert "thread" in branch.why
    assert branch.proc.wait(timeout=10) is not None, "the threaded branch must be gone"
    w = Worker(Settings(), fork_server=server)  # the server itself still forks
    try:
        assert w.analyze(site / "pkgx" / "a.py", tmp_path).launches[0].status == "analyzed"
    finally:
        w.stop()


def test_a_hanging_import_costs_the_branch_not_the_server(tmp_path: Path, start):
    _, server = start("import time\ntime.sleep(600)\n")
    branch = server.branch(["pkgx"], timeout=1)
    assert branch is not None
    assert branch.server() is None and "longer than" in branch.why
    assert server.fork() is not None


def test_a_pool_over_installed_modules_answers_as_one_worker(tmp_path: Path, start, monkeypatch):
    monkeypatch.setattr(pool, "gpu_host", lambda: False)  # the fake package starts no driver anywhere
    site, server = start()
    settings = Settings()
    files = [site / "pkgx" / "a.py", site / "pkgx" / "b.py"]
    one = [Worker(settings)]
    two = [Worker(settings, fork_server=server) for _ in range(2)]
    try:
        assert analyze_files(two, files, tmp_path, None, settings) == analyze_files(one, files, tmp_path, None, settings)
        # one import in the branch (shared by both re-forked workers), one by the single worker
        assert _imports(tmp_path) == 2
        assert all(w.fork_server is not server for w in two)
    finally:
        for w in one + two:
            w.stop()


def test_no_branch_on_a_gpu_host(tmp_path: Path, start, monkeypatch):
    monkeypatch.setattr(pool, "gpu_host", lambda: True)
    site, server = start()
    settings = Settings()
    two = [Worker(settings, fork_server=server) for _ in range(2)]
    try:
        results = analyze_files(two, [site / "pkgx" / "a.py", site / "pkgx" / "b.py"], tmp_path, None, settings)
        assert [r.launches[0].status for r in results] == ["analyzed", "analyzed"]
        assert all(w.fork_server is server for w in two)
    finally:
        for w in two:
            w.stop()


def test_without_a_branch_each_worker_keeps_to_the_package_it_imported(tmp_path: Path, monkeypatch):
    """Where no branch imports the packages (a GPU host), a worker pays each package's import itself:
    given the modules of two packages interleaved, each of two workers imports one package, not both
    (an import of 1.5 s outweighs the few launches left to the other worker)."""
    monkeypatch.setattr(pool, "gpu_host", lambda: True)
    site = tmp_path / "lib" / "site-packages"
    log = tmp_path / "imports.log"
    modules = ("m1", "m2", "m3", "m4")
    for name in ("pkga", "pkgb"):
        (site / name).mkdir(parents=True)
        logged = f"import os, time\nopen({str(log)!r}, 'a').write(f'{name} {{os.getpid()}}\\n')\ntime.sleep(1.5)\n"
        (site / name / "__init__.py").write_text(logged)
        for module in modules:
            (site / name / f"{module}.py").write_text(KERNEL)
    files = [site / p / f"{m}.py" for m in modules for p in ("pkga", "pkgb")]  # a1 b1 a2 b2 ...
    monkeypatch.setenv("PYTHONPATH", str(site))
    settings = Settings()
    server = ForkServer.start(settings, lambda extra, stdin: spawn_process(settings, extra, stdin))
    assert server is not None, "the fork server did not start"
    two = [Worker(settings, fork_server=server) for _ in range(2)]
    try:
        results = analyze_files(two, files, tmp_path, None, settings)
    finally:
        for w in two:
            w.stop()
        server.stop()
    assert [r.launches[0].status for r in results] == ["analyzed"] * len(files)
    imports = sorted(tuple(line.split()) for line in log.read_text().splitlines())
    assert len({pid for _, pid in imports}) == len(imports) == 2, imports  # no worker imported both
