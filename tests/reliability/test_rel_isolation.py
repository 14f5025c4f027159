"""Isolation and safety (issue 14): a hostile or merely unusual workspace must not run code nobody
asked for, change another file's verdict, hang a run, blow up memory, or fool the exit code.

Each test is one reproduction that failed before the fix; the comment above it says how. They drive
the product as users do: `tilelens-lsp check` in a subprocess, the server over stdio (the raw JSON-RPC
client of tests/lsp/test_process.py), and `Worker` for the one measured in bytes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import relfig
from lsp.lsphelp import REPO
from lsp.test_process import RawClient, wait_gone

TIMEOUT = 300  # a safety limit for one subprocess, never an assertion about speed


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def env(**extra: str) -> dict[str, str]:
    base = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "TILELENS_IR_TARGET", "TRITON_INTERPRET")
    }
    base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    base["TILELENS_CACHE_DIR"] = "off"
    base.update(extra)
    return base


def check(*args: str, cwd: Path, timeout: float = TIMEOUT, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=kw.pop("environ", None) or env(),
        **kw,
    )


def verdicts(proc: subprocess.CompletedProcess) -> dict[str, list[str]]:
    """{file path: sorted codes of its launches and file diagnostics} from a `--format json` run."""
    doc = json.loads(proc.stdout)
    out = {}
    for f in doc["files"]:
        codes = [d["code"] for d in f.get("diagnostics", [])]
        codes += [d["code"] for launch in f.get("launches", []) for d in launch.get("diagnostics", [])]
        out[f["path"]] = sorted(codes)
    return out


def tree_state(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


# ---------------------------------------------------------------- kernels

ADD = src("""
    import triton
    import triton.language as tl

    # tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], 1000, BLOCK=256)
    @triton.jit
    def add_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + offs{mask})
        tl.store(out_ptr + offs, x, mask=offs < n)
""")
BUGGY = ADD.replace("{mask}", "")
CLEAN = ADD.replace("{mask}", ", mask=offs < n")

COMMON_UNMASKED = src("""
    import triton
    import triton.language as tl

    @triton.jit
    def ld(ptr, offs, n):
        return tl.load(ptr + offs)
""")
COMMON_MASKED = COMMON_UNMASKED.replace("tl.load(ptr + offs)", "tl.load(ptr + offs, mask=offs < n, other=0.0)")

USES_COMMON = src("""
    import triton
    import triton.language as tl
    from common import ld

    # tilelens: k[(4,)](fp32[1000], fp32[1000], 1000, BLOCK=256)
    @triton.jit
    def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        x = ld(x_ptr, offs, n)
        tl.store(out_ptr + offs, x, mask=offs < n)
