"""The server's parts on their own, each built from fakes (no pygls server, no Session, no worker
process): the scheduler with a fake runner on a fake clock, the runner and the worker host with a
fake worker, the progress bars with a fake editor. What they do together with a real client is the
rest of this folder."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tilelens_lsp.lsp.analysis import Analysis, progress
from tilelens_lsp.lsp.analysis import run as run_module
from tilelens_lsp.lsp.analysis.progress import Progress
from tilelens_lsp.lsp.analysis.run import Runner
from tilelens_lsp.lsp.analysis.scheduler import CANCEL_GRACE, DEBOUNCE, MAX_DEBOUNCE, Scheduler
from tilelens_lsp.lsp.analysis.workerhost import WorkerHost
from tilelens_lsp.lsp.state import Doc, Run
from tilelens_lsp.model import Access, Diagnostic, FileResult, LaunchResult, Suggestion
from tilelens_lsp.settings import Settings
from tilelens_lsp.worker.process import Hello

KERNEL = "import triton\n\n@triton.jit\ndef k(x):\n    pass\n"


class FakeEditor:
    def __init__(self, texts: dict[str, str] | None = None) -> None:
        self.texts = texts or {}
        self.logs: list[str] = []
        self.shown: list[str] = []
        self.from_thread: list[Any] = []
        self.bars: list[tuple[str, str, str | None]] = []
        self.progress_support = False
        self.related_support = False

    def text(self, uri: str) -> str:
        return self.texts.get(uri, "")

    def log(self, message: str, kind: Any = None) -> None:
        self.logs.append(message)

    def show(self, message: str, kind: Any = None) -> None:
        self.shown.append(message)

    def run_from_thread(self, coro: Any) -> None:
        self.from_thread.append(coro)
        coro.close()

    async def create_progress(self, token: str) -> None:
        self.bars.append(("create", token, None))

    def begin_progress(self, token: str, title: str, message: str) -> None:
        self.bars.append(("begin", token, message))

    def end_progress(self, token: str, message: str | None = None) -> None:
        self.bars.append(("end", token, message))


# ---------------------------------------------------------------- the scheduler


class FakeRunner:
    """Records the runs the scheduler asks for, each with the (fake) time it was asked at."""

    def __init__(self, clock: "FakeClock", fail: set[str] = frozenset()) -> None:
        self.clock = clock
        self.fail = fail
        self.runs: list[tuple[str, int, float]] = []
        self.current: Run | None = None
        self.cancelled: list[Run] = []

    async def run(self, doc: Doc) -> None:
        self.runs.append((doc.uri, doc.generation, self.clock.now))
        if doc.uri in self.fail:
            raise RuntimeError("boom")

    def in_flight(self) -> Run | None:
        return self.current

    def cancel(self, run: Run) -> None:
        run.cancelled = True
        self.cancelled.append(run)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []
        self.on_sleep = None

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        if self.on_sleep is not None:
            self.on_sleep()
        await asyncio.sleep(0)


def _scheduler(docs: dict[str, Doc], fail: set[str] = frozenset(), editor: FakeEditor | None = None):
    clock = FakeClock()
    runner = FakeRunner(clock, fail)
    return Scheduler(docs, runner, editor or FakeEditor(), clock=clock, sleep=clock.sleep), runner, clock


async def _drive(sched: Scheduler, done, limit: float = 5.0) -> None:
    sched.start()
    deadline = time.monotonic() + limit
    while not done() and time.monotonic() < deadline:
        await asyncio.sleep(0.001)
    sched.stop()
    assert done(), "the scheduler did not get there"


def test_a_burst_of_saves_coalesces_into_one_run_after_a_quiet_moment():
    doc = Doc("file:///a.py", Path("/a.py"))
    sched, runner, clock = _scheduler({doc.uri: doc})
    for step in (0.0, 0.05, 0.04):  # three saves, each within DEBOUNCE of the one before
        clock.now += step
        sched.schedule(doc, "saved")
    last_save = clock.now
    asyncio.run(_drive(sched, lambda: runner.runs))
    assert runner.runs == [(doc.uri, 3, pytest.approx(last_save + DEBOUNCE))]  # the newest generation, once
    assert clock.sleeps == [pytest.approx(DEBOUNCE)]


def test_a_lone_save_runs_at_once():
    doc = Doc("file:///a.py", Path("/a.py"))
    sched, runner, clock = _scheduler({doc.uri: doc})
    sched.schedule(doc, "saved")
    asyncio.run(_drive(sched, lambda: runner.runs))
    assert runner.runs == [(doc.uri, 1, 100.0)] and clock.sleeps == []


def test_a_document_saved_nonstop_still_gets_a_run_every_max_debounce():
    doc = Doc("file:///a.py", Path("/a.py"))
    sched, runner, clock = _scheduler({doc.uri: doc})
    sched.schedule(doc, "saved")
    clock.now += 0.01
    sched.schedule(doc, "saved")  # a burst from here on
    first = doc.pending_since

    def save_again() -> None:
        if not runner.runs:
            sched.schedule(doc, "saved")  # another save during every wait

    clock.on_sleep = save_again
    asyncio.run(_drive(sched, lambda: runner.runs))
    ((_, generation, at),) = runner.runs
    assert at == pytest.approx(first + MAX_DEBOUNCE)
    assert generation == doc.generation > 10


def test_a_new_generation_cancels_an_old_run_in_flight_at_once_and_a_young_one_after_the_grace():
    doc = Doc("file:///a.py", Path("/a.py"))
    sched, runner, clock = _scheduler({doc.uri: doc})
    old = Run(doc.uri, 0, None, "", Path("/a.py"), Path("/"), "a.py", Settings(), started=clock.now - 1.0)
    runner.current = old

    async def scenario() -> None:
        sched.schedule(doc, "saved")
        assert runner.cancelled == [old]
        young = Run(
            doc.uri,
            doc.generation,
            None,
            "",
            Path("/a.py"),
            Path("/"),
            "a.py",
            Settings(),
            started=clock.now - CANCEL_GRACE / 3,
        )
        runner.current = young
        sched.schedule(doc, "saved")
        assert runner.cancelled == [old]  # it may still finish first
        await asyncio.sleep(CANCEL_GRACE)  # (real time: the grace is a timer on the loop)
        assert runner.cancelled == [old, young]  # it did not: its generation is stale

    asyncio.run(scenario())


def test_a_closed_document_is_not_run_and_a_failing_run_does_not_stop_the_loop():
    a, b, c = (Doc(f"file:///{n}.py", Path(f"/{n}.py")) for n in "abc")
    docs = {d.uri: d for d in (a, b, c)}
    editor = FakeEditor()
    sched, runner, _ = _scheduler(docs, fail={a.uri}, editor=editor)
    for d in (a, b, c):
        sched.schedule(d, "opened")
    docs.pop(b.uri)
    sched.forget(b.uri)
    assert not sched.is_pending(b.uri)
    asyncio.run(_drive(sched, lambda: len(runner.runs) == 2))
    assert [uri for uri, _, _ in runner.runs] == [a.uri, c.uri]
    assert any("internal error while analysing file:///a.py" in line for line in editor.logs)


# ---------------------------------------------------------------- the worker host and the runner


class FakeWorker:
    """What the host and the runner use of worker/process.py's Worker, answering from a script."""

    def __init__(self, settings: Settings, triton: str = "3.9.0") -> None:
        self.settings = settings
        self.proc = None
        self.hello: Hello | None = None
        self.last_stats: dict[str, int] | None = None
        self.last_import: float | None = None
        self.triton = triton
        self.analyzed: list[Path] = []
        self.during = None  # called inside analyze (the run is in flight then)
        self.release = threading.Event()
        self.release.set()
        self.cancels = self.stops = 0
        self.dead = False
        self.partials: list[FileResult] = []
        self.result = FileResult(
            "k.py",
            (LaunchResult("k", 4, {}, "analyzed", accesses=(Access("load", 5, 4, "x", "fp32", True, ((0, 4),), True),)),),
        )

    def start(self) -> Hello:
        self.hello = self.hello or Hello(self.triton, "Python 3.11")
        return self.hello

    def request(self, op: str, args: dict, timeout: float) -> dict:
        return {}

    def analyze(self, path: Path, root: Path, settings: Settings, on_partial=None) -> FileResult:
        self.analyzed.append(path)
        if self.during is not None:
            self.during()
        for partial in self.partials:  # what the worker streams before its reply
            if on_partial is not None:
                on_partial(partial)
        self.release.wait(5)
        self.last_stats = {"compiles": 2}
        return self.result

    def suggest(self, path: Path, root: Path, kernels: list[str], settings: Settings) -> list[Suggestion]:
        return [Suggestion(kernels[0], ("# tilelens: launch k[1](x=f32[4])",), tried=1)] if kernels == ["k"] else []

    def cancel(self) -> None:
        self.cancels += 1
        self.release.set()

    def alive(self) -> bool:
        return not self.dead

    def pid(self) -> int:
        return 4242

    def stop(self) -> None:
        self.stops += 1


