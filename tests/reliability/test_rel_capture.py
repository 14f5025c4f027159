"""`tilelens-lsp capture` under hostile or careless use (issue 24, items 3 and 7-13).

The programs run under Triton's interpreter (TRITON_INTERPRET=1) on numpy-backed tensors
(capture_prog.py), as a user's test suite would on a GPU. The writer's tests call the runner's
functions directly.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import relfig
from lsp.lsphelp import REPO

HERE = Path(__file__).resolve().parent
TIMEOUT = 300  # a safety limit for one subprocess, never an assertion about speed


def env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "TRITON_INTERPRET")}
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), str(HERE), os.environ.get("PYTHONPATH")]))
    base["TILELENS_CACHE_DIR"] = "off"
    base.update(extra)
    return base


def capture(folder: Path, program: str, *extra: str, out: str = "tilelens.toml") -> subprocess.CompletedProcess:
    (folder / "prog.py").write_text(textwrap.dedent(program).lstrip("\n"))
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tilelens_lsp",
            "capture",
            "--out",
            str(folder / out),
            *extra,
            "--",
            sys.executable,
            str(folder / "prog.py"),
        ],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=TIMEOUT,
        env=env(),
    )


def check(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", *args],
        capture_output=True,
        text=True,
        cwd=folder,
        timeout=TIMEOUT,
        env=env(),
    )


# ---------------------------------------------------------------- 3. which kernel was launched

SHADOWED = """
    from capture_prog import Tensor, triton, tl

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):          # the module's kernel: masked, clean
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0, mask=offs < n)

    def test_local():
        @triton.jit
        def k(x_ptr, n, BLOCK: tl.constexpr):      # a test's own kernel of the same name: writes past n
            offs = tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, 1.0)
        k[(1,)](Tensor("fp32", 100), 100, BLOCK=128)

    test_local()
    k[(1,)](Tensor("fp32", 100), 100, BLOCK=128)