""")

TRIVIAL = src("""
    import triton
    import triton.language as tl

    # tilelens: t[(1,)](fp32[16], BLOCK=16)
    @triton.jit
    def t(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")


def leaking(prelude: str) -> str:
    """A clean kernel file whose import leaves something behind."""
    return "import os, sys, subprocess, threading, time\n" + src(prelude) + "\n" + TRIVIAL


# ---------------------------------------------------------------- 1. no code runs that nobody asked for

STDLIB_NAMES = ("traceback", "argparse", "json", "typing", "threading", "logging", "colorsys")


def hostile_workspace(root: Path, marker: Path) -> Path:
    """A workspace whose files are named like stdlib modules; each creates `marker` when imported."""
    w = root / "w"
    w.mkdir()
    (w / "pyproject.toml").touch()
    for name in STDLIB_NAMES:
        (w / f"{name}.py").write_text(f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\n")
    # the kernel imports a stdlib module nothing imported before: the workspace copy must not win
    (w / "kern.py").write_text("import colorsys\n" + CLEAN)
    return w


# Before: the worker ran `python -m tilelens_lsp.worker` with the workspace as cwd (first on
# sys.path), so w/traceback.py ran at the worker's start, and `import colorsys` found w/colorsys.py.
def test_check_runs_no_workspace_module_named_like_the_stdlib_and_writes_no_bytecode(tmp_path):
    marker = tmp_path / "PWNED"
    w = hostile_workspace(tmp_path, marker)
    before = tree_state(w)
    proc = check(".", "--format", "json", cwd=w)
    assert proc.returncode == 0, proc.stderr
    assert verdicts(proc) == {"kern.py": []}
    assert not marker.exists(), marker.read_text()
    assert tree_state(w) == before  # no __pycache__, nothing else either
    relfig.record("isolation", stdlib_names=len(STDLIB_NAMES))


# Before: started from the workspace (VS Code's cwd), `python -m tilelens_lsp` imported
# w/argparse.py itself, and its worker w/traceback.py: code ran with no file opened.
@pytest.mark.parametrize(
    "command", [["-m", "tilelens_lsp"], ["-I", "-m", "tilelens_lsp"]], ids=["python -m", "python -I -m (VS Code)"]
)
def test_server_started_in_the_workspace_runs_nothing_of_it_before_a_file_is_opened(tmp_path, command):
    marker = tmp_path / "PWNED"
    w = hostile_workspace(tmp_path, marker)
    before = tree_state(w)
    proc = subprocess.Popen(
        [sys.executable, *command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env(),
        cwd=w,
    )
    client = RawClient(proc.stdout, proc.stdin)
    try:
        client.initialize(w)
        client.wait(lambda m: m.get("method") == "window/logMessage" and " ready: " in m["params"]["message"], timeout=120)
        assert client.request("shutdown", None)["result"] is None
        client.notify("exit", None)
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()
    assert not marker.exists(), marker.read_text()
    assert tree_state(w) == before


# ---------------------------------------------------------------- 2. one file cannot change another's verdict


def common_tree(root: Path) -> Path:
    """x/common.py unmasked, x/y/common.py masked; x/k.py, x/y/k.py and x/z.py all `from common import ld`."""
    x = root / "x"
    (x / "y").mkdir(parents=True)
    (root / "pyproject.toml").touch()
    (x / "common.py").write_text(COMMON_UNMASKED)
    (x / "y" / "common.py").write_text(COMMON_MASKED)
    for name in ("k.py", "y/k.py", "z.py"):
        (x / name).write_text(USES_COMMON)
    return x


# Before: checking x/y/k.py left x/y on the reused worker's sys.path ahead of x, so z.py imported the
# masked helper: a false clean (checked alone, z.py had its TL001).
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_stale_sys_path_never_hides_an_out_of_bounds_load(tmp_path, jobs):
    common_tree(tmp_path)
    proc = check("x", "--format", "json", "--jobs", jobs, cwd=tmp_path)
    assert verdicts(proc) == {"x/k.py": ["TL001"], "x/y/k.py": [], "x/z.py": ["TL001"]}, proc.stderr
    assert proc.returncode == 1


def leak_folder(root: Path, pidfile: Path) -> tuple[Path, list[str], list[str]]:
    """Buggy kernels (each with TL001) interleaved with files whose import leaves state behind."""
    d = root / "d"
    masked = root / "elsewhere"
    masked.mkdir()
    (masked / "common.py").write_text(COMMON_MASKED)
    d.mkdir()
    (root / "pyproject.toml").touch()
    (d / "common.py").write_text(COMMON_UNMASKED)
    leaks = {
        "f2_env.py": 'os.environ["TRITON_INTERPRET"] = "1"\nos.chdir("/")\n',
        "f4_path.py": f"sys.path.insert(0, {str(masked)!r})\n",
        "f6_thread.py": f"""
            def meddle():
                while True:
                    if {str(masked)!r} not in sys.path:
                        sys.path.insert(0, {str(masked)!r})
                    os.environ["TRITON_INTERPRET"] = "1"
                    time.sleep(0.01)
            threading.Thread(target=meddle, daemon=True).start()
        """,
        "f8_child.py": f"""
            child = subprocess.Popen(["sleep", "300"])
            open({str(pidfile)!r}, "w").write(str(child.pid))
        """,
    }
    buggy = ["f1_k.py", "f3_k.py", "f5_k.py", "f7_k.py", "f9_k.py"]
    for name in buggy:
        (d / name).write_text(USES_COMMON)
    for name, prelude in leaks.items():
        (d / name).write_text(leaking(prelude))
    return d, buggy, list(leaks)


# Before: the env change made later kernels interpreted functions, the sys.path change (or the thread
# that keeps making it) gave later files the masked helper (false clean), and the child process made
# `check` hang for its lifetime (stop() blocked on the stderr pipe the child inherited).
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_state_a_module_leaves_behind_never_changes_a_later_files_verdict_in_check(tmp_path, jobs):
    pidfile = tmp_path / "child.pid"
    d, buggy, leaks = leak_folder(tmp_path, pidfile)
    proc = check("d", "--format", "json", "--jobs", jobs, cwd=tmp_path, timeout=240)
    got = verdicts(proc)
    assert {n: got[f"d/{n}"] for n in buggy} == {n: ["TL001"] for n in buggy}, proc.stderr
    assert all(f"d/{n}" in got for n in leaks)  # their own verdicts are theirs (TRITON_INTERPRET: TL020)
    assert proc.returncode == 1
    assert wait_gone(int(pidfile.read_text()), 10), "the module's child process outlived the run"
    relfig.record("isolation", leaks=len(leaks), buggy=len(buggy))


def publish(client: RawClient, uri: str, timeout: float = 120) -> list[str]:
    message = client.wait(
        lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri, timeout
    )
    return sorted(str(d.get("code")) for d in message["params"]["diagnostics"])


def open_doc(client: RawClient, path: Path) -> str:
    uri = path.as_uri()
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": path.read_text()}},
    )
    return uri


def save_doc(client: RawClient, path: Path) -> str:
    client.notify("textDocument/didSave", {"textDocument": {"uri": path.as_uri()}})
    return path.as_uri()


def start_server(root: Path, *argv: str) -> tuple[subprocess.Popen, RawClient]:
    proc = subprocess.Popen(
        [sys.executable, *(argv or ("-m", "tilelens_lsp"))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env(),
        cwd=root,
    )
    return proc, RawClient(proc.stdout, proc.stdin)


# Before: opening x/y/k.py and then re-saving an unchanged x/k.py dropped its TL001, and each file
# below changed the verdict of the files after it; a child process froze restarts and shutdown.
def test_state_a_module_leaves_behind_never_changes_a_later_files_verdict_in_the_server(tmp_path):
    pidfile = tmp_path / "child.pid"
    x = common_tree(tmp_path)
    d, buggy, leaks = leak_folder(tmp_path, pidfile)
    proc, client = start_server(tmp_path)
    try:
        client.initialize(tmp_path, {"workerTimeout": 120})
        k = x / "k.py"
        assert publish(client, open_doc(client, k)) == ["TL001"]
        assert publish(client, open_doc(client, x / "y" / "k.py")) == []
        assert publish(client, save_doc(client, k)) == ["TL001"]
        first = d / buggy[0]
        assert publish(client, open_doc(client, first)) == ["TL001"]
        for name in leaks:
            publish(client, open_doc(client, d / name))
            assert publish(client, save_doc(client, first)) == ["TL001"], f"after {name}"
        assert publish(client, open_doc(client, d / buggy[-1])) == ["TL001"]
        assert publish(client, save_doc(client, k)) == ["TL001"]
        assert client.request("shutdown", None, timeout=60)["result"] is None
        client.notify("exit", None)
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()
    assert wait_gone(int(pidfile.read_text()), 10), "the module's child process outlived the server"


# ---------------------------------------------------------------- 3. exit codes and the command line


SEGFAULT = "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n" + TRIVIAL
SLEEPS = "import time\ntime.sleep(600)\n" + TRIVIAL


# Before: a crashed or timed-out analysis (TL050, a warning) exited 0, as if the file were clean.
@pytest.mark.parametrize("body,extra", [(SEGFAULT, ()), (SLEEPS, ("--timeout", "3"))], ids=["segfault", "timeout"])
def test_an_analysis_that_crashed_or_timed_out_exits_1(tmp_path, body, extra):
    (tmp_path / "pyproject.toml").touch()
    (tmp_path / "f.py").write_text(body)
    proc = check("f.py", "--format", "json", *extra, cwd=tmp_path)
    assert verdicts(proc) == {"f.py": ["TL050"]}
    assert proc.returncode == 1


# Before: --timeout -1 was accepted and --timeout 0 silently ignored.
@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_a_timeout_that_is_not_a_positive_number_is_a_usage_error(tmp_path, value):
    (tmp_path / "f.py").write_text(CLEAN)
    proc = check("f.py", f"--timeout={value}", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--timeout" in proc.stderr


# Before: `check clean.py | head -1` ended in a BrokenPipeError traceback and exit code 1.
@pytest.mark.parametrize("body,code", [(CLEAN, 0), (BUGGY, 1)], ids=["clean", "buggy"])
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_output_to_a_closed_pipe_ends_quietly_with_the_verdicts_exit_code(tmp_path, body, code, fmt):
    (tmp_path / "pyproject.toml").touch()
    (tmp_path / "f.py").write_text(body)
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte is written
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "tilelens_lsp", "check", "f.py", "--format", fmt],
            cwd=tmp_path,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=TIMEOUT,
            env=env(),
        )
    finally:
        os.close(write_end)
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr


# Before: a FIFO named *.py hung the walk, a symlink to /dev/zero ended in MemoryError, and a
# symlink to a file outside the folder was analysed.
def test_check_dir_reads_regular_files_only_and_stays_inside_the_folder(tmp_path):
    (tmp_path / "pyproject.toml").touch()
    d = tmp_path / "d"
    d.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.py").write_text(BUGGY)
    (d / "k.py").write_text(BUGGY)
    os.mkfifo(d / "fifo.py")
    (d / "zero.py").symlink_to("/dev/zero")
    (d / "far.py").symlink_to(outside / "far.py")
    (d / "far_dir").symlink_to(outside, target_is_directory=True)
    (d / "again.py").symlink_to(d / "k.py")  # inside the folder: the same file, once
    proc = check("d", "--format", "json", cwd=tmp_path, timeout=120)
    assert verdicts(proc) == {"d/k.py": ["TL001"]}, proc.stderr
    assert proc.returncode == 1


def test_a_file_above_the_size_limit_is_not_read_and_says_so(tmp_path):
    from tilelens_lsp.cli.files import MAX_FILE_BYTES

    (tmp_path / "pyproject.toml").touch()
    big = tmp_path / "big.py"
    with open(big, "w") as f:
        f.write("# tilelens: nothing[(1,)]()\n")
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    proc = check(".", "--format", "json", cwd=tmp_path)
    doc = json.loads(proc.stdout)
    [entry] = doc["files"]
    assert entry["path"] == "big.py"
    [diag] = entry["diagnostics"]
    assert diag["code"] == "TL010" and "limit" in diag["message"]
    assert proc.returncode == 1


FP8 = src("""
    import triton
    import triton.language as tl

    # tilelens: k[(1,)](fp8e4nv[64], fp32[64], BLOCK=64)
    @triton.jit
    def k(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs).to(tl.float32))
""")  # fp8e4nv compiles for cuda:89 and is a compile error (TL010) for cuda:80


# Before: with target = "cuda:80" in pyproject, `--target cuda:89` compiled for cuda:80 (the
# worker's toml lookup overrode a target equal to the default) while the JSON said cuda:89.
@pytest.mark.parametrize(
    "args,target,codes",
    [((), "cuda:80", ["TL010"]), (("--target", "cuda:89"), "cuda:89", []), (("--target", "cuda:90"), "cuda:90", [])],
)
def test_the_json_target_is_the_one_compiled_for_and_the_flag_beats_the_toml(tmp_path, args, target, codes):
    (tmp_path / "pyproject.toml").write_text('[tool.tilelens]\ntarget = "cuda:80"\n')
    (tmp_path / "fp8.py").write_text(FP8)
    proc = check("fp8.py", "--format", "json", *args, cwd=tmp_path)
    assert json.loads(proc.stdout)["target"] == target
    assert verdicts(proc) == {"fp8.py": codes}, proc.stderr


def test_the_environment_target_beats_the_toml(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.tilelens]\ntarget = "cuda:80"\n')
    (tmp_path / "fp8.py").write_text(FP8)
    proc = check("fp8.py", "--format", "json", cwd=tmp_path, environ=env(TILELENS_IR_TARGET="cuda:89"))
    assert json.loads(proc.stdout)["target"] == "cuda:89"
    assert verdicts(proc) == {"fp8.py": []}, proc.stderr


# ---------------------------------------------------------------- 4. the worker's pipes


# Before: the parent read the worker's stderr line by line, so 1 GiB without a newline grew it by a
# gigabyte or more (the CLI reached 4.2 GB for 2 GiB).
def test_a_gigabyte_on_stderr_without_a_newline_costs_the_parent_no_memory(tmp_path):
    (tmp_path / "pyproject.toml").touch()
    (tmp_path / "loud.py").write_text(
        "import sys\nchunk = 'x' * (64 << 20)\nfor _ in range(16):\n"
        "    sys.stderr.write(chunk)\nsys.stderr.flush()\n" + BUGGY
    )
    script = src(f"""
        import json, resource, sys
        from tilelens_lsp.settings import Settings
        from tilelens_lsp.worker.process import Worker
        w = Worker(Settings(timeout=240, memory_limit_mb=8192))
        w.start()
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        result = w.analyze({str(tmp_path / "loud.py")!r}, {str(tmp_path)!r})
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        w.stop()
        print(json.dumps({{"base_kb": base, "peak_kb": peak, "tail": len(w.stderr_tail()),
                          "codes": sorted(d.code for d in result.all_diagnostics())}}))
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT, env=env(), cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    grown_mb = (out["peak_kb"] - out["base_kb"]) / 1024
    assert grown_mb < 100, out
    assert out["codes"] == ["TL001"]  # the file was analysed all the same
    assert out["tail"] > 0  # and its stderr was read
    relfig.record("isolation", stderr_gib=1, parent_growth_mb=round(grown_mb, 1))


# ---------------------------------------------------------------- 5. the server's protocol and gate


_UNTESTED_SERVER = (
    "import sys; import tilelens_lsp.releases as r; r.TESTED_RELEASES = (); "
    "from tilelens_lsp.cli.main import main; sys.exit(main([]))"
)


# Before: the gate was set when the worker's handshake arrived; a file opened right after
# `initialized` was already past the check and got its TL001 from an untested release.
def test_no_verdict_of_an_untested_release_is_published_even_for_the_first_file(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "tilelens.toml").touch()
    (ws / "k.py").write_text(BUGGY)
    slow = tmp_path / "slow-python"  # a worker interpreter that takes a while to start
    slow.write_text(f'#!/bin/sh\nsleep 3\nexec {sys.executable} "$@"\n')
    slow.chmod(0o755)
    proc, client = start_server(ws, "-c", _UNTESTED_SERVER)
    try:
        client.initialize(ws, {"interpreter": str(slow)})
        uri = open_doc(client, ws / "k.py")  # at once: the worker has not even started Python
        assert publish(client, uri) == ["TL040"]
        assert publish(client, save_doc(client, ws / "k.py")) == ["TL040"]
    finally:
        proc.kill()
        proc.wait()


# Before: pygls dropped a request after `shutdown` without any reply; LSP asks for InvalidRequest.
def test_a_request_after_shutdown_gets_invalid_request(tmp_path):
    (tmp_path / "tilelens.toml").touch()
    proc, client = start_server(tmp_path)
    try:
        client.initialize(tmp_path)
        assert client.request("shutdown", None)["result"] is None
        reply = client.request(
            "textDocument/hover",
            {"textDocument": {"uri": (tmp_path / "k.py").as_uri()}, "position": {"line": 0, "character": 0}},
            timeout=30,
        )
        assert reply["error"]["code"] == -32600
        assert client.request("tilelens/stats", {}, timeout=30)["error"]["code"] == -32600
        client.notify("exit", None)
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------- 6. the directive scanner


def _lines_run_in_directives(text: str) -> int:
    """Line events executed inside the directive reader (`tilelens_lsp/launches/`) while scanning `text`:
    a count, not a time."""
    from tilelens_lsp import launches
    from tilelens_lsp.launches.scanner import parse_directives

    folder = os.path.dirname(launches.__file__) + os.sep
    count = 0

    def tracer(frame, event, arg):
        nonlocal count
        if not frame.f_code.co_filename.startswith(folder):
            return None
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        parse_directives(text)
    finally:
        sys.settrace(None)
    return count


# Before: each continuation line re-scanned the whole block for open brackets: 30,000 lines of
# `# tilelens: (` took 27 s, and four times the lines cost sixteen times the work.
def test_the_directive_scanner_is_linear_in_the_file_size():
    small = _lines_run_in_directives("# tilelens: (\n" * 1000)
    large = _lines_run_in_directives("# tilelens: (\n" * 4000)
    assert large / small < 6, (small, large)  # linear: about 4; quadratic: about 16
    from tilelens_lsp.launches.scanner import parse_directives

    t0 = time.perf_counter()
    launches, errors = parse_directives("# tilelens: (\n" * 30_000)
    relfig.record("isolation", scanner_30k_s=round(time.perf_counter() - t0, 2), scanner_ratio=round(large / small, 1))
    assert launches == [] and errors and all(e.line >= 1 for e in errors)