class FakeSink:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.published: list[tuple[str, list, int | None]] = []
        self.accepted: list[tuple[str, int, FileResult]] = []
        self.previewed: list[tuple[str, int | None, FileResult]] = []
        self.order: list[str] = []

    def publish(self, uri: str, diagnostics: list, version: int | None) -> None:
        self.published.append((uri, diagnostics, version))

    def accept(
        self,
        doc: Doc,
        generation: int,
        version: int | None,
        result: FileResult,
        text: str,
        rel: str,
        root: Path,
        started_ns: int = 0,
    ) -> None:
        self.accepted.append((doc.uri, generation, result))
        self.order.append("accept")

    def preview(self, doc: Doc, version: int | None, partial: FileResult, text: str, rel: str, root: Path) -> None:
        self.previewed.append((doc.uri, version, partial))
        self.order.append("preview")

    async def publish_toml(self, toml: Path, version: int | None = None) -> None:
        self.published.append((toml.as_uri(), ["toml"], version))

    def root_for(self, path: Path) -> Path | None:
        return self.root if self.root in path.parents else None


def _parts(tmp_path: Path, text: str = KERNEL, triton: str = "3.9.0"):
    path = tmp_path / "k.py"
    path.write_text(text)
    doc = Doc(path.as_uri(), path, 1, generation=1)
    docs = {doc.uri: doc}
    editor = FakeEditor({doc.uri: text})
    made: list[FakeWorker] = []

    def new_worker(settings: Settings) -> FakeWorker:
        made.append(FakeWorker(settings, triton))
        return made[-1]

    host = WorkerHost(editor, Settings, new_worker=new_worker)
    sink = FakeSink(tmp_path)
    runner = Runner(docs, host, sink, editor, Settings, Progress(editor))
    return doc, docs, editor, host, sink, runner, made


