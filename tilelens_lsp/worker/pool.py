"""Spread the launches of many files over a pool of workers, and take one shard of them.

Each file is planned first (its launches named and weighed, nothing imported), then handed out in
chunks of launches: the heaviest files and launches first, a worker keeps to the file it imported
while that file has launches left, and a worker with no unstarted file left takes launches of the
file with most weight left (one large module does not serialise a package). The parts of a file come
back together: launches in their declared order, the file's own diagnostics once. A launch whose configs
run long is shared: a worker that asks for work joins a launch whose current config has run for
`join_after` seconds and has configs unclaimed before it takes anything else (or, where it holds the
launch's package, one whose unclaimed configs would take that long at the pace of its claimed ones),
and the workers on it claim its configs one by one (claims.py), so the eight slow configs of one
launch neither keep one worker busy while the others wait nor start only once everything else is
done (the slowest launch is the run's longest path). A helper that finds every config claimed before
it claimed one is stopped, and its part dropped. A worker that alone imported a package with
launches left does not help: those launches would wait for the slow one, as nobody else would pay
the package's import for them.

A shard (`Share`) keeps the launches whose stable identity (the file's portable name, the kernel,
the declaration's origin and line) hashes to it, not their position: the same launch lands in the
same shard on every machine and run, and adding a file moves no other launch. The file's own
diagnostics go with its first launch's shard (with the file's own hash when it has none).

Workers forked from a fork server share its imports. When the files include installed modules
(`module =` launches of site-packages code), their packages are imported once more, in a branch of
the server, while the files are planned; the workers are then forked from the branch, so N workers
pay one import of the package instead of N at once (worker/forkserver.py says when a branch is
refused; the workers are then forked from the server as before, each pays the imports itself and
keeps to the packages it imported: affinity.py). What this module does not do: decide exit codes or
print (the CLI's), or time anything itself (each worker times its own launches).
"""

from __future__ import annotations

import hashlib
import itertools
import math
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from tilelens_lsp.claims import NOTHING, Claims, LaunchClaims, read_claims
from tilelens_lsp.model import Diagnostic, FileResult, LaunchResult
from tilelens_lsp.settings import Settings
from tilelens_lsp.worker.affinity import Affinity
from tilelens_lsp.worker.process import UNANSWERED, Answers, Worker

JOIN_AFTER = 2.0  # seconds a config of a launch has run before an idle worker joins that launch
POLL = 0.25  # seconds an idle worker waits between looks at the launches still running


