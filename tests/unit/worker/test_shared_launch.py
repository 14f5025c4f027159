"""A launch whose configs run long is shared between workers: each config is claimed by exactly one
of them (claims.py), the parts come back merged in config order, and a helper that arrives when
nothing is left is stopped without costing the launch anything (worker/pool.py)."""

from __future__ import annotations

import os
import textwrap
import threading
import time

from tilelens_lsp.claims import NOTHING, Claims, read_claims
from tilelens_lsp.model import Diagnostic, FileResult, LaunchResult
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.settings import Settings
from tilelens_lsp.worker.pool import analyze_files
from tilelens_lsp.worker.process import Worker

TUNED = textwrap.dedent("""\
    import triton
    import triton.language as tl

    # tilelens: k[(4,)](fp32[1000], 1000)


    @triton.autotune(
        configs=[
            triton.Config({"BLOCK": 64}),
            triton.Config({"BLOCK": 128}),
            triton.Config({"BLOCK": 256}),
            triton.Config({"BLOCK": 128}),
            triton.Config({"BLOCK": 512}),
        ],
        key=["n"],
    )
    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0, mask=offs < n)
        tl.store(x_ptr + offs + 1, 2.0)
""")


def _configs(result: FileResult) -> list[tuple[int, list[str]]]:
    return [(launch.config["BLOCK"], [d.code for d in launch.diagnostics]) for launch in result.launches]


def test_each_config_is_granted_to_one_claimant_and_the_folder_says_who_and_whether_all_are_taken(tmp_path):
    a, b = Claims(str(tmp_path), "a"), Claims(str(tmp_path), "b")
    assert [a.claim(0, 0), b.claim(0, 0), b.claim(0, 1), a.claim(0, 1), a.claim(3, 0)] == [True, False, True, False, True]
    seen = read_claims(str(tmp_path))
    assert seen[0].count == 2 and seen[0].tokens == {"a", "b"} and not seen[0].finished
    assert seen[3].tokens == {"a"}
    assert seen[0].total is None and seen[0].unclaimed() == 1  # unknown: one helper at a time
    a.announce(0, 5)
    (tmp_path / "0.n.half").write_text("")  # a count being written is neither a claim nor a count
    seen = read_claims(str(tmp_path))
    assert seen[0].total == 5 and seen[0].unclaimed() == 3 and seen[0].count == 2
    b.finish(0)
    assert read_claims(str(tmp_path))[0].finished and not read_claims(str(tmp_path))[3].finished
    assert read_claims(str(tmp_path))[0].unclaimed() == 0
    assert Claims.from_json(a.to_json()) == a and Claims.from_json({"folder": 1}) is None


def test_a_launch_answers_only_the_configs_it_claims_and_two_claimants_answer_each_config_once(tmp_path):
    """The repeated config (BLOCK 128 twice) is answered by nobody, as without sharing: both sides
    agree it repeats an earlier specialization."""
    path = tmp_path / "tuned.py"
    path.write_text(TUNED)
    alone = analyze_path(path, tmp_path, Settings())
    assert [block for block, _ in _configs(alone)] == [64, 128, 256, 512]
    folder = tmp_path / "claims"
    folder.mkdir()
    other = Claims(str(folder), "other")
    other.claim(0, 1)
    other.claim(0, 4)
    events: list[tuple[str, dict]] = []
    mine = analyze_path(
        path, tmp_path, Settings(), claims=Claims(str(folder), "me"), on_event=lambda e, f: events.append((e, f))
    )
    assert [block for block, _ in _configs(mine)] == [64, 256]
    # each config is heard as it is answered (the worker's timeout is per config), with its result;
    # the launch's own event then carries only what no config event did
    assert [(e, f.get("config")) for e, f in events if e != "ready"] == [("config", 0), ("config", 2), ("launch", None)]
    assert [(f["configs"], f["results"]) for e, f in events if e == "launch"] == [([], [])]
    assert read_claims(str(folder))[0].finished and read_claims(str(folder))[0].count == 4  # config 3 repeats config 1
    assert read_claims(str(folder))[0].total == 5

    second = tmp_path / "second"
    second.mkdir()
    for config in (0, 2):
        Claims(str(second), "other").claim(0, config)
    rest = analyze_path(path, tmp_path, Settings(), claims=Claims(str(second), "me"))
    assert sorted(_configs(mine) + _configs(rest)) == sorted(_configs(alone))