async def _ready(host: WorkerHost) -> None:
    host.replace()
    await host.lane.submit(lambda: None)  # the warm-up ran in the lane before this
    await asyncio.sleep(0)


def test_a_run_is_analysed_by_the_worker_and_delivered_to_the_sink(tmp_path):
    doc, _, editor, host, sink, runner, made = _parts(tmp_path)

    async def scenario() -> None:
        await _ready(host)
        await runner.run(doc)

    asyncio.run(scenario())
    assert made[0].analyzed == [doc.path]
    assert sink.accepted == [(doc.uri, 1, made[0].result)]
    assert runner.counters == {"runs": 1, "cancelled": 0, "dropped": 0}
    assert host.total("compiles") == 2 and runner.in_flight() is None
    assert any(line.startswith("worker 4242 ready: Triton 3.9.0") for line in editor.logs)


def _finding(line: int) -> LaunchResult:
    return LaunchResult("k", line, {}, "analyzed", diagnostics=(Diagnostic("TL001", "out of bounds", line + 1, 5),))


def test_a_first_run_shows_each_launch_as_it_is_answered_and_a_later_run_publishes_once(tmp_path, monkeypatch):
    monkeypatch.setattr(run_module, "PREVIEW_AFTER", 0.0)
    doc, _, _, host, sink, runner, made = _parts(tmp_path)
    clean = FileResult("k.py", (LaunchResult("k", 4, {}, "analyzed"),))
    one = FileResult("k.py", (clean.launches[0], _finding(9)))

    async def scenario() -> None:
        await _ready(host)
        made[0].partials = [clean, one]
        made[0].result = FileResult("k.py", (*one.launches, _finding(12)))
        await runner.run(doc)
        doc.published = object()  # what the session remembers once a whole result is accepted
        doc.generation += 1
        await runner.run(doc)

    asyncio.run(scenario())
    # the clean first launch shows nothing (an empty list would read as a clean file); the second
    # launch's finding is shown before the whole result; the second run publishes only once
    assert [p for _, _, p in sink.previewed] == [one]
    assert sink.order == ["preview", "accept", "accept"]


