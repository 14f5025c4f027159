"""The worker process: keeps Triton imported and answers analysis requests, one JSON line each.

It runs in the user's Python (where their kernels' imports resolve). The protocol owns the real
stdout; anything user code prints goes to stderr, so a chatty module cannot corrupt the protocol.
A file whose import leaves threads or child processes behind gets its answer with `retire`: the
parent then replaces this process, since what those do next could change a later file's verdict.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from dataclasses import replace
from typing import TYPE_CHECKING

from tilelens_lsp.claims import Claims
from tilelens_lsp.model import FileResult, LaunchSpec, ScalarSpec, TensorSpec
from tilelens_lsp.paths import stdlib_end
from tilelens_lsp.settings import Settings, merge

if TYPE_CHECKING:
    from tilelens_lsp.pipeline import WarmState


def _protocol_stream():
    """Move fd 1 to a private fd for the protocol and point fd 1 (and sys.stdout) at stderr."""
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(proto_fd, "w", buffering=1, encoding="utf-8")


def _request_stream():
    """Move fd 0 to a private fd for the requests and point fd 0 at /dev/null: user code that reads
    stdin (`input()`) gets EOF instead of eating a request, and one that closes fd 0 closes nothing of ours."""
    proto_fd = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return os.fdopen(proto_fd, "r", encoding="utf-8")


def _limit_memory(mb: int) -> None:
    if mb <= 0:
        return
    try:
        import resource  # POSIX only: elsewhere the worker runs without a memory limit

        limit = mb * 1024 * 1024
        # what the worker allocates (heap, private writable mappings: RLIMIT_DATA, enforced on mmap since
        # Linux 4.7), not its address space: a CUDA build of torch maps ~4 GB of libraries on import, and
        # under a 4 GB address-space limit every worker on a 16-core GPU host died in OpenBLAS's
        # per-thread buffers before analysing anything; the address-space limit where there is no other
        resource.setrlimit(getattr(resource, "RLIMIT_DATA", resource.RLIMIT_AS), (limit, limit))
    except (ImportError, ValueError, OSError):
        pass


def _import_roots() -> None:
    """sys.path as `python -I` built it, plus the user's PYTHONPATH folders the parent passes on
    (after the stdlib, before site-packages), and never the working directory (an older
    interpreter's `-c` may still put '' first)."""
    cwd = os.getcwd()
    sys.path[:] = [p for p in sys.path if p not in ("", ".", cwd)]
    extra = [p for p in os.environ.get("TILELENS_WORKER_PATH", "").split(os.pathsep) if p and p not in sys.path]
    at = stdlib_end(sys.path)
    sys.path[at:at] = list(dict.fromkeys(extra))


def _children() -> list[int]:
    """Live (not zombie) child processes of this process, from /proc; [] where there is none.

    Each thread's `children` list (Linux 3.5+) names them without reading every process's stat (a
    few milliseconds on a busy host, paid on every save); where the kernel lacks it, the scan."""
    listed = _listed_children()
    if listed is not None:
        return listed
    return _scanned_children()


def _listed_children() -> list[int] | None:
    me = os.getpid()
    try:
        tasks = os.listdir(f"/proc/{me}/task")
        listed: set[int] = set()
        for task in tasks:
            with open(f"/proc/{me}/task/{task}/children", "rb") as f:
                listed.update(int(x) for x in f.read().split())
    except (OSError, ValueError):
        return None
    return [pid for pid in sorted(listed) if not _zombie(pid)]


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return True  # gone already
    fields = stat[stat.rfind(b")") + 2 :].split()
    return not fields or fields[0] == b"Z"


def _scanned_children() -> list[int]:
    me = os.getpid()
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm) ": state ppid ...
        if len(fields) > 1 and int(fields[1]) == me and fields[0] != b"Z":
            found.append(int(entry))
    return found


def leftovers(threads_before: set[threading.Thread]) -> str | None:
    """Why this process must not serve another file: threads or child processes a module left."""
    threads = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
    children = _children()
    parts = []
    if threads:
        parts.append(f"{len(threads)} thread(s) ({', '.join(sorted(t.name for t in threads)[:3])})")
    if children:
        parts.append(f"{len(children)} child process(es)")
    return " and ".join(parts) + " left running" if parts else None


def handle(request: dict, state: "WarmState", emit=None, answer=None) -> dict:
    """The reply to one request, with this worker's `state` (a `pipeline.WarmState`: its result cache,
    counters, imports). `emit(event, fields)` sends a progress line before the reply: an analysis
    streams each launch's results as it finishes (so the parent times launches, not files, and
    keeps the verdicts of the launches before one that hangs or crashes); the final reply then
    holds only the file's own diagnostics. `answer(reply)`, where given, sends an analysis' reply as
    soon as it is known, before the process is restored from the module's import (`serve` then
    sends nothing more for it)."""
    from tilelens_lsp import pipeline  # lazy: imports Triton, after main() set the memory limit and sys.path

    method = request.get("method")
    params = request.get("params") or {}
    if method == "analyze":
        settings = merge(Settings(), params.get("settings"))
        extra = [LaunchSpec.from_json(x) for x in params.get("launches", [])]
        stream = emit is not None and params.get("stream", False)

        sent: list[dict] = []

        def reply(result: FileResult) -> dict:
            if stream:
                result = replace(result, launches=())  # the launches went ahead (absolute paths kept)
            return {"result": result.to_json(), "stats": state.stats.to_json()}

        result = pipeline.analyze_path(
            params["path"],
            params.get("workspace_root"),
            settings,
            params.get("config_file"),
            extra,
            params.get("select"),
            params.get("file_level", True),
            emit if stream else None,
            state,
            Claims.from_json(params.get("claims")),
            on_done=None if answer is None else lambda done: sent.append(answer(reply(done))),
        )
        return sent[0] if sent else reply(result)
    if method == "plan":
        settings = merge(Settings(), params.get("settings"))
        return {
            "result": pipeline.plan_path(
                params["path"], params.get("workspace_root"), settings, params.get("config_file"), state
            )
        }
    if method == "suggest":
        from tilelens_lsp.suggest import suggest_launches  # lazy, like the pipeline above

        settings = merge(Settings(), params.get("settings"))
        found = suggest_launches(
            params["path"], params.get("workspace_root"), params.get("kernels"), settings, params.get("config_file"), state
        )
        return {"result": [s.to_json() for s in found]}
    if method == "stats":
        return {"result": state.stats.to_json()}
    if method == "ping":
        return {"result": "pong"}
    if method == "sleep":  # for tests of timeouts and cancellation
        time.sleep(float(params.get("seconds", 1)))
        return {"result": "slept"}
    if method == "crash":  # for tests of crash recovery
        os._exit(int(params.get("code", 3)))
    return {"error": f"unknown method {method!r}"}