"""


def test_a_local_kernel_is_never_recorded_as_the_modules_kernel_of_the_same_name(tmp_path):
    run = capture(tmp_path, SHADOWED)
    assert run.returncode == 0, run.stderr
    tables = tomllib.loads((tmp_path / "tilelens.toml").read_text())["launch"]
    # only the module's own launch is written; the local kernel's is named as not recorded, and why
    assert [t["launch"] for t in tables] == ["k[(1,)](fp32[100], 100, BLOCK=128)"], tables
    assert "not recorded" in run.stderr and "test_local" in run.stderr, run.stderr
    relfig.bump("capture", "tested")


# ---------------------------------------------------------------- 7, 8. the toml file


def _one(file: str, kernel: str) -> dict:
    return {"file": file, "launch": f"{kernel}[(1,)](fp32[16], BLOCK=16)"}


def test_merging_two_one_launch_captures_writes_valid_toml(tmp_path):
    from tilelens_lsp.capture import runner

    out = tmp_path / "tilelens.toml"
    assert runner.write(out, [_one("a.py", "ka")], merge=False) == 1
    assert runner.write(out, [_one("b.py", "kb")], merge=True) == 1
    tables = tomllib.loads(out.read_text())["launch"]  # before: an inline `launch = [...]` twice
    assert [t["launch"].split("[")[0] for t in tables] == ["ka", "kb"]
    assert out.read_text().count("[[launch]]") == 2
    relfig.bump("capture", "tested")


def test_a_write_that_would_not_read_back_leaves_the_file_as_it_was(tmp_path):
    from tilelens_lsp.capture import runner

    out = tmp_path / "tilelens.toml"
    out.write_text('# mine\n[[launch]]\nfile = "a.py"\nlaunch = "ka[(1,)](fp32[16], BLOCK=16)"\n')
    before = out.read_text()
    bad = {"file": "b.py", "launch": "kb[(1,)](fp32[16])", "let": object()}  # not representable in TOML
    try:
        runner.write(out, [bad], merge=True)
    except (SystemExit, TypeError, ValueError):
        pass
    assert out.read_text() == before


RACER = """
    import sys, time
    from capture_prog import Tensor, triton, tl

    @triton.jit
    def {name}(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    {name}[(1,)](Tensor("fp32", 16), BLOCK=16)
    time.sleep(4)
"""


def test_two_captures_to_one_file_at_once_lose_nothing(tmp_path):
    procs = []
    for name in ("ka", "kb"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "prog.py").write_text(textwrap.dedent(RACER.format(name=name)).lstrip("\n"))
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tilelens_lsp",
                    "capture",
                    "--out",
                    str(tmp_path / "tilelens.toml"),
                    "--",
                    sys.executable,
                    str(folder / "prog.py"),
                ],
                cwd=tmp_path,
                env=env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    results = [p.communicate(timeout=TIMEOUT) for p in procs]
    statuses = [p.returncode for p in procs]
    tables = tomllib.loads((tmp_path / "tilelens.toml").read_text())["launch"]
    kernels = sorted(t["launch"].split("[")[0] for t in tables)
    # both launches are in the file, or the one that could not merge said so and failed
    assert kernels == ["ka", "kb"] or (2 in statuses and any("another capture" in e for _, e in results)), (
        kernels,
        statuses,
        results,
    )
    relfig.bump("capture", "tested")


# ---------------------------------------------------------------- 9, 10. signals and a bad --out

SLOW_CLEANUP = """
    import sys, time
    from capture_prog import Tensor, triton, tl

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    k[(1,)](Tensor("fp32", 16), BLOCK=16)
    try:
        print("ready", flush=True)
        time.sleep(120)
    except KeyboardInterrupt:
        time.sleep(1.0)                       # the program's own cleanup takes a while
        open("cleaned", "w").write("yes")
        raise
"""

TERM = """
    import os, sys, time
    from capture_prog import Tensor, triton, tl

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    k[(1,)](Tensor("fp32", 16), BLOCK=16)
    open("child.pid", "w").write(str(os.getpid()))
    print("ready", flush=True)
    time.sleep(120)
"""


def _start(folder: Path, program: str, tmpdir: Path) -> subprocess.Popen:
    (folder / "prog.py").write_text(textwrap.dedent(program).lstrip("\n"))
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tilelens_lsp",
            "capture",
            "--out",
            str(folder / "tilelens.toml"),
            "--",
            sys.executable,
            str(folder / "prog.py"),
        ],
        cwd=folder,
        env=env(TMPDIR=str(tmpdir)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_ctrl_c_lets_the_program_clean_up_writes_what_was_recorded_and_exits_130(tmp_path):
    import signal

    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = _start(tmp_path, SLOW_CLEANUP, tmpdir)
    assert proc.stdout.readline().strip() == "ready"
    os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches the whole group
    _, err = proc.communicate(timeout=TIMEOUT)
    assert (tmp_path / "cleaned").exists(), err  # before: SIGKILLed 0.25 s into its cleanup
    assert proc.returncode == 130, err
    tables = tomllib.loads((tmp_path / "tilelens.toml").read_text())["launch"]
    assert [t["launch"] for t in tables] == ["k[(1,)](fp32[16], BLOCK=16)"]
    assert list(tmpdir.iterdir()) == []
    relfig.bump("capture", "tested")


def test_sigterm_reaches_the_program_and_capture_still_writes_and_cleans_up(tmp_path):
    import signal

    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    proc = _start(tmp_path, TERM, tmpdir)
    assert proc.stdout.readline().strip() == "ready"
    child = int((tmp_path / "child.pid").read_text())
    os.kill(proc.pid, signal.SIGTERM)  # to capture only, as a service manager would
    _, err = proc.communicate(timeout=TIMEOUT)
    from lsp.test_process import wait_gone

    assert wait_gone(child, 10), "the program outlived capture (orphaned)"
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert tomllib.loads((tmp_path / "tilelens.toml").read_text())["launch"]
    assert list(tmpdir.iterdir()) == []  # before: the temp folder was left behind
    relfig.bump("capture", "tested")


def test_an_out_folder_that_cannot_be_written_is_found_before_the_run(tmp_path):
    marker = tmp_path / "ran"
    program = f"open({str(marker)!r}, 'w').write('ran')\n"
    run = capture(tmp_path, program, out="no/such/folder/tilelens.toml")
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    assert not marker.exists()  # before: found after the run, all launches lost
    relfig.bump("capture", "tested")


# ---------------------------------------------------------------- 13. what the program sees, what is written

GRID_TWICE = """
    from capture_prog import Tensor, triton, tl
    calls = []

    def grid(meta):
        calls.append(meta["BLOCK"])
        return (1,)

    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

    k[grid](Tensor("fp32", 16), BLOCK=16)
    print("grid calls", len(calls))
"""


def test_the_grid_function_is_called_as_often_as_without_capture(tmp_path):
    run = capture(tmp_path, GRID_TWICE)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "grid calls 1", run.stdout  # before: 2 (the hook called it too)
    assert tomllib.loads((tmp_path / "tilelens.toml").read_text())["launch"][0]["launch"].startswith("k[(1,)]")
    relfig.bump("capture", "tested")


ODD_SCALARS = """
    from capture_prog import Tensor, triton, tl

    @triton.jit
    def k(x_ptr, v, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), v)

    @triton.jit
    def kd(x_ptr, DT: tl.constexpr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), tl.full((BLOCK,), 1, DT))

    k[(1,)](Tensor("fp32", 16), float("nan"), BLOCK=16)
    k[(1,)](Tensor("fp32", 16), float("inf"), BLOCK=16)
    kd[(1,)](Tensor("fp32", 16), tl.float32, BLOCK=16)