class ClaimingWorker:
    """A worker as the pool sees it: it answers each launch's configs it can claim, `cost` seconds a
    config; as a helper (configs were claimed before it came) after `warmup` seconds (its import of
    the module, its binding); `cancel` stops it at once."""

    def __init__(self, configs: int, cost: float, warmup: float = 0.0, announce: bool = False) -> None:
        self.configs, self.cost, self.warmup, self.announce = configs, cost, warmup, announce
        self.fork_server = None
        self.last_import: float | None = None
        self.answered: list[int] = []
        self.parts = 0
        self.cancelled = threading.Event()

    def plan(self, path, root, config_file, settings) -> dict:
        return {"path": "k.py", "launches": [{"index": 0, "kernel": "k", "line": 3, "origin": "comment", "weight": 1}]}

    def analyze_parts(self, path, root, config_file, settings, select, file_level, claims=None):
        self.parts += 1
        helper = claims is not None and bool(read_claims(claims.folder))
        if helper and self.cancelled.wait(self.warmup):
            return FileResult("k.py", (), (Diagnostic("TL050", "analysis cancelled", 1, 1),)), {}
        answers = []
        if claims is not None and self.announce:
            claims.announce(0, self.configs)
        for j in range(self.configs):
            if claims is None or claims.claim(0, j):
                time.sleep(self.cost)
                self.answered.append(j)
                answers.append((j, LaunchResult("k", 3, {"j": j}, "analyzed")))
        if claims is not None:
            claims.finish(0)
        return FileResult("k.py", tuple(r for _, r in answers)), {0: answers}

    def cancel(self) -> None:
        self.cancelled.set()

    def pid(self) -> int:
        return id(self)

    def alive(self) -> bool:
        return True

    def stop(self) -> None:
        pass


def test_an_idle_worker_joins_a_launch_whose_configs_run_long_and_the_parts_merge_in_config_order(tmp_path):
    (tmp_path / "k.py").write_text("# a planned file\n")
    workers = [ClaimingWorker(10, 0.1), ClaimingWorker(10, 0.1)]
    (result,) = analyze_files(workers, [tmp_path / "k.py"], tmp_path, None, Settings(), join_after=0.05)  # type: ignore[arg-type]
    assert [launch.config["j"] for launch in result.launches] == list(range(10))  # each config once, in order
    assert all(w.answered for w in workers)  # both took configs of the one launch
    assert sorted(workers[0].answered + workers[1].answered) == list(range(10))


def test_helpers_start_together_when_the_launch_says_how_many_configs_are_left(tmp_path):
    """Each helper takes a while before its first claim (its import of the module): where the count is
    known, as many start at once as there are unclaimed configs, instead of one after another."""
    (tmp_path / "k.py").write_text("# a planned file\n")
    workers = [ClaimingWorker(8, 0.5, warmup=0.6, announce=True) for _ in range(4)]
    (result,) = analyze_files(workers, [tmp_path / "k.py"], tmp_path, None, Settings(), join_after=0.05)  # type: ignore[arg-type]
    assert [launch.config["j"] for launch in result.launches] == list(range(8))
    assert all(w.answered for w in workers), [w.answered for w in workers]  # all four took configs