def test_a_quick_first_run_publishes_once(tmp_path):
    doc, _, _, host, sink, runner, made = _parts(tmp_path)

    async def scenario() -> None:
        await _ready(host)
        made[0].partials = [FileResult("k.py", (_finding(9),))]
        await runner.run(doc)

    asyncio.run(scenario())  # the fake answers at once: well under PREVIEW_AFTER
    assert sink.previewed == [] and sink.order == ["accept"]


def test_a_partial_of_a_run_gone_stale_is_not_shown(tmp_path, monkeypatch):
    monkeypatch.setattr(run_module, "PREVIEW_AFTER", 0.0)
    doc, _, _, host, sink, runner, made = _parts(tmp_path)

    async def scenario() -> None:
        await _ready(host)
        made[0].partials = [FileResult("k.py", (_finding(9),))]
        made[0].during = lambda: setattr(doc, "generation", 2)  # saved again while it ran
        await runner.run(doc)

    asyncio.run(scenario())
    assert sink.previewed == [] and sink.accepted == []


def test_a_result_of_a_stale_generation_is_dropped(tmp_path):
    doc, _, _, host, sink, runner, made = _parts(tmp_path)

    async def scenario() -> None:
        await _ready(host)
        made[0].during = lambda: setattr(doc, "generation", 2)  # saved again while it ran
        await runner.run(doc)

    asyncio.run(scenario())
    assert sink.accepted == [] and runner.counters["dropped"] == 1


def test_cancelling_the_run_in_flight_kills_the_worker_request_and_drops_the_result(tmp_path):
    doc, _, _, host, sink, runner, made = _parts(tmp_path)

    async def scenario() -> None:
        await _ready(host)
        made[0].release.clear()  # the analysis hangs until cancelled
        task = asyncio.ensure_future(runner.run(doc))
        while runner.in_flight() is None:
            await asyncio.sleep(0.001)
        run = runner.in_flight()
        assert run.uri == doc.uri and run.generation == 1
        runner.cancel(run)
        await task

    asyncio.run(scenario())
    assert made[0].cancels == 1 and runner.counters["cancelled"] == 1
    assert sink.accepted == [] and runner.counters["dropped"] == 1


def test_an_untested_triton_gives_tl040_alone_and_nothing_is_analysed(tmp_path):
    doc, _, _, host, sink, runner, made = _parts(tmp_path, triton="2.1.0")

    async def scenario() -> None:
        await _ready(host)
        await runner.run(doc)

    asyncio.run(scenario())
    ((_, _, result),) = sink.accepted
    assert [d.code for d in result.diagnostics] == ["TL040"] and result.launches == ()
    assert made[0].analyzed == []


def test_what_needs_no_worker_never_reaches_it(tmp_path):
    doc, _, _, host, sink, runner, made = _parts(tmp_path, text="print('no kernel here')\n")
    outside = Doc("file:///elsewhere/x.py", Path(__file__))  # a real file outside the root

    async def scenario() -> None:
        await _ready(host)
        await runner.run(doc)
        await runner.run(outside)

    asyncio.run(scenario())
    assert sink.accepted == [(doc.uri, 1, FileResult("k.py"))]
    assert sink.published == [(outside.uri, [], None)]
    assert made[0].analyzed == [] and runner.counters["runs"] == 0


