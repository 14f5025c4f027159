"""tilelens-lsp benchmarks: ratios measured side by side in one run. A script, not a test.

    python tools/bench/bench.py [--quick] [--only save,open,check,interp,memory,jobs] [--out FILE]
    python tools/bench/bench.py --profile matmul      # cProfile one in-process analysis, top functions
    python tools/bench/bench.py --profile all         # phase breakdown of every bench kernel
    python tools/bench/bench.py --profile save        # a save end to end: compile, analysis, worker, server
    python tools/bench/bench.py --profile wall        # wall-clock phases of one analysis of every kernel

Metrics (medians; every ratio compares two things measured in this same run):
  a. save   save → publishDiagnostics latency in a warm server over stdio (a comment changes on every
            save, so every result cache misses) against the bare host compile of the same launch to
            TTIR in a warm process (compile.compiler.compile_launch: unwrap / configs / bind / compile_ttir).
  b. open   process start → publishDiagnostics of the first didOpen, in a fresh server.
  c. check  `tilelens-lsp check` on a matmul at 256³ and at 16384³ (4096× the programs): time ratio,
            identical verdicts, exact footprints.
  d. interp Triton's interpreter (TRITON_INTERPRET=1, numpy-backed tensors) running the matmul 256³
            launch against our in-process analysis of it (warm engine): speed-up; footprints compared.
  e. memory the server worker's peak resident memory (VmHWM) after the save runs; peak RSS of the
            `check` runs (CLI + worker, from wait4).
  f. jobs   `tilelens-lsp check --jobs 2` against `--jobs 1` on a folder with many launches.
  g. corpus open → first diagnostics on a large real module of the corpus venv (tools/corpus_env.sh):
            a fresh server whose worker runs in .venv-corpus, its launches (synthesized and hand-written,
            every autotune config) from a tilelens.toml of `module =` tables; then a re-save (cache hits).

Every process runs with TILELENS_CACHE_DIR=off (no disk result cache: each run is a real analysis).
A full run writes the report to tools/bench/latest.md; --quick and --only write only with --out.
Exit status: 0 when every section ran (goals met or not), 1 when a section failed to run.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import queue
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import workload  # beside this script: the bench kernels, from their one copy in the repository

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
KERNELS = workload.materialize(Path(tempfile.mkdtemp(prefix="tilelens-bench-kernels-")))
SECTIONS = ("save", "open", "check", "interp", "memory", "jobs", "corpus", "scale")
CORPUS_MODULE = "flag_gems.ops.mm"  # LibEntry + LibTuner kernels, the most configs of the CI subset
CORPUS_SECOND = "flag_gems.ops.softmax"  # opened next: the package is imported already
BENCH_KERNELS = ("vector_add", "softmax", "matmul", "layernorm", "attention_fwd")

atexit.register(shutil.rmtree, KERNELS, True)
os.environ["TILELENS_CACHE_DIR"] = "off"  # before tilelens_lsp is imported anywhere
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")  # what the worker sets; silences a warning
os.environ.pop("TRITON_INTERPRET", None)
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra)
    return env


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def ms(x: float) -> str:
    return f"{x * 1000:.0f} ms" if x == x else "n/a"


def secs(x: float) -> str:
    return f"{x:.2f} s" if x == x else "n/a"


# ---------------------------------------------------------------- report


@dataclass
class Row:
    metric: str
    measured: str
    goal: str
    met: str  # "yes" | "no" | "—" (informational) | "ERROR"


@dataclass
class Report:
    rows: list[Row] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def add(self, metric: str, measured: str, goal: str = "", ok: bool | None = None) -> None:
        self.rows.append(Row(metric, measured, goal or "—", "—" if ok is None else ("yes" if ok else "no")))

    def detail(self, title: str, lines: list[str]) -> None:
        self.details.append(f"### {title}\n\n" + "\n".join(lines) + "\n")

    def markdown(self, command: str, header: list[str]) -> str:
        out = ["# tilelens-lsp benchmark", "", f"Command: `{command}`", ""]
        out += [f"- {h}" for h in header]
        out += ["", "| metric | measured | goal | met? |", "|---|---|---|---|"]
        for r in sorted(self.rows, key=lambda r: r.metric[:2]):
            out.append(f"| {r.metric} | {r.measured} | {r.goal} | {r.met} |")
        out.append("")
        out += sorted(self.details, key=lambda d: d[4:6])
        return "\n".join(out) + "\n"


# ---------------------------------------------------------------- a minimal LSP client over stdio


class LspError(RuntimeError):
    pass


class LspClient:
    """Raw JSON-RPC framing over the server's pipes; a reader thread timestamps every message."""

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.t_start = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tilelens_lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(cwd),
            env=env,
        )
        self._next = 0
        self._pending: dict[int, queue.Queue] = {}
        self._lock = threading.Lock()
        self.diagnostics: queue.Queue = queue.Queue()  # (arrival time, params)
        self.logs: list[tuple[float, str]] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._drain, daemon=True).start()

    # -- wire

    def _send(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        with self._lock:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            self.proc.stdin.flush()

    def _read(self) -> None:
        stream = self.proc.stdout
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    line = line.strip()
                    if not line:
                        break
                    name, _, value = line.decode("ascii", "replace").partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                if length is None:
                    continue
                msg = json.loads(stream.read(length))
                now = time.perf_counter()
                self._dispatch(msg, now)
        except (OSError, ValueError):
            return
        finally:
            for q in list(self._pending.values()):
                q.put(None)
            self.diagnostics.put(None)

    def _dispatch(self, msg: dict, now: float) -> None:
        method = msg.get("method")
        if method is None:
            q = self._pending.pop(msg.get("id"), None)
            if q is not None:
                q.put(msg)
            return
        if "id" in msg:  # a request from the server: answer what an editor would
            result: Any = None
            if method == "workspace/configuration":
                result = [None for _ in (msg.get("params") or {}).get("items", [])]
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            return
        if method == "textDocument/publishDiagnostics":
            self.diagnostics.put((now, msg["params"]))
        elif method == "window/logMessage":
            self.logs.append((now, msg["params"].get("message", "")))

    def _drain(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.decode("utf-8", "replace").rstrip())
            del self.stderr[:-40]

    # -- API

    def request(self, method: str, params: Any, timeout: float = 60.0) -> Any:
        self._next += 1
        rid = self._next
        q: queue.Queue = queue.Queue()
        self._pending[rid] = q
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        try:
            msg = q.get(timeout=timeout)
        except queue.Empty:
            raise LspError(f"{method}: no answer in {timeout} s; server stderr: {self.stderr[-5:]}") from None
        if msg is None:
            raise LspError(f"{method}: the server exited; stderr: {self.stderr[-5:]}")
        if "error" in msg:
            raise LspError(f"{method}: {msg['error']}")
        return msg.get("result")

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_diagnostics(self, uri: str, version: int | None, timeout: float = 120.0) -> tuple[float, dict]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise LspError(f"no diagnostics for {uri} version {version} in {timeout} s; stderr: {self.stderr[-5:]}")
            try:
                item = self.diagnostics.get(timeout=left)
            except queue.Empty:
                continue
            if item is None:
                raise LspError(f"the server exited before publishing {uri}; stderr: {self.stderr[-5:]}")
            t, params = item
            if params.get("uri") == uri and (version is None or params.get("version") == version):
                return t, params

    def wait_whole(self, uri: str, name: str, since: int, timeout: float = 600.0) -> tuple[float, dict]:
        """The publish of a run's whole result: on a first run the server shows each launch's verdicts as
        they come, publishes the whole result, then logs `analysed NAME in …` (logs from `since` on).
        Messages are read in order, so once that line is in, every publish before it is queued."""
        deadline = time.monotonic() + timeout
        last: tuple[float, dict] | None = None
        while time.monotonic() < deadline:
            logged = any(m.startswith(f"analysed {name} in") for _, m in self.logs[since:])
            try:
                item = self.diagnostics.get(timeout=0.05)
            except queue.Empty:
                if logged and last is not None:
                    return last
                continue
            if item is None:
                raise LspError(f"the server exited before publishing {uri}; stderr: {self.stderr[-5:]}")
            if item[1].get("uri") == uri:
                last = item
        raise LspError(f"no whole result for {uri} in {timeout} s; stderr: {self.stderr[-5:]}")

    def initialize(self, root: Path, options: dict | None = None) -> dict:
        caps = {
            "textDocument": {
                "synchronization": {"didSave": True, "dynamicRegistration": False},
                "publishDiagnostics": {"relatedInformation": True, "versionSupport": True},
                "hover": {"contentFormat": ["markdown", "plaintext"]},
            },
            "workspace": {"configuration": False, "workspaceFolders": True},
            "window": {"workDoneProgress": False},
        }
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root.as_uri(),
                "capabilities": caps,
                "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
                **({"initializationOptions": options} if options else {}),
            },
        )
        self.notify("initialized", {})
        return result

    def open(self, path: Path, version: int = 1) -> str:
        uri = path.as_uri()
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": version, "text": path.read_text()}},
        )
        return uri

    def change_and_save(self, path: Path, text: str, version: int) -> float:
        """What an editor does on save: the buffer's new version, the file on disk, then didSave."""
        uri = path.as_uri()
        self.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}
        )
        path.write_text(text)
        t0 = time.perf_counter()
        self.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        return t0

    def close(self) -> None:
        try:
            self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
        except (LspError, OSError, ValueError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def server_analysis_seconds(logs: list[tuple[float, str]], name: str) -> list[float]:
    """The server's own "analysed NAME in X s" log lines (worker round trip), when it logs them."""
    out = []
    for _, msg in logs:
        m = re.match(rf"analysed {re.escape(name)} in ([0-9.]+) s", msg)
        if m:
            out.append(float(m.group(1)))
    return out


def proc_status(pid: int) -> dict[str, int]:
    """VmHWM / VmPeak / VmRSS of a live process, in kB."""
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmPeak", "VmRSS"):
                out[key] = int(value.split()[0])
    except OSError:
        pass
    return out


def child_pids(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(x) for x in (task / "children").read_text().split()]
        except OSError:
            pass
    return out


# ---------------------------------------------------------------- workspace and kernels


_NONCE = f"{os.getpid()}-{time.time_ns()}"
_BUMPS = iter(range(1 << 62))


def bump(text: str, i: int) -> str:
    """The file with its trailing bench comment changed (no line moves). The comment is unique in this
    run, so no two writes anywhere share a source hash: every result cache misses."""
    lines = text.rstrip("\n").split("\n")
    if lines and lines[-1].startswith("# bench-rev:"):
        lines = lines[:-1]
    return "\n".join(lines) + f"\n# bench-rev: {i} {_NONCE}-{next(_BUMPS)}\n"


def matmul_variant(size: int) -> str:
    """The bench matmul with M = N = K = size (fixed 64x64x32 blocks)."""
    text = (KERNELS / "matmul.py").read_text()
    for name in "MNK":
        text, n = re.subn(rf"^# tilelens: {name} = \d+$", f"# tilelens: {name} = {size}", text, flags=re.M)
        assert n == 1, f"matmul.py lost its `# tilelens: {name} = ...` line"
    return text


def load_launch(path: Path):
    from tilelens_lsp.launches.kernels import find_kernels
    from tilelens_lsp.launches.scanner import parse_directives

    text = path.read_text()
    known = {k.name for k in find_kernels(text)}
    launches, errors = parse_directives(text, known)
    if errors or not launches:
        raise RuntimeError(f"{path.name}: bad directives: {errors}")
    return launches[0]


def import_path(path: Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def bare_compiler(path: Path) -> Callable[[], float]:
    """A function timing one host compile alone (bind + TTIR) of the file's first launch, warm."""
    from tilelens_lsp.compile.compiler import compile_launch
    from tilelens_lsp.settings import Settings

    target = Settings().target
    launch = load_launch(path)
    module = import_path(path, "tilelens_bench_" + path.stem)
    kernel = getattr(module, launch.kernel)

    def once() -> float:
        t0 = time.perf_counter()
        first = next(compile_launch(kernel, launch, target))  # the first config only
        if first.error is not None:
            raise first.error
        return time.perf_counter() - t0

    once()  # warm: first compile of this kernel in this process
    return once


def launch_summary(result) -> str:
    parts = []
    for launch in result.launches:
        codes = sorted({d.code for d in launch.diagnostics})
        parts.append(f"{launch.status}" + (f" ({', '.join(codes)})" if codes else ""))
    return "; ".join(parts) or "no launch"


# ---------------------------------------------------------------- sections


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.quick = args.quick
        self.report = Report()
        self.tmp = Path(tempfile.mkdtemp(prefix="tilelens-bench-"))
        self.server_worker_pid: int | None = None
        self.server_memory: dict[str, int] = {}
        self.check_rss_kb: dict[str, int] = {}

    def reps(self, full: int, quick: int) -> int:
        return quick if self.quick else full

    def workspace(self, name: str, files: dict[str, str]) -> Path:
        root = self.tmp / name
        root.mkdir(parents=True, exist_ok=True)
        for fname, text in files.items():
            (root / fname).write_text(text)
        return root

    # -- a (+ e): save latency in a warm server

    def save(self, with_saves: bool = True) -> None:
        n_saves = self.reps(12, 3) if with_saves else 0
        n_compile = self.reps(12, 3)
        kernels = BENCH_KERNELS if not self.quick else ("vector_add", "matmul")
        root = self.workspace("save", {f"{k}.py": (KERNELS / f"{k}.py").read_text() for k in kernels})
        client = LspClient(root, child_env())
        lines = [
            "| kernel | status | save → diagnostics (median) | server-side analysis (median) "
            "| bare host compile (median) | ratio | in-process analysis (median) | in-process / compile | saves |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        worst = 0.0
        try:
            client.initialize(root)
            uris = {}
            for k in kernels:  # warm-up: open every file and wait for its first diagnostics
                path = root / f"{k}.py"
                uris[k] = client.open(path, 1)
                client.wait_diagnostics(uris[k], 1, timeout=180)
            for k in kernels:
                path = root / f"{k}.py"
                status = "?"
                from tilelens_lsp.pipeline import analyze_path

                try:
                    status = launch_summary(analyze_path(path, root))
                except Exception as exc:  # noqa: BLE001 - a label only
                    status = f"? ({type(exc).__name__})"
                if not with_saves:
                    continue
                compile_once = bare_compiler(path)
                text = path.read_text()
                latencies, compile_t, inproc = [], [], []
                mark = len(client.logs)
                for i in range(max(n_saves, n_compile)):  # interleaved: both see the same machine load
                    if i < n_compile:
                        compile_t.append(compile_once())
                    if i < n_saves:
                        version = 2 + i
                        t0 = client.change_and_save(path, bump(text, i), version)
                        t1, _ = client.wait_diagnostics(uris[k], version)
                        latencies.append(t1 - t0)
                        t2 = time.perf_counter()
                        analyze_path(path, root)  # the same changed file, in this warm process
                        inproc.append(time.perf_counter() - t2)
                        time.sleep(lone_save_gap())
                server_side = server_analysis_seconds(client.logs[mark:], path.name)
                ratio = median(latencies) / median(compile_t)
                worst = max(worst, ratio)
                lines.append(
                    f"| {k} | {status} | {ms(median(latencies))} | {ms(median(server_side))} | "
                    f"{ms(median(compile_t))} | {ratio:.1f} | {ms(median(inproc))} | "
                    f"{median(inproc) / median(compile_t):.1f} | {len(latencies)} |"
                )
                self.report.add(
                    f"a. save → diagnostics / bare TTIR compile: {k}",
                    f"{ratio:.1f}× ({ms(median(latencies))} / {ms(median(compile_t))})",
                    "≤ 2.0",
                    ratio <= 2.0,
                )
            try:
                stats = client.request("tilelens/stats", None, timeout=10) or {}
                self.server_worker_pid = stats.get("worker_pid")
            except LspError:
                self.server_worker_pid = None
            pids = [self.server_worker_pid] if self.server_worker_pid else child_pids(client.proc.pid)
            for pid in pids:
                status = proc_status(pid)
                if status:
                    self.server_memory = status
                    break
        finally:
            client.close()
        if with_saves:
            lines.append("")
            lines.append(
                "A lone save runs at once (`scheduler.LONE_SAVE_DELAY` = "
                f"{_server_const('LONE_SAVE_DELAY')} s; only saves that follow within `scheduler.DEBOUNCE` wait "
                'and coalesce); "server-side analysis" is the worker round trip the server logs '
                '(`analysed X in N s`, 10 ms resolution); "in-process analysis" is `pipeline.analyze_path` '
                "on the same changed file in the benchmark's warm process (no LSP, no worker round trip)."
            )
            self.report.detail("a. save → diagnostics, per kernel", lines)
            if not self.quick:
                self.report.detail(
                    "a. where one analysis spends its time (cProfile)", breakdown_lines(list(kernels), self.tmp)
                )
                self.report.detail("a. a save end to end, stage by stage", save_stages(list(kernels), self.tmp))
                self.report.detail("a. where one analysis spends its time (wall clock)", wall_lines(list(kernels), self.tmp))

    # -- b: open in a fresh server

    def open(self) -> None:
        n = self.reps(3, 1)
        root = self.workspace("open", {f"{k}.py": (KERNELS / f"{k}.py").read_text() for k in ("vector_add", "matmul")})
        lines = [
            "| file | disk cache | process start → initialize reply (median) | → first diagnostics (median) "
            "| each run (s) |",
            "|---|---|---|---|---|",
        ]
        cases = [("vector_add", "off"), ("matmul", "off")]
        if not self.quick:
            cases.append(("vector_add", "warm"))
        cache = self.tmp / "disk-cache"
        envs = {mode: child_env(**({} if mode == "off" else {"TILELENS_CACHE_DIR": str(cache)})) for _, mode in cases}
        for k, mode in cases:
            if mode == "warm":  # fill the disk cache once with this exact file
                self._open_once(root, k, envs[mode])
        firsts: dict[tuple, list[float]] = {c: [] for c in cases}
        inits: dict[tuple, list[float]] = {c: [] for c in cases}
        for _ in range(n):  # round robin: a load spike hits every case alike
            for case in cases:
                t_init, t_diag = self._open_once(root, case[0], envs[case[1]])
                inits[case].append(t_init)
                firsts[case].append(t_diag)
        for case in cases:
            k, mode = case
            first = median(firsts[case])
            lines.append(
                f"| {k} | {mode} | {secs(median(inits[case]))} | {secs(first)} | "
                f"{', '.join(f'{x:.2f}' for x in firsts[case])} |"
            )
            if mode == "off":
                self.report.add(f"b. open → first diagnostics, fresh server ({k})", secs(first), "≤ 1.5 s", first <= 1.5)
            else:
                self.report.add(f"b. open → first diagnostics, fresh server ({k}, disk cache {mode})", secs(first), "", None)
        self.report.detail("b. open → first diagnostics in a fresh server", lines)

    def _open_once(self, root: Path, kernel: str, env: dict[str, str]) -> tuple[float, float]:
        client = LspClient(root, env)
        try:
            client.initialize(root)
            t_init = time.perf_counter() - client.t_start
            uri = client.open(root / f"{kernel}.py", 1)
            t, _ = client.wait_diagnostics(uri, 1, timeout=180)
            return t_init, t - client.t_start
        finally:
            client.close()

    # -- g: a large real module from the corpus

    def corpus(self) -> None:
        python = REPO / ".venv-corpus" / "bin" / "python"
        if not python.exists():
            self.report.add(
                "g. open → first diagnostics, real module",
                "skipped: no .venv-corpus (bash tools/corpus_env.sh)",
                "≤ 3 s",
                None,
            )
            return
        tables: dict[str, list[str]] = {CORPUS_MODULE: [], CORPUS_SECOND: []}
        for toml in sorted((REPO / "tests" / "corpus" / "synth").glob("*.toml")) + [REPO / "tests" / "corpus" / "hand.toml"]:
            for block in toml.read_text().split("[[launch]]")[1:]:
                for module in tables:
                    if f'module = "{module}"' in block:
                        tables[module].append("[[launch]]" + block.split("\n# ---")[0])
        root = self.workspace("corpus", {"tilelens.toml": "".join(sum(tables.values(), []))})
        from tilelens_lsp.launches.toml import module_file

        path = module_file(CORPUS_MODULE, root, str(python))
        second = module_file(CORPUS_SECOND, root, str(python))
        env = child_env(GEMS_VENDOR="nvidia", FLAGGEMS_DB_URL="sqlite://")
        options = {"interpreter": str(python), "allowOutsideWorkspace": True, "workerTimeout": 600}
        firsts, wholes, resaves, counts, last, warm = [], [], [], [], {}, []
        for _ in range(self.reps(3, 1)):
            client = LspClient(root, env)
            try:
                client.initialize(root, options)
                since = len(client.logs)
                uri = client.open(path, 1)
                t, params = client.wait_diagnostics(uri, 1, timeout=600)
                firsts.append(t - client.t_start)
                t, params = client.wait_whole(uri, path.name, since)
                wholes.append(t - client.t_start)
                counts.append(len(params.get("diagnostics", [])))
                last = params
                t0 = time.perf_counter()
                client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
                t2, _ = client.wait_diagnostics(uri, None, timeout=600)
                resaves.append(t2 - t0)
                t0 = time.perf_counter()
                t3, _ = client.wait_diagnostics(client.open(second, 1), 1, timeout=600)
                warm.append(t3 - t0)
            finally:
                client.close()
        launches = sum(t.count("launch =") for t in tables[CORPUS_MODULE])
        first = median(firsts)
        self.report.add(
            f"g. open → first diagnostics, real module ({CORPUS_MODULE}, {launches} launches)",
            secs(first),
            "≤ 3 s",
            first <= 3.0,
        )
        self.report.add(
            f"g. open → the whole result, real module ({CORPUS_MODULE}; the first launches show before)",
            secs(median(wholes)),
            "",
            None,
        )
        self.report.add(f"g. re-save, unchanged real module ({CORPUS_MODULE})", secs(median(resaves)), "", None)
        self.report.add(
            f"g. open → first diagnostics, next module of the imported package ({CORPUS_SECOND})",
            secs(median(warm)),
            "≤ 3 s",
            median(warm) <= 3.0,
        )
        self.report.detail(
            "g. a large real module of the corpus",
            [
                "diagnostics: "
                + "; ".join(
                    f"{d.get('code')} line {d['range']['start']['line'] + 1}: {d['message'][:100]}"
                    for d in last.get("diagnostics", [])
                ),
                f"module {CORPUS_MODULE} ({path.name} in .venv-corpus), {launches} launch tables, "
                f"{counts[-1] if counts else 0} diagnostics published",
                f"open → first diagnostics (s): {', '.join(f'{x:.2f}' for x in firsts)}",
                f"open → the whole result (s): {', '.join(f'{x:.2f}' for x in wholes)}",
                f"re-save → diagnostics (s): {', '.join(f'{x:.2f}' for x in resaves)}",
                f"then open {CORPUS_SECOND} → its diagnostics (s): {', '.join(f'{x:.2f}' for x in warm)}",
                "a plain `import flag_gems.ops.mm` in .venv-corpus takes about 4 s on this machine (torch 2 s, "
                "flag_gems 2 s): the open of the first module of a package cannot be faster than that",
            ],
        )

    # -- c: check scaling with the grid

    def check(self) -> None:
        n = self.reps(3, 1)
        sizes = (256, 16384)
        root = self.workspace("check", {f"matmul_{s}.py": matmul_variant(s) for s in sizes})
        times: dict[int, list[float]] = {s: [] for s in sizes}
        docs: dict[int, dict] = {}
        for _ in range(n):
            for s in sizes:
                cmd = [sys.executable, "-m", "tilelens_lsp", "check", str(root / f"matmul_{s}.py"), "--format", "json"]
                t, rc, out, err, rss = run_timed(cmd, root)
                if rc not in (0, 1) or not out.strip():
                    raise RuntimeError(f"check failed (rc {rc}): {err[-2000:]}")
                times[s].append(t)
                docs[s] = json.loads(out)
                self.check_rss_kb[f"check matmul {s}³"] = max(self.check_rss_kb.get(f"check matmul {s}³", 0), rss)
        summary = {s: verdict_summary(docs[s]) for s in sizes}
        small, big = sizes
        ratio = median(times[big]) / median(times[small])
        same = summary[small]["verdicts"] == summary[big]["verdicts"]
        exact = {s: summary[s]["exact"] for s in sizes}
        full = {s: summary[s]["full"] for s in sizes}
        self.report.add(
            "c. check time, matmul 16384³ / 256³",
            f"{ratio:.2f}× ({secs(median(times[big]))} / {secs(median(times[small]))})",
            "≤ 1.5",
            ratio <= 1.5,
        )
        self.report.add("c. identical verdicts at 256³ and 16384³", "yes" if same else "no", "yes", same)
        self.report.add(
            "c. footprints exact at 256³ / 16384³",
            f"{_yn(exact[small])} / {_yn(exact[big])}",
            "yes / yes",
            exact[small] and exact[big],
        )
        lines = [
            "| size | programs | status | diagnostics | accesses (exact, elements) | check time (median) |",
            "|---|---|---|---|---|---|",
        ]
        for s in sizes:
            sm = summary[s]
            lines.append(
                f"| {s}³ | {(s // 64) ** 2} | {sm['status']} | {sm['codes'] or '—'} | "
                f"{sm['accesses'] or '—'} | {secs(median(times[s]))} |"
            )
            for msg in sm["messages"]:
                lines.append(f"|  | | | {msg} | | |")
        lines.append("")
        lines.append(
            "Footprints match the whole matrices (a, b, c each [0, size²)): "
            + ", ".join(f"{s}³ {_yn(full[s])}" for s in sizes)
            + "."
        )
        # the analysis alone, in this warm process (no CLI start, no worker start)
        from tilelens_lsp.pipeline import analyze_path

        inproc: dict[int, list[float]] = {s: [] for s in sizes}
        for s in sizes:
            analyze_path(root / f"matmul_{s}.py", root)  # warm
        for i in range(n):
            for s in sizes:
                path = root / f"matmul_{s}.py"
                path.write_text(bump(path.read_text(), i))
                t0 = time.perf_counter()
                analyze_path(path, root)
                inproc[s].append(time.perf_counter() - t0)
        r2 = median(inproc[big]) / median(inproc[small])
        self.report.add(
            "c. analysis alone (warm, in-process), matmul 16384³ / 256³",
            f"{r2:.2f}× ({ms(median(inproc[big]))} / {ms(median(inproc[small]))})",
            "",
            None,
        )
        self.report.detail("c. `tilelens-lsp check` against grid size (fixed 64×64×32 blocks)", lines)

    # -- d: against the interpreter

    def interp(self) -> None:
        from tilelens_lsp.pipeline import analyze_path

        n_ours = self.reps(10, 3)
        sizes = [256] if self.quick else [256, 512]
        lines = [
            "| launch | interpreter run (median) | our analysis (median) | speed-up | footprints equal "
            "| bare TTIR compile (median) | interpreter / compile | evaluation of the TTIR alone (median) "
            "| interpreter / evaluation |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for size in sizes:
            root = self.workspace("interp", {f"matmul_{size}.py": matmul_variant(size)})
            path = root / f"matmul_{size}.py"
            repeat = self.reps(3, 1) if size == 256 else 1
            cmd = [sys.executable, str(HERE / "interp_runner.py"), str(path), "--repeat", str(repeat), "--record"]
            proc = subprocess.run(cmd, capture_output=True, text=True, env=child_env(TRITON_INTERPRET="1"), cwd=str(root))
            if proc.returncode != 0:
                raise RuntimeError(f"interpreter run failed: {proc.stderr[-2000:]}")
            rec = json.loads(proc.stdout.strip().splitlines()[-1])
            t_interp = median(rec["times"])
            result = analyze_path(path, root)  # warm: this kernel's first analysis in this process
            ours = []
            for i in range(n_ours):
                path.write_text(bump(path.read_text(), i))
                t0 = time.perf_counter()
                result = analyze_path(path, root)
                ours.append(time.perf_counter() - t0)
            mine = {
                (a.op, a.line, a.pointer): [list(e) for e in a.elements]
                for launch in result.launches
                for a in launch.accesses
            }
            theirs = {(a["op"], a["line"], a["pointer"]): a["elements"] for a in rec["footprint"] or []}
            equal = mine == theirs and rec.get("unattributed", 0) == 0
            speed = t_interp / median(ours)
            compile_once = bare_compiler(path)
            t_compile = median([compile_once() for _ in range(self.reps(5, 2))])
            t_eval = evaluation_seconds(path, root, n_ours)
            lines.append(
                f"| matmul {size}³ (grid {rec['grid']}) | {secs(t_interp)} (×{len(rec['times'])}) | "
                f"{ms(median(ours))} (×{n_ours}) | {speed:.0f}× | {_yn(equal)} | {ms(t_compile)} | "
                f"{t_interp / t_compile:.0f}× | {t_eval * 1000:.1f} ms | {t_interp / t_eval:.0f}× |"
            )
            if size == 256:
                self.report.add(
                    "d. speed-up over TRITON_INTERPRET=1, matmul 256³",
                    f"{speed:.0f}× ({secs(t_interp)} / {ms(median(ours))})",
                    "≥ 1000×",
                    speed >= 1000,
                )
                self.report.add(
                    "d. … the evaluation of the compiled TTIR alone, matmul 256³",
                    f"{t_interp / t_eval:.0f}× ({secs(t_interp)} / {t_eval * 1000:.1f} ms)",
                    "",
                    None,
                )
                self.report.add("d. footprint equals the interpreter's, matmul 256³", _yn(equal), "yes", equal)
            else:
                self.report.add(f"d. speed-up over TRITON_INTERPRET=1, matmul {size}³", f"{speed:.0f}×", "", None)
            if not equal:
                lines.append(f"|  ours: {_short(mine)} | interpreter: {_short(theirs)} | | | | | |")
        lines.append("")
        lines.append(
            "Interpreter time is `fn.run(grid=...)` after one warm-up run (no import, no allocation); ours is "
            "`pipeline.analyze_path` on a changed file (cache miss) in a warm process: import of the "
            "user's module, bind, TTIR, evaluation, clients. The last column is the most that any analysis "
            'which compiles the launch to TTIR could reach at that size. "Evaluation of the TTIR alone" '
            "is `select.analyze` on the launch's parsed module (the footprints, out-of-bounds and overflow "
            "facts the clients report), without import, compile or parse."
        )
        self.report.detail("d. footprint against Triton's interpreter", lines)

    # -- e: memory

    def memory(self) -> None:
        if not self.server_memory:
            self.save(with_saves=False)
        mem = self.server_memory
        if mem:
            hwm = mem.get("VmHWM", 0) / 1024
            peak = mem.get("VmPeak", 0) / 1024
            from tilelens_lsp.settings import Settings

            limit = Settings().memory_limit_mb
            self.report.add("e. server worker peak RSS (VmHWM) after the save runs", f"{hwm:.0f} MB", "", None)
            self.report.add(
                "e. server worker peak address space (VmPeak)",
                f"{peak:.0f} MB",
                f"< {limit} MB (worker RLIMIT_AS)",
                peak < limit,
            )
        else:
            self.report.add("e. server worker peak RSS", "worker not found", "", None)
        for name, kb in self.check_rss_kb.items():
            self.report.add(f"e. peak RSS of `{name}` (CLI + worker, wait4)", f"{kb / 1024:.0f} MB", "", None)

    # -- scale: one launch at 10^3 .. 10^7 programs (tools/bench/scale.py)

    def scale(self) -> None:
        sys.path.insert(0, str(HERE))
        from scale import run_scale

        root = self.tmp / "scale"
        root.mkdir(parents=True, exist_ok=True)
        rows, lines = run_scale(root, child_env(), self.quick)
        for metric, measured, goal, ok in rows:
            self.report.add(metric, measured, goal, ok)
        self.report.detail("scale: time, peak RSS and engine per launch (one fresh process each)", lines)

    # -- f: --jobs

    def jobs(self) -> None:
        n = self.reps(3, 1)
        folders = [KERNELS] if self.quick else [KERNELS, REPO / "samples", REPO / "tests" / "conformance" / "kernels"]
        folders = [f for f in folders if f.is_dir()]
        times: dict[int, list[float]] = {1: [], 2: []}
        outs: dict[int, str] = {}
        compared, diffs, changed = 0, [], 0
        for _ in range(n):
            before = _tree_hash(folders)
            for j in (1, 2):
                cmd = [
                    sys.executable,
                    "-m",
                    "tilelens_lsp",
                    "check",
                    *map(str, folders),
                    "--format",
                    "json",
                    "--jobs",
                    str(j),
                ]
                t, rc, out, err, _ = run_timed(cmd, REPO)
                if rc not in (0, 1) or not out.strip():
                    raise RuntimeError(f"check --jobs {j} failed (rc {rc}): {err[-2000:]}")
                times[j].append(t)
                outs[j] = out
            if _tree_hash(folders) != before:
                changed += 1  # someone edited the corpus meanwhile: this pair proves nothing
                continue
            compared += 1
            diffs += _json_diffs(outs[1], outs[2])
        doc = json.loads(outs[1])
        n_files = len(doc["files"])
        n_launch = sum(len(f["launches"]) for f in doc["files"])
        speed = median(times[1]) / median(times[2])
        same = compared > 0 and not diffs
        where = ", ".join(os.path.relpath(f, REPO) for f in folders)
        self.report.add(
            f"f. check --jobs 2 speed-up ({n_files} files, {n_launch} launches)",
            f"{speed:.2f}× ({secs(median(times[1]))} → {secs(median(times[2]))}; {os.cpu_count()} CPUs)",
            "",
            None,
        )
        self.report.add(
            "f. --jobs 2 output identical to --jobs 1",
            (_yn(same) if compared else "n/a")
            + f" ({compared} pair(s) compared"
            + (f", {changed} skipped: the corpus changed during the pair" if changed else "")
            + ")",
            "yes",
            same if compared else None,
        )
        lines = [
            f"Folders: {where}. Runs per setting: {n}; --jobs 1: {[round(x, 2) for x in times[1]]} s, "
            f"--jobs 2: {[round(x, 2) for x in times[2]]} s."
        ]
        if diffs:
            lines += ["", "Differences between --jobs 1 and --jobs 2:", ""] + [f"- {d}" for d in diffs[:10]]
        self.report.detail("f. `check --jobs`", lines)

    # -- run

    def run(self, only: list[str]) -> int:
        order = [s for s in ("check", "interp", "jobs", "save", "open", "memory", "corpus", "scale") if s in only]
        for name in order:
            t0 = time.perf_counter()
            print(f"[bench] {name} ...", file=sys.stderr, flush=True)
            try:
                getattr(self, name)()
            except Exception as exc:  # noqa: BLE001 - one broken section must not hide the others
                self.report.failed.append(name)
                self.report.rows.append(Row(f"{name}", f"failed: {type(exc).__name__}: {exc}"[:300], "—", "ERROR"))
                traceback.print_exc()
            print(f"[bench] {name} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
        shutil.rmtree(self.tmp, ignore_errors=True)
        return 1 if self.report.failed else 0


def _tree_hash(folders: list[Path]) -> str:
    import hashlib

    h = hashlib.sha256()
    for folder in folders:
        for f in sorted(folder.rglob("*.py")):
            try:
                h.update(str(f).encode() + f.read_bytes())
            except OSError:
                pass
    return h.hexdigest()


def _json_diffs(a: str, b: str) -> list[str]:
    """What differs between two `check --format json` documents, file by file (short lines)."""
    da, db = json.loads(a), json.loads(b)
    fa = {f["path"]: f for f in da["files"]}
    fb = {f["path"]: f for f in db["files"]}
    out = [f"{p}: only in one run" for p in sorted(set(fa) ^ set(fb))]
    for p in sorted(set(fa) & set(fb)):
        if fa[p] == fb[p]:
            continue
        msgs = []
        for x, y in zip(fa[p]["launches"], fb[p]["launches"]):
            if x != y:
                dx = "; ".join(d["code"] + " " + d["message"][:100] for d in x["diagnostics"])
                dy = "; ".join(d["code"] + " " + d["message"][:100] for d in y["diagnostics"])
                msgs.append(f"{x['kernel']}@{x['line']}: {x['status']} [{dx}] vs {y['status']} [{dy}]")
        if fa[p]["diagnostics"] != fb[p]["diagnostics"]:
            msgs.append(
                f"file diagnostics {[d['message'][:100] for d in fa[p]['diagnostics']]} vs "
                f"{[d['message'][:100] for d in fb[p]['diagnostics']]}"
            )
        out.append(f"{p}: " + (" | ".join(msgs) or "launch count differs"))
    return out


def _yn(b: bool) -> str:
    return "yes" if b else "no"


def evaluation_seconds(path: Path, root: Path, n: int) -> float:
    """Median time of the engine alone (`select.analyze`) on the launch models of one analysis of `path`."""
    from tilelens_lsp.engines import select
    from tilelens_lsp.pipeline import analyze_path

    models = []
    real = select.analyze

    def spy(model):
        models.append(model)
        return real(model)

    select.analyze = spy
    try:
        path.write_text(bump(path.read_text(), 999))
        analyze_path(path, root)
    finally:
        select.analyze = real
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        for model in models:
            real(model)
        times.append(time.perf_counter() - t0)
    return median(times)


def _short(d: dict) -> str:
    return "; ".join(f"{k[0]}@{k[1]} {k[2]} {v[:3]}{'…' if len(v) > 3 else ''}" for k, v in sorted(d.items()))


def lone_save_gap() -> float:
    """Seconds to wait after a save's diagnostics so that the next save is a lone one: saves closer
    than the scheduler's DEBOUNCE form a burst and wait for quiet (the vector add's 16 ms saves, 13 ms
    in-process run and a 50 ms pause made every save of it wait about 40 ms that way)."""
    try:
        from tilelens_lsp.lsp.analysis import scheduler

        return float(scheduler.DEBOUNCE) + 0.02
    except Exception:  # noqa: BLE001 - a bench of an older tree
        return 0.15


def _server_const(name: str) -> str:
    try:
        from tilelens_lsp.lsp.analysis import scheduler

        return str(getattr(scheduler, name))
    except Exception:  # noqa: BLE001
        return "?"


def verdict_summary(doc: dict) -> dict:
    """Per file: statuses, diagnostic codes, and whether every access is exact and covers its view."""
    statuses, codes, accesses, messages, verdicts = [], [], [], [], []
    exact, full = True, True
    analyzed = False
    for f in doc["files"]:
        for d in f.get("diagnostics", []):
            codes.append(d["code"])
            verdicts.append(("file", d["code"]))
        for launch in f["launches"]:
            statuses.append(launch["status"])
            analyzed = analyzed or launch["status"] == "analyzed"
            for d in launch["diagnostics"]:
                codes.append(d["code"])
                verdicts.append((d["code"], d["line"], d.get("kind")))
                messages.append(f"{d['code']}: {d['message'][:160]}")
            for a in launch["accesses"]:
                exact = exact and a["exact"]
                full = full and a["elements"] == [[0, a.get("view_numel") or 0]]
                accesses.append(f"{a['op']}@{a['line']} {a['pointer']} exact={a['exact']} {a['elements'][:2]}")
                verdicts.append((a["op"], a["line"], a["pointer"], a["in_bounds"]))
            verdicts.append(("status", launch["status"]))
    if not accesses:
        exact = full = False
    return {
        "status": ", ".join(statuses) or "none",
        "codes": ", ".join(sorted(set(codes))),
        "accesses": "<br>".join(accesses),
        "messages": messages,
        "exact": exact and analyzed,
        "full": full,
        "verdicts": sorted(map(str, verdicts)),
    }


def run_timed(cmd: list[str], cwd: Path) -> tuple[float, int, str, str, int]:
    """Wall time, exit code, stdout, stderr and peak RSS in kB (the child and its reaped children)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=str(cwd), env=child_env())
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (
            elapsed,
            proc.returncode,
            out.read().decode("utf-8", "replace"),
            err.read().decode("utf-8", "replace"),
            usage.ru_maxrss,
        )


# (label, file suffix, function name): cumulative times read from one cProfile run of analyze_path
_PHASES = (
    ("directives", "tilelens_lsp/launches/scanner.py", "parse_directives"),
    ("import module", "tilelens_lsp/pipeline.py", "import_module"),
    ("bind", "tilelens_lsp/compile/binding.py", "bind"),
    ("TTIR compile", "tilelens_lsp/compile/compiler.py", "compile_ttir"),
    ("TTIR read", "tilelens_lsp/ttir/reader.py", "parse_module"),
    ("TTIR check", "tilelens_lsp/ttir/reader.py", "check_alignment"),
    ("graph.run", "tilelens_lsp/engines/enumerate/graph.py", "run"),
    ("footprint", "tilelens_lsp/clients/footprint.py", "run"),
    ("sanitizer", "tilelens_lsp/clients/sanitizer.py", "run"),
    ("overflow", "tilelens_lsp/clients/overflow.py", "run"),
)


def profiled_analysis(path: Path, root: Path):
    """(wall seconds, {phase: cumulative seconds}, pstats.Stats, result) of one analysis of `path`."""
    import cProfile
    import pstats

    from tilelens_lsp.pipeline import analyze_path

    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    result = analyze_path(path, root)
    prof.disable()
    wall = time.perf_counter() - t0
    stats = pstats.Stats(prof)
    phases = {label: 0.0 for label, _, _ in _PHASES}
    for (filename, _, func), (_, _, _, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        for label, suffix, name in _PHASES:
            if func == name and filename.replace(os.sep, "/").endswith(suffix):
                phases[label] = max(phases[label], cumtime)  # same-named nested helpers: the outermost
    total = stats.total_tt  # type: ignore[attr-defined]
    phases["other"] = max(0.0, total - sum(phases.values()))
    return wall, total, phases, stats, result


def breakdown_lines(kernels: list[str], tmp: Path) -> list[str]:
    labels = [label for label, _, _ in _PHASES] + ["other"]
    lines = ["| kernel | status | total (profiled) | " + " | ".join(labels) + " |", "|---|---|---|" + "---|" * len(labels)]
    root = tmp / "profile"
    root.mkdir(parents=True, exist_ok=True)
    from tilelens_lsp.pipeline import analyze_path

    for k in kernels:
        path = root / f"{k}.py"
        text = (KERNELS / f"{k}.py").read_text()
        path.write_text(bump(text, 0))
        analyze_path(path, root)  # warm
        path.write_text(bump(text, 1))  # and a cache miss
        _, total, phases, _, result = profiled_analysis(path, root)
        cells = [f"{phases[label] * 1000:.0f}" for label in labels]
        lines.append(f"| {k} | {launch_summary(result)} | {total * 1000:.0f} ms | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "Milliseconds of cumulative time under cProfile (which inflates Python-heavy phases), one "
        "cache-missing `analyze_path` per kernel in a warm process. `other` is the rest of the "
        "profiled total (printing the MLIR module, loc tables, merging, serialisation)."
    )
    return lines


# (label, module, attribute): each phase's function, timed by wall clock wherever the package refers to it
_WALL_PHASES = (
    ("declarations", "tilelens_lsp.pipeline", "declared_launches"),
    ("import module", "tilelens_lsp.pipeline", "load_module"),
    ("dependencies", "tilelens_lsp.pipeline", "dependency_values"),
    ("result key", "tilelens_lsp.pipeline.launch", "result_key"),
    ("bind", "tilelens_lsp.compile.binding", "bind"),
    ("TTIR compile", "tilelens_lsp.compile.compiler", "HostCompiler.compile_ttir"),
    ("TTIR print", "triton._C.libtriton.ir", "module.str"),
    ("loc table", "tilelens_lsp.ttir.locs", "LocTable.__init__"),
    ("TTIR read", "tilelens_lsp.ttir.reader", "parse_module"),
    ("TTIR check", "tilelens_lsp.ttir.reader", "check_alignment"),
    ("engine", "tilelens_lsp.engines.select", "analyze"),
    ("clients", "tilelens_lsp.clients", "CLIENTS"),
)


def _instrument(spent: dict[str, float]) -> Callable[[], None]:
    """Wrap each phase's function (every reference to it in tilelens_lsp's loaded modules, a method on
    its class) so that its wall time adds to `spent[label]`; returns what puts them back. A phase whose
    function is gone is left out."""
    import importlib

    undo: list[tuple[Any, str, Any]] = []

    def put(obj, name, value):
        undo.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    def timed(fn, label):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t0

        return wrapper

    for label, module_name, attr in _WALL_PHASES:
        try:
            owner = importlib.import_module(module_name)
        except ImportError:
            continue
        if attr == "CLIENTS":
            for cls in getattr(owner, "CLIENTS", {}).values():
                put(cls, "run", timed(cls.run, label))
            continue
        cls_name, _, name = attr.rpartition(".")
        if cls_name:
            cls = getattr(owner, cls_name, None)
            if cls is not None and hasattr(cls, name):
                put(cls, name, timed(getattr(cls, name), label))
            continue
        fn = getattr(owner, name, None)
        if fn is None:
            continue
        wrapper = timed(fn, label)
        for mod in [m for n, m in list(sys.modules.items()) if n.startswith("tilelens_lsp") and m is not None]:
            for key, value in list(vars(mod).items()):
                if value is fn:
                    put(mod, key, wrapper)

    def restore() -> None:
        for obj, name, old in reversed(undo):
            setattr(obj, name, old)

    return restore


def wall_lines(kernels: list[str], tmp: Path, n: int = 9) -> list[str]:
    """Where one cache-missing `analyze_path` spends its time, by wall clock (no profiler overhead):
    medians per phase over `n` analyses in this warm process, against the bare compile."""
    import tilelens_lsp.pipeline  # noqa: F401 - loaded before its functions are wrapped

    spent: dict[str, float] = {}
    restore = _instrument(spent)
    try:
        return _wall_table(kernels, tmp, n, spent)
    finally:
        restore()


def _wall_table(kernels: list[str], tmp: Path, n: int, spent: dict[str, float]) -> list[str]:
    from tilelens_lsp import pipeline

    labels = [label for label, _, _ in _WALL_PHASES]
    lines = [
        "| kernel | bare compile | analysis | " + " | ".join(labels) + " | rest | analysis − compile |",
        "|---|---|---|" + "---|" * (len(labels) + 2),
    ]
    root = tmp / "wall"
    root.mkdir(parents=True, exist_ok=True)
    for k in kernels:
        path = root / f"{k}.py"
        text = (KERNELS / f"{k}.py").read_text()
        path.write_text(bump(text, 0))
        pipeline.analyze_path(path, root)  # warm
        compile_once = bare_compiler(path)
        runs: list[dict[str, float]] = []
        compiles: list[float] = []
        for i in range(n):
            compiles.append(compile_once())
            path.write_text(bump(text, 1 + i))
            spent.clear()
            t0 = time.perf_counter()
            pipeline.analyze_path(path, root)
            total = time.perf_counter() - t0
            runs.append({**spent, "total": total, "rest": total - sum(spent.values())})
        med = {key: median([r.get(key, 0.0) for r in runs]) for key in ["total", "rest"] + labels}
        cells = [f"{med[label] * 1000:.1f}" for label in labels + ["rest"]]
        lines.append(
            f"| {k} | {median(compiles) * 1000:.1f} | {med['total'] * 1000:.1f} | "
            + " | ".join(cells)
            + f" | {(med['total'] - median(compiles)) * 1000:.1f} |"
        )
    lines.append("")
    lines.append(
        f"Milliseconds, medians of {n} cache-missing `analyze_path` runs per kernel in a warm process, "
        "each phase timed by wall clock around its function (no profiler); `rest` is what no phase "
        "covers (result keys, launch records, paths, the clients' setup). The bare compile is "
        "bind + TTIR compile of the first config alone, measured interleaved."
    )
    return lines


def save_stages(kernels: list[str], tmp: Path, n: int = 9) -> list[str]:
    """A save end to end, stage by stage, medians measured interleaved in this run: the bare compile,
    the analysis in this process, the same through a worker (pipe, JSON, the worker's own checks)
    and through the language server (didSave → publishDiagnostics). The differences are the costs
    of each layer: what a save pays beyond its compile."""
    from tilelens_lsp.pipeline import Imports, WarmState, analyze_path
    from tilelens_lsp.settings import Settings
    from tilelens_lsp.worker.process import Worker

    state = WarmState(imports=Imports(reuse=True))  # what a worker keeps between saves
    root = tmp / "stages"
    root.mkdir(parents=True, exist_ok=True)
    texts = {k: (KERNELS / f"{k}.py").read_text() for k in kernels}
    for k in kernels:
        (root / f"{k}.py").write_text(bump(texts[k], 0))
    worker = Worker(Settings())
    client = LspClient(root, child_env())
    lines = [
        "| kernel | bare compile | in-process analysis | + worker round trip | + language server "
        "| in-process − compile | worker − in-process | server − worker | save / compile |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    try:
        client.initialize(root)
        uris = {k: client.open(root / f"{k}.py", 1) for k in kernels}
        for k in kernels:
            client.wait_diagnostics(uris[k], 1, timeout=180)
        for k in kernels:
            path = root / f"{k}.py"
            compile_once = bare_compiler(path)
            worker.analyze(path, root)
            stage: dict[str, list[float]] = {"compile": [], "inproc": [], "worker": [], "server": []}
            for i in range(n):
                stage["compile"].append(compile_once())
                path.write_text(bump(texts[k], 100 + i))
                t0 = time.perf_counter()
                analyze_path(path, root, state=state)
                stage["inproc"].append(time.perf_counter() - t0)
                path.write_text(bump(texts[k], 200 + i))
                t0 = time.perf_counter()
                worker.analyze(path, root)
                stage["worker"].append(time.perf_counter() - t0)
                t0 = client.change_and_save(path, bump(texts[k], 300 + i), 2 + i)
                t1, _ = client.wait_diagnostics(uris[k], 2 + i)
                stage["server"].append(t1 - t0)
                time.sleep(lone_save_gap())
            c, a, w, v = (median(stage[x]) for x in ("compile", "inproc", "worker", "server"))
            lines.append(
                f"| {k} | {ms(c)} | {ms(a)} | {ms(w)} | {ms(v)} | {ms(a - c)} | {ms(w - a)} | {ms(v - w)} | {v / c:.1f} |"
            )
    finally:
        worker.stop()
        client.close()
    lines.append("")
    lines.append(
        f"Medians of {n} cache-missing saves per stage (a comment changes each time), the stages "
        'interleaved; "+ worker" is `Worker.analyze` from this process, "+ language server" a '
        "didSave to a warm server until its publishDiagnostics."
    )
    return lines


def profile(kernel: str) -> int:
    """A save end to end by stage (`save`), cProfile of one cache-missing in-process analysis of a bench
    kernel (after a warm-up), or a phase table of every kernel (`all`)."""
    tmp = Path(tempfile.mkdtemp(prefix="tilelens-bench-prof-"))
    try:
        if kernel == "all":
            print("\n".join(breakdown_lines(list(BENCH_KERNELS), tmp)))
            return 0
        if kernel == "wall":
            print("\n".join(wall_lines(list(BENCH_KERNELS), tmp)))
            return 0
        if kernel in ("save", "stages"):
            print("\n".join(save_stages(list(BENCH_KERNELS), tmp)))
            return 0
        src = KERNELS / f"{kernel}.py"
        if not src.is_file():
            print(f"no bench kernel {kernel!r}; choose from {', '.join(BENCH_KERNELS)} or all", file=sys.stderr)
            return 2
        from tilelens_lsp.pipeline import analyze_path

        path = tmp / src.name
        text = src.read_text()
        path.write_text(bump(text, 0))
        analyze_path(path, tmp)
        path.write_text(bump(text, 1))
        wall, _, phases, stats, result = profiled_analysis(path, tmp)
        print(f"{kernel}: {launch_summary(result)} in {ms(wall)} (profiled)")
        print("phases (ms): " + ", ".join(f"{k} {v * 1000:.0f}" for k, v in phases.items()))
        stats.sort_stats("cumulative").print_stats(30)
        stats.sort_stats("tottime").print_stats(15)
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions and kernels (a smoke run)")
    ap.add_argument("--only", help=f"comma-separated subset of {','.join(SECTIONS)}")
    ap.add_argument(
        "--out",
        type=Path,
        help="write the Markdown report here (default: tools/bench/latest.md for a full run, nowhere for --quick/--only)",
    )
    ap.add_argument("--profile", metavar="KERNEL", help="cProfile one analysis of a bench kernel and exit")
    args = ap.parse_args(argv)
    if args.profile:
        return profile(args.profile)
    only = SECTIONS if not args.only else [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in SECTIONS]
    if unknown:
        ap.error(f"unknown section(s) {unknown}; choose from {', '.join(SECTIONS)}")
    command = "python tools/bench/bench.py" + "".join(f" {shlex.quote(a)}" for a in (argv or sys.argv[1:]))
    bench = Bench(args)
    t0 = time.perf_counter()
    rc = bench.run(list(only))
    header = _environment() + [
        f"wall time {time.perf_counter() - t0:.0f} s; medians; every ratio compares "
        "two things measured in this run; TILELENS_CACHE_DIR=off"
    ]
    text = bench.report.markdown(command, header)
    print(text)
    out = args.out or (HERE / "latest.md" if not args.quick and not args.only else None)
    if out is not None:
        out.write_text(text)
        print(f"[bench] wrote {out}", file=sys.stderr)
    return rc


def _environment() -> list[str]:
    import triton

    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=str(REPO), capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=str(REPO), capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        commit, dirty = "?", ""
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    return [
        f"{time.strftime('%Y-%m-%d %H:%M:%S')}; commit {commit}{' + local changes' if dirty else ''}; "
        f"load average at the end {load} (1/5/15 min; other work on this machine adds noise)",
        f"Python {platform.python_version()}, Triton {triton.__version__}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, {platform.platform()}",
    ]


if __name__ == "__main__":
    raise SystemExit(main())