def test_a_launch_of_many_quick_configs_is_joined_once_what_is_left_would_take_long(tmp_path):
    """Twelve configs of 0.15 s, none reaching the 0.5 s a config must run before a worker joins: at
    the pace of the first claims, what is left takes more than that, so the idle worker joins."""
    (tmp_path / "k.py").write_text("# a planned file\n")
    workers = [ClaimingWorker(12, 0.15, announce=True), ClaimingWorker(12, 0.15, announce=True)]
    (result,) = analyze_files(workers, [tmp_path / "k.py"], tmp_path, None, Settings(), join_after=0.5)  # type: ignore[arg-type]
    assert [launch.config["j"] for launch in result.launches] == list(range(12))
    assert all(w.answered for w in workers), [w.answered for w in workers]


class TwoPackageWorker(ClaimingWorker):
    """A `ClaimingWorker` whose launch has twelve quick configs in package a's module, one in b's."""

    def analyze_parts(self, path, root, config_file, settings, select, file_level, claims=None):
        self.configs = 12 if "pkga" in str(path) else 1
        self.answered_in = getattr(self, "answered_in", set()) | {path.parent.name}
        return super().analyze_parts(path, root, config_file, settings, select, file_level, claims)


def test_a_worker_joins_a_launch_of_quick_configs_only_where_it_holds_the_package(tmp_path):
    """It would pay the import first, arrive after the last claim, and be stopped (losing the import):
    the worker that imported package b only waits for package a's quick configs to finish."""
    files = []
    for package, name in (("pkga", "a1"), ("pkgb", "b1")):
        folder = tmp_path / "lib" / "site-packages" / package
        folder.mkdir(parents=True)
        (folder / f"{name}.py").write_text("# a planned file\n")
        files.append(folder / f"{name}.py")
    workers = [TwoPackageWorker(12, 0.15, announce=True), TwoPackageWorker(12, 0.15, announce=True)]
    analyze_files(workers, files, tmp_path, None, Settings(), join_after=0.5)  # type: ignore[arg-type]
    assert sorted(sorted(w.answered_in) for w in workers) == [["pkga"], ["pkgb"]]  # b's worker never joined a
    assert not any(w.cancelled.is_set() for w in workers)


def test_the_pace_of_a_launchs_claims_says_how_long_its_unclaimed_configs_would_take(tmp_path):
    a = Claims(str(tmp_path), "a")
    assert read_claims(str(tmp_path)) == {} and NOTHING.left_seconds(100.0) == 0.0
    a.announce(0, 10)
    for config in range(3):
        a.claim(0, config)
        os.utime(tmp_path / f"0.{config}", (100.0 + config, 100.0 + config))
    seen = read_claims(str(tmp_path))[0]
    assert (seen.oldest, seen.newest, seen.unclaimed()) == (100.0, 102.0, 7)
    assert seen.left_seconds(103.0) == 3.0 / 3 * 7  # a second a config so far, seven left


def test_without_a_long_config_no_worker_joins(tmp_path):
    (tmp_path / "k.py").write_text("# a planned file\n")
    workers = [ClaimingWorker(4, 0.02), ClaimingWorker(4, 0.02)]
    (result,) = analyze_files(workers, [tmp_path / "k.py"], tmp_path, None, Settings(), join_after=30)  # type: ignore[arg-type]
    assert [launch.config["j"] for launch in result.launches] == [0, 1, 2, 3]
    assert sorted(w.parts for w in workers) == [0, 1]


def test_a_helper_that_arrives_after_the_last_config_is_claimed_is_stopped_and_costs_nothing(tmp_path):
    (tmp_path / "k.py").write_text("# a planned file\n")
    workers = [ClaimingWorker(3, 0.2, warmup=30), ClaimingWorker(3, 0.2, warmup=30)]
    t0 = time.monotonic()
    (result,) = analyze_files(workers, [tmp_path / "k.py"], tmp_path, None, Settings(), join_after=0.05)  # type: ignore[arg-type]
    assert time.monotonic() - t0 < 20  # not held up by the helper's 30 s import
    (late,) = [w for w in workers if w.cancelled.is_set()]  # the helper joined, then was stopped
    assert late.parts == 1 and not late.answered
    assert [launch.config["j"] for launch in result.launches] == [0, 1, 2]
    assert not result.diagnostics and all(launch.status == "analyzed" for launch in result.launches)