"""


def test_a_launch_that_cannot_be_written_says_why_and_nothing_unreadable_is_written(tmp_path):
    run = capture(tmp_path, ODD_SCALARS)
    assert run.returncode == 0, run.stderr
    out = tmp_path / "tilelens.toml"
    launches = [t["launch"] for t in tomllib.loads(out.read_text())["launch"]] if out.exists() else []
    for kernel in ("k", "kd"):
        written = [x for x in launches if x.startswith(kernel + "[")]
        said = [line for line in run.stderr.splitlines() if f"not recorded: {kernel}" in line]
        assert written or said, (kernel, launches, run.stderr)  # before: kd dropped with no reason
    assert not any("nan" in x or "inf" in x for x in launches), launches
    assert check(tmp_path, "--config", str(out), "prog.py").returncode != 2 if launches else True
    relfig.bump("capture", "tested")


def test_a_program_killed_by_a_signal_gives_128_plus_the_signal(tmp_path):
    run = capture(tmp_path, "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    assert run.returncode == 137, run.stderr  # before: 247 (-9 passed to sys.exit)
    relfig.bump("capture", "tested")


def test_the_environments_own_sitecustomize_runs_even_when_the_hook_cannot_load(tmp_path):
    """A child Python that cannot import the hook (Python < 3.7 reads its annotations as a syntax
    error): its own sitecustomize must still run, and the program too."""
    from tilelens_lsp.capture import runner

    hook, user = tmp_path / "hook", tmp_path / "user"
    hook.mkdir()
    user.mkdir()
    (hook / "sitecustomize.py").write_text(runner.SITECUSTOMIZE)
    (hook / f"{runner.HOOK_MODULE}.py").write_text("raise SyntaxError('too old a Python for this file')\n")
    (user / "sitecustomize.py").write_text("print('own sitecustomize')\n")
    run = subprocess.run(
        [sys.executable, "-c", "print('program')"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**env(), "PYTHONPATH": f"{hook}{os.pathsep}{user}"},
    )
    assert run.stdout.split() == ["own", "sitecustomize", "program"], (run.stdout, run.stderr)
    relfig.bump("capture", "tested")


# ---------------------------------------------------------------- 11, 12. on a GPU; without bound


class _FakeCudaTensor:
    """An i32 CUDA tensor as the hook sees one; min()/max() during graph capture would sync the host."""

    is_cuda = True
    dtype = "int32"
    shape = (8,)

    def __init__(self, log: list) -> None:
        self.log = log

    def data_ptr(self):
        return 4096

    def stride(self):
        return (1,)

    def storage_offset(self):
        return 0

    def element_size(self):
        return 4

    def untyped_storage(self):
        return type("S", (), {"nbytes": lambda self: 32})()

    def min(self):
        self.log.append("min")
        return 0

    def max(self):
        self.log.append("max")
        return 7


def test_value_ranges_are_not_read_while_a_cuda_stream_captures_a_graph(monkeypatch):
    import types as pytypes

    from tilelens_lsp.capture import hook

    capturing = [True]
    torch = pytypes.SimpleNamespace(cuda=pytypes.SimpleNamespace(is_current_stream_capturing=lambda: capturing[0]))
    monkeypatch.setitem(sys.modules, "torch", torch)
    log: list = []
    spec = hook._tensor(_FakeCudaTensor(log))  # noqa: SLF001 - white-box test of the capture hook's record of a tensor
    assert log == [] and "values" not in spec and spec["values_skipped"]  # before: min() and max() called
    capturing[0] = False
    spec = hook._tensor(_FakeCudaTensor(log))  # noqa: SLF001 - white-box test of the capture hook's record of a tensor
    assert log == ["min", "max"] and spec["values"] == [0, 8]
    monkeypatch.delitem(sys.modules, "torch")  # no torch at all: values read
    assert hook._tensor(_FakeCudaTensor(log))["values"] == [0, 8]  # noqa: SLF001 - white-box test of the capture hook's record of a tensor
    relfig.bump("capture", "tested")


MANY = """
    from capture_prog import Tensor, triton, tl

    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0, mask=offs < n)

    x = Tensor("fp32", 64)
    for i in range(3000):
        k[(1,)](x, i % 50, BLOCK=64)