@dataclass(frozen=True)
class Share:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    def owns(self, key: str) -> bool:
        digest = hashlib.sha256(key.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index - 1


def stable_name(path: Path, root: Path) -> str:
    """The file's name as every machine of a CI matrix spells it: relative to the workspace root, or
    from its site-packages folder on, else its absolute path."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        pass
    parts = path.resolve().parts
    site = _site_index(parts)
    return "/".join(parts[site:]) if site is not None else path.resolve().as_posix()


def launch_keys(name: str, plan: dict) -> list[str]:
    """The identity of each planned launch (a repeated identical declaration is numbered)."""
    seen: dict[str, int] = {}
    keys = []
    for entry in plan["launches"]:
        base = f"{name}|{entry['kernel']}|{entry['origin']}|{entry['line']}"
        seen[base] = seen.get(base, 0) + 1
        keys.append(f"{base}|{seen[base]}")
    return keys


@dataclass
class _File:
    order: int
    path: Path
    plan: dict | None  # None: not planned (one part, the whole file)
    pending: list[int] = field(default_factory=list)  # launch indices not handed out, heaviest first
    file_level: bool = True  # this run reports the file's own diagnostics
    handed_file_level: bool = False
    parts: list[tuple[bool, FileResult, Answers]] = field(default_factory=list)
    whole: bool = False  # analysed as one request (no plan)
    claims: str | None = None  # the folder its launches' configs are claimed in (None: not shared)
    package: str | None = None  # the installed package a worker imports to analyse it (None: workspace code)
    weights: dict[int, int] = field(default_factory=dict)  # planned launch index: its weight

    @property
    def weight(self) -> int:
        return sum(self.weights.values())

    @property
    def weight_left(self) -> int:
        """The weight of its launches not handed out yet."""
        return sum(self.weights.get(j, 1) for j in self.pending)


@dataclass(eq=False)
class _Unit:
    """One request handed to a worker: a chunk of a file's launches (None: the whole file), or, for a
    helper (`joined` set), the one launch it joined."""

    file: _File
    chunk: list[int] | None
    first: bool  # it reports the file's own diagnostics
    worker: Worker
    token: str
    joined: int | None = None
    dropped: bool = False  # a helper stopped because nothing was left for it
    opens: bool = False  # the first unit of its package this worker was handed: it pays the import
    since: float = field(default_factory=time.monotonic)


def analyze_files(
    workers: list[Worker],
    files: list[Path],
    root: Path,
    config_file: str | None,
    settings: Settings,
    share: Share | None = None,
    skip: Callable[[Path], FileResult | None] = lambda p: None,
    positions: list[tuple[int, ...]] | None = None,
    join_after: float = JOIN_AFTER,
) -> list[FileResult]:
    """One FileResult per file, in the order given. `skip(path)` answers a file without a worker.
    `positions`, when given, receives per file the declared index of each of its launch results
    (what `merge` orders a file's launches from several shards by). With more than one worker, a
    launch whose current config has run `join_after` seconds takes an idle worker as a helper.

    Each worker is driven by one thread for the whole call (plan, then analysis): a worker dies with
    the thread that started it (PR_SET_PDEATHSIG), so no thread may end while its worker is needed."""
    results: dict[int, FileResult] = {}
    todo: list[_File] = []
    for order, path in enumerate(files):
        skipped = skip(path)
        if skipped is not None:
            results[order] = skipped
        else:
            todo.append(_File(order, path, None, package=package_of(path)))
    planning = len(workers) > 1 or share is not None
    plans = list(todo) if planning else []
    branch = _branch(workers, [f.path for f in todo], settings)
    lock = threading.Lock()
    run: list[_Run] = []
    claims = tempfile.mkdtemp(prefix="tilelens-claims-") if len(workers) > 1 else None

    def between() -> None:  # once, after every plan and before any analysis
        for f in todo:
            _select(f, root, share)
            if claims is not None and f.plan is not None:
                f.claims = os.path.join(claims, str(f.order))
                os.mkdir(f.claims)
        shared = _fork_from(branch, workers)
        run.append(_Run([f for f in todo if f.pending or f.whole or f.file_level], len(workers), join_after, shared))

    barrier = threading.Barrier(len(workers), action=between)

    def loop(worker: Worker) -> None:
        while True:
            with lock:
                f = plans.pop(0) if plans else None
            if f is None:
                break
            f.plan = worker.plan(f.path, root, config_file, settings)
        barrier.wait()
        run[0].loop(worker, root, config_file, settings)

    try:
        _each(workers, loop)
    finally:
        if claims is not None:
            shutil.rmtree(claims, ignore_errors=True)
    where: dict[int, tuple[int, ...]] = {}
    for f in todo:
        results[f.order], where[f.order] = _assemble(f)
    if positions is not None:
        positions[:] = [where.get(i, ()) for i in range(len(files))]
    return [results[i] for i in range(len(files))]


def installed_packages(paths: list[Path]) -> list[str]:
    """The packages that hold installed modules among `paths` (`liger_kernel.ops` for
    .../site-packages/liger_kernel/ops/rms_norm.py), in first-seen order. Only installed code: the
    workspace's own modules change between runs, and every worker imports them itself."""
    found: list[str] = []
    for path in paths:
        inner = _installed_parts(path)
        name = ".".join(inner or ())
        if inner and name not in found:
            found.append(name)
    return found


def package_of(path: Path) -> str | None:
    """The top-level installed package a module belongs to (`liger_kernel` for
    .../site-packages/liger_kernel/ops/rms_norm.py): what a worker pays an import of, the first time
    it analyses a module of it. None for workspace code."""
    inner = _installed_parts(path)
    return inner[0] if inner else None


def _installed_parts(path: Path) -> tuple[str, ...] | None:
    """The package folders between the last site-packages folder of `path` and its file, or None."""
    parts = Path(path).parts
    site = _site_index(parts)
    if site is None:
        return None
    inner = parts[site + 1 : -1]
    return inner if inner and all(p.isidentifier() for p in inner) else None


def _site_index(parts: tuple[str, ...]) -> int | None:
    """The index of the last site-packages folder among a path's parts (dist-packages where there is
    none), or None."""
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return len(parts) - parts[::-1].index(marker) - 1
    return None


def _branch(workers: list[Worker], paths: list[Path], settings: Settings):
    """A branch of the workers' fork server importing the installed packages among `paths`, or None
    (one worker, no fork server, no installed module)."""
    server = workers[0].fork_server if len(workers) > 1 else None
    if os.environ.get("TILELENS_FORK_BRANCH", "1") == "0" or gpu_host():  # "0": to measure without it
        return None
    packages = installed_packages(paths)
    if server is None or not packages:
        return None
    # the import timeout a worker has: an import that takes longer fails in a branch as in a worker
    return server.branch(packages, timeout=settings.timeout)


GPU_DEVICES = ("/dev/nvidiactl", "/dev/nvidia0", "/dev/kfd", "/dev/dxg")


def gpu_host() -> bool:
    """A GPU's device file is here: GPU packages initialise its driver at import, which starts
    threads, so a branch would be refused after the workers had waited for its import."""
    return any(os.path.exists(d) for d in GPU_DEVICES)


def _fork_from(branch, workers: list[Worker]) -> bool:
    """Once every file is planned: the branch's server, when its imports succeeded, forks the
    workers from now on (the planning workers stop; each one's next request forks it anew). True
    when it does: every worker then starts with the installed packages imported."""
    server = branch.server() if branch is not None else None
    if server is None:
        return False
    for w in workers:
        w.finish()
        w.fork_server = server
    return True


def _select(f: _File, root: Path, share: Share | None) -> None:
    if f.plan is None:
        f.whole = share is None or share.owns(stable_name(f.path, root))
        f.file_level = f.whole
        return
    entries = f.plan["launches"]
    keys = launch_keys(stable_name(f.path, root), f.plan)
    kept = [e for e, key in zip(entries, keys) if share is None or share.owns(key)]
    if share is None:
        f.file_level = True
    elif keys:
        f.file_level = share.owns(keys[0])
    else:
        f.file_level = share.owns(stable_name(f.path, root))
    kept.sort(key=lambda e: (-int(e.get("weight", 1)), e["index"]))
    f.pending = [e["index"] for e in kept]
    f.weights = {e["index"]: max(1, int(e.get("weight", 1))) for e in kept}


class _Run:
    """The analysis phase: hands out chunks of launches, heaviest files first (plain order otherwise),
    then lends idle workers to launches whose configs run long. Where the workers pay each installed
    package's import themselves, a worker keeps to the packages it imported (affinity.py)."""

    def __init__(self, files: list[_File], n_workers: int, join_after: float, shared: bool = False) -> None:
        self.fresh = sorted(files, key=lambda f: (-f.weight, f.order))
        self.started: list[_File] = []
        self.n = n_workers
        self.join_after = join_after
        self.active: list[_Unit] = []  # handed out, not back yet
        self.tokens = itertools.count()
        self.lock = threading.Condition()
        self.affinity = Affinity(shared)

    def next(self, worker: Worker, last: _File | None) -> _Unit | None:
        """The next unit for `worker`: a slow launch to help with, else launches not handed out yet;
        None once nothing is left and nothing is running (an idle worker waits while others work)."""
        with self.lock:
            while True:
                folders: dict[str, dict[int, LaunchClaims]] = {}  # each claims folder read once a pass
                unit = self._join(worker, folders) or self._take(worker, last, must=not self.active)
                if unit is not None:
                    self.active.append(unit)
                    return unit
                if not self.active:
                    return None
                self._stop_idle_helpers(folders)
                self.lock.wait(POLL)

    def _take(self, worker: Worker, last: _File | None, must: bool) -> _Unit | None:
        """Launches not handed out yet: more of the file it analysed last, else those of a started file
        nobody is analysing (its worker went to help with a slow launch), else an unstarted file, else
        launches of the started file with most left; None when nothing is left, or when all that is
        left is of packages others imported and this worker's import would not pay (unless `must`)."""
        if last is not None and last.pending:
            f = last  # the module this worker imported already
        else:
            found = self._started(worker, alone=True) or self._fresh(worker, False) or self._started(worker)
            if found is None and must:
                found = self._fresh(worker, True) or self._started(worker, must=True)
            if found is None:
                return None
            f = found
        opens = self.affinity.hold(id(worker), f.package)
        if f.whole:
            return _Unit(f, None, f.file_level, worker, self._token(), opens=opens)
        size = max(1, math.ceil(len(f.pending) / self.n))
        chunk, f.pending = f.pending[:size], f.pending[size:]
        first = f.file_level and not f.handed_file_level
        f.handed_file_level = f.handed_file_level or first
        return _Unit(f, chunk, first, worker, self._token(), opens=opens)

    def _fresh(self, worker: Worker, must: bool) -> _File | None:
        if not self.fresh:
            return None
        i = self.affinity.choose(id(worker), [(s.package, s.weight) for s in self.fresh], must)
        if i is None:
            return None
        f = self.fresh.pop(i)
        self.started.append(f)
        return f

    def _started(self, worker: Worker, alone: bool = False, must: bool = False) -> _File | None:
        """A started file with launches left, the most weight left first (one heavy launch left
        outweighs many light ones: taken last, it would end the run last). `alone`: only one that no
        unit is analysing and that costs this worker no import (taken before unstarted files: it was
        started because it weighed most). Looked at whether or not unstarted files are left: a worker
        must not wait while a module of a package it imported has launches nobody took."""
        running = {id(u.file) for u in self.active} if alone else set()
        busy = sorted(
            (
                s
                for s in self.started
                if s.pending and id(s) not in running and (not alone or self.affinity.free(id(worker), s.package))
            ),
            key=lambda s: -s.weight_left,
        )
        if not busy:
            return None
        i = self.affinity.choose(id(worker), [(s.package, s.weight_left) for s in busy], must)
        return None if i is None else busy[i]

    def _join(self, worker: Worker, folders: dict[str, dict[int, LaunchClaims]]) -> _Unit | None:
        """A helper's unit: a running launch whose newest claim is `join_after` old (its configs are
        slow), or whose unclaimed configs would take `join_after` more at the pace of its claimed ones
        (many configs, each quick: twelve of 1.6 s are 19 s for one worker) where this worker holds
        its package (a helper that arrives after the last claim is stopped, and a stopped worker
        loses what it imported), with more configs unclaimed than it has helpers on their way to a
        first claim (one at a time where its worker has not said how many configs it has)."""
        if self._stranding(worker):
            return None
        now = time.time()
        # a launch of a package this worker imported first: joining it costs no import
        for unit in sorted(self.active, key=lambda u: not self.affinity.free(id(worker), u.file.package)):
            f = unit.file
            if f.claims is None or unit.chunk is None:
                continue
            claimed = _read(f.claims, folders)
            for i in unit.chunk:
                seen = claimed.get(i, NOTHING)
                if seen.finished or not seen.count:
                    continue
                slow = now - seen.newest >= self.join_after
                # quick configs: only a worker that imports nothing for them gets there in time
                paced = (
                    now - seen.oldest >= self.join_after
                    and seen.left_seconds(now) >= self.join_after
                    and self.affinity.free(id(worker), f.package)
                )
                if not slow and not paced:
                    continue
                helpers = [u for u in self.active if u.file is f and u.joined == i]
                if sum(u.token not in seen.tokens for u in helpers) >= seen.unclaimed():
                    continue  # enough are importing the module or binding: wait for their claims
                opens = self.affinity.hold(id(worker), f.package)
                return _Unit(f, [i], False, worker, self._token(), joined=i, opens=opens)
        return None

    def _stranding(self, worker: Worker) -> bool:
        """`worker` alone holds a package with launches not handed out: were it to help with another's
        slow launch, nobody else would pay that package's import for what is left, and those
        launches would wait for the slow one to end (the run's tail, not its middle)."""
        if self.affinity.shared:
            return False
        left = [f for f in self.started if f.pending] + self.fresh  # a started whole file was handed out
        mine = {f.package for f in left if f.package is not None}
        return any(self.affinity.free(id(worker), p) and self.affinity.holders(p) == 1 for p in mine)

    def _stop_idle_helpers(self, folders: dict[str, dict[int, LaunchClaims]]) -> None:
        """Stop each helper whose launch has every config claimed while it has claimed none: it can
        only answer nothing, and the run would wait for its import of the module. Under the lock, so
        the stop reaches this request: the helper's thread takes its next one only through `next`."""
        for unit in self.active:
            if unit.joined is None or unit.dropped or unit.file.claims is None:
                continue
            seen = _read(unit.file.claims, folders).get(unit.joined, NOTHING)
            if seen.finished and unit.token not in seen.tokens and "" not in seen.tokens:
                unit.dropped = True
                unit.worker.cancel()
                self.affinity.forget(id(unit.worker))

    def _replaced(self, worker: Worker, f: _File) -> None:
        """`worker`'s process crashed, timed out or was retired during its part: the packages that
        process imported went with it. A process that took over within the part (to finish the file's
        launches) imported this file's module, and holds its package only."""
        self.affinity.forget(id(worker))
        if worker.alive():
            self.affinity.hold(id(worker), f.package)

    def _token(self) -> str:
        return f"p{next(self.tokens)}"

    def loop(self, worker: Worker, root: Path, config_file: str | None, settings: Settings) -> None:
        last = None
        while True:
            unit = self.next(worker, last)
            if unit is None:
                return
            f, chunk = unit.file, unit.chunk
            claims = Claims(f.claims, unit.token) if f.claims is not None and chunk is not None else None
            process = worker.pid()
            try:
                result, by_index = worker.analyze_parts(
                    f.path, root, config_file, settings, chunk, unit.first, claims=claims
                )
                by_index = {**_unanswered(f, chunk, result, by_index), **by_index}
            except Exception as exc:  # noqa: BLE001 - a bug of ours costs these launches a TL050, never silence
                result, by_index = _failed_part(f, chunk, f"{type(exc).__name__}: {exc}")
            with self.lock:
                self.active.remove(unit)
                if worker.pid() != process or not worker.alive():
                    self._replaced(worker, f)
                if chunk is not None and unit.joined is None:  # a helper's time says how long it waited, not a pace
                    weight = sum(f.weights.get(i, 1) for i in chunk)
                    self.affinity.record(f.package, time.monotonic() - unit.since, weight, unit.opens, worker.last_import)
                if unit.dropped:
                    by_index = _lost(unit)
                    result = FileResult(result.path)
                f.parts.append((unit.first, result, by_index))
                self.lock.notify_all()
            last = f


def _read(folder: str, folders: dict[str, dict[int, LaunchClaims]]) -> dict[int, LaunchClaims]:
    """`read_claims(folder)`, listed once per pass of an idle worker however many units share it."""
    if folder not in folders:
        folders[folder] = read_claims(folder)
    return folders[folder]


def _lost(unit: _Unit) -> Answers:
    """A stopped helper's answers: none, unless a claim of its shows up after all (then that config went
    unanswered, and its launch says so with a TL050 rather than look checked)."""
    assert unit.joined is not None and unit.file.claims is not None
    if unit.token not in read_claims(unit.file.claims).get(unit.joined, NOTHING).tokens:
        return {}
    why = "a helper worker was stopped while it held a config of this launch; that config was not analysed"
    return {unit.joined: _crashed(unit.file, unit.joined, why)}


def _entry(f: _File, index: int) -> tuple[str, int]:
    for e in (f.plan or {}).get("launches", []):
        if e["index"] == index:
            return str(e["kernel"]), int(e["line"])
    return "?", 1


def _crashed(f: _File, index: int, why: str) -> list[tuple[int, LaunchResult]]:
    kernel, line = _entry(f, index)
    return [(UNANSWERED, LaunchResult(kernel, line, {}, "crashed", diagnostics=(Diagnostic("TL050", why, line, 1),)))]


def _unanswered(f: _File, chunk: list[int] | None, result: FileResult, by_index: Answers) -> Answers:
    """A TL050 for each launch of the chunk that came back without results, unless the part says why
    (an import error, a failed worker): never a launch that silently went unanalysed (the file may
    have changed between its plan and its analysis)."""
    if chunk is None or any(d.code in ("TL010", "TL050") for d in result.diagnostics):
        return {}
    why = "this launch was not analysed (did the file change while it was checked?)"
    return {i: _crashed(f, i, why) for i in chunk if i not in by_index}


def _failed_part(f: _File, chunk: list[int] | None, why: str) -> tuple[FileResult, Answers]:
    message = f"the analysis failed: {why}"
    if chunk is None:
        return FileResult(f.plan["path"] if f.plan else str(f.path), (), (Diagnostic("TL050", message, 1, 1),)), {}
    return FileResult(f.plan["path"] if f.plan else str(f.path)), {i: _crashed(f, i, message) for i in chunk}


def _assemble(f: _File) -> tuple[FileResult, tuple[int, ...]]:
    """The file's result from its parts, and the declared index of each launch result in it."""
    if not f.parts:
        name = f.plan["path"] if f.plan else os.path.basename(f.path)
        return FileResult(name, (), ()), ()
    parts = sorted(f.parts, key=lambda p: not p[0])  # the part with the file's own diagnostics first
    by_index: Answers = {}
    diags: list[Diagnostic] = []
    for _, result, found in parts:
        for i, answers in found.items():
            by_index.setdefault(i, []).extend(answers)  # a shared launch comes in several parts
        diags += [d for d in result.diagnostics if d not in diags]
    for answers in by_index.values():
        answers.sort(key=lambda a: a[0])  # config order, whichever worker answered (stable: TL050s last)
    if f.whole:
        result = parts[0][1]
        index = tuple(i for i in sorted(by_index) for _ in by_index[i])
        return result, index if len(index) == len(result.launches) else ()
    launches = tuple(r for i in sorted(by_index) for _, r in by_index[i])
    path = next((p[1].path for p in parts if p[1].path), f.plan["path"] if f.plan else "")
    located = {k: v for _, result, _ in parts for k, v in result.absolute_paths.items()}
    sources = tuple(sorted({s for _, result, _ in parts for s in result.sources}))
    return (
        FileResult(path, launches, tuple(diags), located, sources),
        tuple(i for i in sorted(by_index) for _ in by_index[i]),
    )


def _each(workers: list[Worker], loop: Callable[[Worker], None]) -> None:
    """Run `loop(worker)` in one thread per worker, until every loop returns."""
    if len(workers) == 1:
        loop(workers[0])
        return
    threads = [threading.Thread(target=loop, args=(w,), daemon=True) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