def _warm_up(target: str) -> None:
    """Compile a tiny kernel through the whole host path (backend, binder, passes)."""
    # lazy: both import Triton, after main() set the memory limit and sys.path
    from tilelens_lsp import _warmup
    from tilelens_lsp.compile.compiler import compile_launch

    try:
        launch = LaunchSpec(
            "warmup_kernel",
            1,
            (TensorSpec("fp32", (64,), (1,), 0, 64), ScalarSpec("int", 64)),
            (("BLOCK", ScalarSpec("int", 64)),),
            grid=(1,),
        )
        for _config in compile_launch(_warmup.warmup_kernel, launch, target):
            pass  # a failed config is a value here: warming never raises
    except Exception:  # noqa: BLE001 - warming is an optimisation, never a reason not to serve
        pass


def _prepare() -> dict:
    """Memory limit, sys.path, Triton and the pipeline imported, the compile path warmed: the hello."""
    _limit_memory(int(os.environ.get("TILELENS_WORKER_MEMORY_MB", "0")))
    # the analysis' numpy work is single-threaded: one BLAS thread, not one buffer per core
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    _import_roots()
    from tilelens_lsp.worker import sourceblock

    sourceblock.install()  # every @triton.jit of the user's packages reads its source through it
    try:
        # lazy: Triton and the pipeline load only now, under the memory limit, with the user's sys.path
        import triton

        from tilelens_lsp import pipeline  # noqa: F401 - imported here, under the limit, not on the first request

        target = os.environ.get("TILELENS_WORKER_TARGET") or Settings().target
        _warm_up(target)  # the first compile in a process costs ~0.3 s more: pay it now
        return {"ready": True, "triton": triton.__version__, "python": sys.executable}
    except Exception as exc:  # noqa: BLE001 - report why the worker cannot serve, then exit
        return {"ready": False, "error": f"{type(exc).__name__}: {exc}"}


def main() -> int:
    if "--template" in sys.argv[1:]:
        from tilelens_lsp.worker import template  # the fork server's side (worker/template.py)

        return template.serve(_prepare, _serve_forked)
    out = _protocol_stream()
    requests = _request_stream()
    hello = _prepare()
    if not hello.get("ready"):
        return serve(out, requests, hello)
    from tilelens_lsp.worker.template import settled_heap

    with settled_heap():
        return serve(out, requests, hello)


def _serve_forked(hello: dict) -> int:
    """A worker forked by the fork server: prepared already, its pipes on fds 0, 1 and 2."""
    return serve(_protocol_stream(), _request_stream(), hello)


def serve(out, requests, hello: dict) -> int:
    """Answer requests, one JSON line each, until stdin closes (after the hello, or why not)."""
    if not hello.get("ready"):
        out.write(json.dumps(hello) + "\n")
        return 1
    out.write(json.dumps(hello) + "\n")
    from tilelens_lsp.pipeline import Imports, WarmState  # imported by _prepare already

    # this worker's memory, one for its whole life, passed to every request; a file's helper modules
    # are kept for its next analysis where nothing they were made from changed
    state = WarmState(imports=Imports(reuse=True))
    threads_before = set(threading.enumerate())
    for line in requests:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as exc:
            out.write(json.dumps({"id": None, "error": f"bad request: {exc}"}) + "\n")
            continue

        def emit(event: str, fields: dict, rid=request.get("id")) -> None:
            out.write(json.dumps({"id": rid, "event": event, **fields}, separators=(",", ":")) + "\n")

        answered: list[dict] = []

        def answer(reply: dict, request=request) -> dict:
            """The request's one reply line (a module that left threads or children: `retire`)."""
            reply["id"] = request.get("id")
            if request.get("method") in ("analyze", "suggest"):
                why = leftovers(threads_before)
                if why:
                    reply["retire"] = why
            out.write(json.dumps(reply, separators=(",", ":")) + "\n")
            answered.append(reply)
            return reply

        try:
            reply = handle(request, state, emit, answer)
        except MemoryError:
            reply = {"error": "the worker ran out of memory", "kind": "memory"}
        except Exception as exc:  # noqa: BLE001 - a bug answers this request, never kills the worker
            reply = {"error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()}
        if not answered:
            answer(reply)
        elif "error" in reply:
            # answered, then undoing the module's import failed: this process is not as a file found it,
            # so it serves no other (the parent starts a fresh one for the next request)
            sys.stderr.write(f"tilelens worker: restoring the process after a file failed: {reply['error']}\n")
            sys.stderr.flush()
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