def test_the_host_adopts_a_prestarted_worker_only_when_it_runs_what_the_settings_ask(tmp_path):
    editor = FakeEditor()
    same = FakeWorker(Settings())
    other = FakeWorker(Settings(interpreter="/nonexistent/python"))
    made: list[FakeWorker] = []

    async def scenario() -> None:
        for prestarted in (same, other):
            host = WorkerHost(
                editor, Settings, prestarted=prestarted, new_worker=lambda s: made.append(FakeWorker(s)) or made[-1]
            )
            await _ready(host)
            assert host.worker is (same if prestarted is same else made[-1])

    asyncio.run(scenario())
    assert len(made) == 1
    deadline = time.monotonic() + 5
    while other.stops == 0 and time.monotonic() < deadline:  # stopped on a thread of its own
        time.sleep(0.01)
    assert other.stops == 1 and same.stops == 0


def test_a_dead_current_worker_asks_for_a_warm_successor_and_suggest_goes_through_the_lane(tmp_path):
    doc, _, editor, host, _, _, made = _parts(tmp_path)

    async def scenario() -> tuple[Suggestion | None, Suggestion | None]:
        await _ready(host)
        made[0].dead = True
        host.after_analysis(made[0])
        assert len(editor.from_thread) == 1  # the successor's warm-up, handed to the event loop
        made[0].dead = False
        return (
            await host.lane.submit(host.suggest, doc.path, tmp_path, "k"),
            await host.lane.submit(host.suggest, doc.path, tmp_path, "nope"),
        )

    found, missing = asyncio.run(scenario())
    assert len(editor.from_thread) == 1
    assert found is not None and found.lines and found.kernel == "k"
    assert missing == Suggestion("nope", error="no kernel named nope in the saved file")
    host.stop()
    assert made[0].stops == 1 and host.worker is None


# ---------------------------------------------------------------- progress, through the facade


def test_a_slow_run_gets_a_progress_bar_and_cancelling_it_cancels_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "PROGRESS_AFTER", 0.0)
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    doc = Doc(path.as_uri(), path, 1)
    editor = FakeEditor({doc.uri: KERNEL})
    editor.progress_support = True
    hang = threading.Event()

    def new_worker(settings: Settings) -> FakeWorker:
        worker = FakeWorker(settings)
        worker.release = hang  # the analysis hangs until its request is killed
        return worker

    analysis = Analysis({doc.uri: doc}, editor, FakeSink(tmp_path), Settings, new_worker=new_worker)

    async def until(predicate) -> None:
        deadline = time.monotonic() + 10
        while not predicate() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    async def scenario() -> None:
        analysis.restart_worker()
        analysis.start()
        analysis.schedule(doc, "opened")
        await until(lambda: any(kind == "begin" for kind, _, _ in editor.bars))
        await until(lambda: analysis.busy_with(doc.uri))  # in flight once the lane has taken it
        assert analysis.busy_with(doc.uri)
        analysis.cancel_token(editor.bars[-1][1])
        await until(lambda: any(kind == "end" for kind, _, _ in editor.bars))
        analysis.stop()

    asyncio.run(scenario())
    assert [kind for kind, _, _ in editor.bars] == ["create", "begin", "end"]
    assert editor.bars[-1][2] == "cancelled"
    stats = analysis.stats()
    assert stats["cancelled"] == 1 and stats["dropped"] == 1 and stats["in_flight"] is None


# ---------------------------------------------------------------- the session and a request answer


class PublishingEditor(FakeEditor):
    def __init__(self, texts: dict[str, str]) -> None:
        super().__init__(texts)
        self.sent: list[tuple[str, list, int | None]] = []

    def publish(self, uri: str, diagnostics: list, version: int | None) -> None:
        self.sent.append((uri, diagnostics, version))

    def units(self, text: str) -> int:
        return len(text.encode("utf-16-le")) // 2

    def cap(self, path: str, default: Any = None) -> Any:
        return default

    def folders(self) -> list[Path]:
        return []


def _session(tmp_path: Path, text: str):
    """A Session over a PublishingEditor with `text` saved as k.py and open at version 3."""
    from tilelens_lsp.lsp.session import Session

    path = tmp_path / "k.py"
    path.write_text(text)
    editor = PublishingEditor({path.as_uri(): text})
    session = Session(editor)
    doc = Doc(path.as_uri(), path, 3, generation=1)
    session.docs[doc.uri] = doc
    return editor, session, doc