def test_two_real_workers_sharing_every_launch_give_the_one_worker_result(tmp_path):
    """The worker protocol end to end (claims in the request, config indices in the stream): with
    helpers joining at once, the merged result is the one worker's, config for config."""
    path = tmp_path / "tuned.py"
    path.write_text(
        TUNED.replace(
            "# tilelens: k[(4,)](fp32[1000], 1000)",
            "# tilelens: k[(4,)](fp32[1000], 1000)\n# tilelens: k[(9,)](fp32[4000], 4000)",
        )
    )
    one, two = [Worker(Settings())], [Worker(Settings()), Worker(Settings())]
    try:
        (alone,) = analyze_files(one, [path], tmp_path, None, Settings())
        (shared,) = analyze_files(two, [path], tmp_path, None, Settings(), join_after=0)
    finally:
        for w in one + two:
            w.stop()
    assert shared.launches == alone.launches and shared.diagnostics == alone.diagnostics
    assert len(alone.launches) == 8 and not any(launch.status == "crashed" for launch in alone.launches)
    assert not [name for name in os.listdir(os.path.dirname(str(tmp_path))) if name.startswith("tilelens-claims-")]


class PackageWorker:
    """A worker of a check over installed packages: each file's launches as `LAUNCHES` plans them
    (name: (launches, seconds each, configs)); a launch with several configs answers only those it
    claims. It logs when each request started and what it asked for."""

    LAUNCHES = {"a1": (2, 0.05, 1), "b1": (1, 0.3, 4), "b2": (1, 0.5, 1), "b3": (1, 0.5, 1)}

    def __init__(self, log: list[tuple[float, str, tuple[int, ...]]]) -> None:
        self.fork_server = None
        self.last_import: float | None = None
        self.log = log

    def plan(self, path, root, config_file, settings) -> dict:
        n, _, _ = self.LAUNCHES[path.stem]
        launches = [{"index": i, "kernel": "k", "line": 3 + i, "origin": "comment", "weight": 5} for i in range(n)]
        return {"path": path.name, "launches": launches}

    def analyze_parts(self, path, root, config_file, settings, select, file_level, claims=None):
        self.log.append((time.monotonic(), path.stem, tuple(select or ())))
        _, cost, configs = self.LAUNCHES[path.stem]
        by_index = {}
        for i in select:
            answers = []
            for j in range(configs):
                if configs == 1 or claims is None or claims.claim(i, j):
                    time.sleep(cost)
                    answers.append((j, LaunchResult("k", 3 + i, {"j": j}, "analyzed")))
            if claims is not None:
                claims.finish(i)
            by_index[i] = answers
        return FileResult(path.name, tuple(r for a in by_index.values() for _, r in a)), by_index

    def cancel(self) -> None:
        pass

    def pid(self) -> int | None:
        return id(self)

    def alive(self) -> bool:
        return True

    def stop(self) -> None:
        pass


def _help_with_b(tmp_path, worker_class) -> tuple[list[tuple[str, tuple[int, ...]]], int]:
    """Two workers of `worker_class` over package a's one file and package b's three, b1's launch slow
    enough to be joined: the order the parts started in, and the index of the part that helped with
    b1's launch (every launch answered, b1's by two workers)."""
    site = tmp_path / "lib" / "site-packages"
    files = []
    for package, names in (("pkga", ["a1"]), ("pkgb", ["b1", "b2", "b3"])):
        (site / package).mkdir(parents=True)
        for name in names:
            (site / package / f"{name}.py").write_text("# a planned file\n")
            files.append(site / package / f"{name}.py")
    log: list[tuple[float, str, tuple[int, ...]]] = []
    workers = [worker_class(log), worker_class(log)]
    results = analyze_files(workers, files, tmp_path, None, Settings(), join_after=0.05)  # type: ignore[arg-type]
    assert [len(r.launches) for r in results] == [2, 4, 1, 1]
    order = [(stem, select) for _, stem, select in sorted(log)]
    assert order.count(("b1", (0,))) == 2, order  # a worker did help with b's slow launch
    return order, len(order) - 1 - order[::-1].index(("b1", (0,)))