"""


def test_the_hooks_counts_reach_the_summary(tmp_path):
    run = capture(tmp_path, MANY, "--per-kernel", "4")
    assert run.returncode == 0, run.stderr
    assert "3000 launch(es) recorded, 4 written" in run.stderr, run.stderr


def _plain(x_ptr, n):
    return x_ptr, n


class _FakeJIT:
    """What the hook needs of a JITFunction: its parameter names and the Python function under it."""

    arg_names = ["x_ptr", "n"]
    fn = staticmethod(_plain)


FAKE_KERNEL = _FakeJIT()
_plain.__module__ = __name__


def test_records_are_deduplicated_and_capped_as_they_are_made(tmp_path, monkeypatch):
    """3000 launches, 50 distinct: at most _KEEP records reach the disk, the rest are counted (before:
    one ~0.5 KB line per launch, and ~4.6 KB per launch in memory at the end)."""
    from tilelens_lsp.capture import hook

    monkeypatch.setattr(hook, "_DIR", str(tmp_path))
    monkeypatch.setattr(hook, "_KEEP", 16)
    for name in ("_SEEN", "_PER", "_STATIC"):
        monkeypatch.setattr(hook, name, type(getattr(hook, name))())
    monkeypatch.setattr(hook, "_COUNTS", {"duplicates": 0, "capped": 0, "failures": 0})
    monkeypatch.setattr(hook, "_OUT", [None, 0])
    x = _FakeCudaTensor([])
    x.is_cuda = False
    for i in range(3000):
        hook.record(FAKE_KERNEL, (1,), (x, i % 50), {})
    hook._OUT[0].close()  # noqa: SLF001 - white-box test of the capture hook's module state
    lines = (tmp_path / f"{os.getpid()}.jsonl").read_text().splitlines()
    assert len(lines) == 16, len(lines)
    assert hook._COUNTS["duplicates"] + hook._COUNTS["capped"] == 3000 - 16 and hook._COUNTS["capped"] >= 50 - 16  # noqa: SLF001 - white-box test of the capture hook's module state
    assert len(hook._SEEN) == 16  # noqa: SLF001 - white-box test of the capture hook's module state
    relfig.record("capture", launches=3000, records=len(lines))