def test_the_session_publishes_a_result_and_hover_answers_from_it_without_a_server(tmp_path):
    from lsprotocol import types

    from tilelens_lsp.lsp.features import hovers
    from tilelens_lsp.model import Diagnostic

    editor, session, doc = _session(tmp_path, KERNEL)
    launch = LaunchResult(
        "k",
        4,
        {},
        "analyzed",
        accesses=(Access("load", 5, 4, "x", "fp32", True, ((0, 8),), False, view_numel=4, storage=4),),
        diagnostics=(Diagnostic("TL001", "load of x reads past its end", 5, 4),),
    )
    session.accept(doc, 1, 3, FileResult("k.py", (launch,)), KERNEL, "k.py", tmp_path)
    ((uri, diagnostics, version),) = editor.sent
    assert (uri, version, [d.code for d in diagnostics]) == (doc.uri, 3, ["TL001"])
    assert session.counters["published"] == 1 and doc.published is not None
    answer = hovers.hover(
        session,
        editor,
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=doc.uri), position=types.Position(line=4, character=4)
        ),
    )
    assert answer is not None and "x" in answer.contents.value
    assert (
        hovers.hover(
            session,
            editor,
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri="file:///not/open.py"),
                position=types.Position(line=0, character=0),
            ),
        )
        is None
    )


def test_the_session_previews_a_partial_result_without_remembering_it(tmp_path):

    text = KERNEL.replace("    pass\n", "    pass  # tilelens: ignore[TL001]\n")
    editor, session, doc = _session(tmp_path, text)
    found = LaunchResult("k", 4, {}, "analyzed", diagnostics=(Diagnostic("TL001", "load of x reads past its end", 4, 4),))
    suppressed = LaunchResult("k", 4, {}, "analyzed", diagnostics=(Diagnostic("TL001", "store past its end", 5, 4),))
    session.preview(doc, 3, FileResult("k.py", (suppressed,)), text, "k.py", tmp_path)
    assert editor.sent == []  # everything it shows is suppressed: nothing to publish, nothing looks clean
    session.preview(doc, 3, FileResult("k.py", (found, suppressed)), text, "k.py", tmp_path)
    ((uri, diagnostics, version),) = editor.sent
    assert (uri, version, [d.code for d in diagnostics]) == (doc.uri, 3, ["TL001"])
    assert doc.published is None  # hovers and lenses wait for the whole result


# ---------------------------------------------------------------- a file's launches across a pool


class PoolWorker(FakeWorker):
    """A fake worker that answers the pool's requests: a plan of three launches, and any part of them."""

    started_in: list[str] = []
    pids = itertools.count(5000)

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.own_pid = next(PoolWorker.pids)

    def pid(self) -> int:
        return self.own_pid

    def start(self) -> Hello:
        if self.hello is None:
            PoolWorker.started_in.append(threading.current_thread().name)
        return super().start()

    launches = 3
    meet: threading.Barrier | None = None  # set: each part waits until every worker has one

    def plan(self, path: Path, root: Path, config_file: str | None, settings: Settings) -> dict:
        return {
            "path": "k.py",
            "launches": [
                {"index": i, "kernel": "k", "line": 10 + i, "origin": "directive", "weight": 1} for i in range(self.launches)
            ],
        }

    def analyze_parts(
        self,
        path: Path,
        root: Path,
        config_file: str | None,
        settings: Settings,
        select: list[int] | None,
        file_level: bool,
        claims: object = None,
    ) -> tuple[FileResult, dict[int, list[tuple[int, LaunchResult]]]]:
        self.analyzed.append(path)
        if self.meet is not None:
            self.meet.wait(5)
        self.release.wait(5)
        self.last_stats = {"compiles": len(select or ())}
        parts = {i: [(0, LaunchResult("k", 10 + i, {"i": i}, "analyzed"))] for i in select or ()}
        return FileResult("k.py", tuple(r for i in sorted(parts) for _, r in parts[i])), parts