def test_the_only_worker_holding_a_package_with_launches_left_takes_them_before_helping_another(tmp_path):
    """Package a's module is started by one worker; when its first launch is done, package b's launch
    has run long enough to be joined. That worker alone imported package a, so nobody else would take
    a's second launch without paying the import: it takes that launch first, and helps with b's only
    once a has nothing left (as the run's end would otherwise wait on a's launch behind b's)."""
    order, helped = _help_with_b(tmp_path, PackageWorker)
    assert order.index(("a1", (1,))) < helped, order


class CrashingPackageWorker(PackageWorker):
    """A `PackageWorker` whose process dies once it has answered a1's first launch (a crash, a timeout
    or a retirement): none is running until its next part starts another."""

    def __init__(self, log: list[tuple[float, str, tuple[int, ...]]]) -> None:
        super().__init__(log)
        self.process: int | None = 1

    def analyze_parts(self, path, root, config_file, settings, select, file_level, claims=None):
        if self.process is None:
            self.process = 2  # a fresh process, which imports what this part needs
        found = super().analyze_parts(path, root, config_file, settings, select, file_level, claims)
        if (path.stem, tuple(select or ())) == ("a1", (0,)):
            self.process = None
        return found

    def pid(self) -> int | None:
        return self.process

    def alive(self) -> bool:
        return self.process is not None


def test_a_worker_whose_process_was_replaced_no_longer_holds_its_packages(tmp_path):
    """The stranding case above, but the a worker's process died with a1's first launch: the package
    it imported went with it, so that worker strands nothing by helping with b's slow launch, and
    does (a1's second launch pays the import whoever takes it)."""
    order, helped = _help_with_b(tmp_path, CrashingPackageWorker)
    assert helped < order.index(("a1", (1,))), order


class WeighedWorker(PackageWorker):
    """A `PackageWorker` whose plan gives each file's launches their own weight: (launches, seconds
    each, weight each)."""

    LAUNCHES = {"a": (2, 0.6, 50), "b": (4, 0.6, 1), "c": (1, 0.05, 1)}

    def plan(self, path, root, config_file, settings) -> dict:
        n, _, weight = self.LAUNCHES[path.stem]
        launches = [{"index": i, "kernel": "k", "line": 3 + i, "origin": "comment", "weight": weight} for i in range(n)]
        return {"path": path.name, "launches": launches}

    def analyze_parts(self, path, root, config_file, settings, select, file_level, claims=None):
        self.log.append((time.monotonic(), path.stem, tuple(select or ())))
        _, cost, _ = self.LAUNCHES[path.stem]
        time.sleep(cost * len(select))
        answers = {i: [(0, LaunchResult("k", 3 + i, {}, "analyzed"))] for i in select}
        return FileResult(path.name, tuple(r for a in answers.values() for _, r in a)), answers


def test_a_worker_with_nothing_of_its_own_left_takes_the_started_file_with_most_weight_left(tmp_path):
    """File a's second launch (weight 50) and file b's last two (weight 1 each) are left while their
    files run: the worker done with file c takes a's, which would otherwise end the run last."""
    files = []
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text("# a planned file\n")
        files.append(tmp_path / f"{name}.py")
    log: list[tuple[float, str, tuple[int, ...]]] = []
    workers = [WeighedWorker(log) for _ in range(3)]
    analyze_files(workers, files, tmp_path, None, Settings(), join_after=30)  # type: ignore[arg-type]
    order = [(stem, select) for _, stem, select in sorted(log)]
    assert sorted(order[:3]) == [("a", (0,)), ("b", (0, 1)), ("c", (0,))], order
    assert order[3] == ("a", (1,)), order