def test_a_pool_shares_a_files_launches_and_a_cancel_stops_every_worker(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(KERNEL)
    doc = Doc(path.as_uri(), path, 1, generation=1)
    docs = {doc.uri: doc}
    editor = FakeEditor({doc.uri: KERNEL})
    made: list[PoolWorker] = []

    def new_worker(settings: Settings) -> PoolWorker:
        made.append(PoolWorker(settings))
        return made[-1]

    host = WorkerHost(editor, Settings, new_worker=new_worker, pool=2)
    sink = FakeSink(tmp_path)
    runner = Runner(docs, host, sink, editor, Settings, Progress(editor))
    compiles: list[int] = []

    async def scenario() -> None:
        await _ready(host)
        deadline = time.monotonic() + 5
        while made[1].hello is None and time.monotonic() < deadline:  # the helper starts in its own lane
            await asyncio.sleep(0.01)
        meet = threading.Barrier(2)
        for w in made:
            w.meet = meet  # both take a part of the first run
        await runner.run(doc)
        compiles.append(host.total("compiles"))
        for w in made:
            w.release.clear()  # the next run hangs until cancelled
            w.launches = 6  # in three chunks: 3 and 2 at once, then 1
            w.meet = None
            w.analyzed.clear()
        doc.generation = 2
        task = asyncio.ensure_future(runner.run(doc))
        deadline = time.monotonic() + 5
        while not all(w.analyzed for w in made) and time.monotonic() < deadline:  # both are on their part
            await asyncio.sleep(0.001)
        runner.cancel(runner.in_flight())
        await task

    asyncio.run(scenario())
    assert len(made) == 2 and all(w.analyzed for w in made)  # both took launches of the file
    ((_, _, result),) = sink.accepted
    assert [launch.line for launch in result.launches] == [10, 11, 12]  # in declared order, each once
    assert compiles == [3]  # each worker's counters, summed
    assert [w.cancels for w in made] == [1, 1] and runner.counters["cancelled"] == 1
    assert sum(len(w.analyzed) for w in made) == 2  # the chunk left after the cancel was never sent
    assert all(name.startswith("tilelens-lane") for name in PoolWorker.started_in)  # never a passing thread
    host.stop()
    assert all(w.stops >= 1 for w in made)


def test_two_real_workers_give_the_file_the_result_one_worker_gives(tmp_path):
    """The pool path with real worker processes: the launches of one file shared between the worker and
    a helper come back as the one worker's analysis of the whole file (same launches, same verdicts)."""
    from tilelens_lsp.worker.process import Worker

    from .lsphelp import ADD_BUGGY

    two = ADD_BUGGY.replace(
        "# tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)",
        "# tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)\n"
        "# tilelens: add_kernel[(8,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=128)\n"
        "# tilelens: add_kernel[(2,)](fp32[1024], fp32[1024], fp32[1024], 1024, BLOCK=512)",
    )
    path = tmp_path / "add.py"
    path.write_text(two)
    doc = Doc(path.as_uri(), path, 1, generation=1)
    editor = FakeEditor({doc.uri: two})
    made: list[Worker] = []

    def new_worker(settings: Settings) -> Worker:
        made.append(Worker(settings))
        return made[-1]

    host = WorkerHost(editor, Settings, new_worker=new_worker, pool=2)
    sink = FakeSink(tmp_path)
    runner = Runner({doc.uri: doc}, host, sink, editor, Settings, Progress(editor))

    async def scenario() -> FileResult:
        await _ready(host)
        deadline = time.monotonic() + 60
        while made[1].hello is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await runner.run(doc)
        return await host.lane.submit(lambda: made[0].analyze(path, tmp_path, settings=Settings()))

    try:
        alone = asyncio.run(scenario())
    finally:
        host.stop()
    ((_, _, shared),) = sink.accepted
    assert host.total("compiles") > 0 and len(host.stats) == 2  # both workers analysed launches
    key = [(launch.line, launch.grid, launch.status, [d.code for d in launch.diagnostics]) for launch in alone.launches]
    assert [
        (launch.line, launch.grid, launch.status, [d.code for d in launch.diagnostics]) for launch in shared.launches
    ] == key
    # the unmasked load reads past 1000 elements at grid 4 and 8; at 1024 elements with 2 x 512 it fits
    assert [[d.code for d in launch.diagnostics] for launch in alone.launches] == [["TL001"], ["TL001"], []]
