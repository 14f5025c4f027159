"""`pytest --tilelens`: the launches a test run makes, checked after the session, each finding naming its tests.

Shipped as a `pytest11` entry point and inert unless `--tilelens` is given. With it, every process that
runs tests (pytest-xdist workers included) loads capture's hook (`api.Recorder`) and records each Triton
launch as it happens, remembering which test made it; nothing is analysed while tests run. At the end
of the session the controller merges the records, writes each distinct launch as the `[[launch]]`
table `tilelens-lsp capture` would write, and runs `tilelens-lsp check` on those tables in its worker
processes (`--tilelens-jobs`). The summary prints each finding as `check` does, with the launches and
tests behind it; findings of error severity fail the session (`--tilelens-fail-on`).
It does not change what a test computes, and it imports neither Triton nor the analysis into the
test processes.
"""

from __future__ import annotations

import bisect
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

OUTSIDE = "(outside any test)"
CHILD = "(a child process of the run)"
FAIL_ON = ("error", "refused", "never")
_STASH = "tilelens"  # the key of a worker's records in xdist's workeroutput


def pytest_addoption(parser) -> None:
    group = parser.getgroup("tilelens", "static checks of the Triton launches the tests make (tilelens-lsp)")
    group.addoption(
        "--tilelens",
        action="store_true",
        default=False,
        help="record every Triton launch the tests make and check each distinct one after the session",
    )
    group.addoption(
        "--tilelens-jobs", type=int, default=1, metavar="N", help="check in N parallel worker processes (default 1)"
    )
    group.addoption(
        "--tilelens-fail-on",
        choices=FAIL_ON,
        default="error",
        help="error (default): fail the session on error-severity findings or a failed analysis "
        "(TL050), as `check` exits 1; refused: also on any launch not analysed (TL030); "
        "never: report only",
    )
    group.addoption(
        "--tilelens-save",
        type=Path,
        metavar="FILE",
        help="add the recorded launches to FILE as [[launch]] tables (capture's writer; "
        "launches it holds are not written again)",
    )
    group.addoption(
        "--tilelens-json",
        type=Path,
        metavar="FILE",
        help="write the `check --format json` document, each launch with its tests, to FILE",
    )
    group.addoption(
        "--tilelens-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds per config of a launch (and per import) before the check's worker is replaced (check --timeout)",
    )
    group.addoption("--tilelens-python", metavar="PYTHON", help="interpreter of the check's workers (default: this one)")
    group.addoption(
        "--tilelens-per-kernel",
        type=int,
        default=0,
        metavar="N",
        help="check at most N distinct launches per kernel, the first recorded (default: all)",
    )


def pytest_configure(config) -> None:
    if config.getoption("tilelens"):
        config.pluginmanager.register(Session(config), "tilelens-session")


# ---------------------------------------------------------------- recording


@dataclass
class Launches:
    """Distinct records (the hook's JSON line, as text) and the tests that made each, in first-seen order."""

    tests: dict[str, list[str]] = field(default_factory=dict)
    unrecorded: int = 0  # launches the hook could not record

    def add(self, record: str, nodeids) -> None:
        known = self.tests.setdefault(record, [])
        known.extend(n for n in nodeids if n not in known)

    def to_json(self) -> str:
        return json.dumps({"records": list(self.tests.items()), "unrecorded": self.unrecorded})

    def merge_json(self, text: str) -> None:
        data = json.loads(text)
        for record, nodeids in data["records"]:
            self.add(record, nodeids)
        self.unrecorded += data["unrecorded"]


class Session:
    """One process's plugin state: the recorder and which bytes of its record file each test wrote."""

    def __init__(self, config) -> None:
        from tilelens_lsp.api import Recorder  # lazy: only a run with --tilelens pays for it

        self.config = config
        self.recorder = Recorder()
        self.recorder.install()
        self.spans: list[tuple[int, int, str]] = []  # (first byte, end byte, nodeid)
        self.launches = Launches()
        self.outcome: Outcome | None = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        start = self.recorder.position()
        yield
        self.spans.append((start, self.recorder.position(), item.nodeid))

    def collect_own(self) -> None:
        """This process's records (and those of child processes it ran under the hook), with their tests."""
        own = self.recorder.own_file
        for path in self.recorder.files():
            for offset, record in self.recorder.read(path):
                text = json.dumps(record, sort_keys=True)
                self.launches.add(text, [self._test_at(offset)] if path == own else [CHILD])
        self.launches.unrecorded += self.recorder.failures()

    def _test_at(self, offset: int) -> str:
        """The test whose span holds `offset` (spans follow one another in the file, in order)."""
        at = bisect.bisect_right(self.spans, (offset, float("inf"), "")) - 1
        if at >= 0 and self.spans[at][0] <= offset < self.spans[at][1]:
            return self.spans[at][2]
        return OUTSIDE

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        """xdist's controller: a worker finished; keep its records."""
        data = getattr(node, "workeroutput", {}).get(_STASH)
        if data:
            self.launches.merge_json(data)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session, exitstatus) -> None:
        self.collect_own()
        self.recorder.close()
        if hasattr(self.config, "workerinput"):  # an xdist worker: the controller checks
            self.config.workeroutput[_STASH] = self.launches.to_json()
            return
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            self.outcome = Outcome(problem="the run was interrupted: nothing checked")
            return
        self.outcome = check(self.launches, self.config)
        if self.outcome.fails(self.config.getoption("tilelens_fail_on")) and session.exitstatus in (0, 5):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if self.outcome is not None:
            terminalreporter.write_sep("=", "tilelens")
            for line in summary(self.outcome, config.getoption("tilelens_fail_on")):
                terminalreporter.write_line(line)


# ---------------------------------------------------------------- checking


@dataclass
class Checked:
    """One distinct launch: its table (paths absolute), its tests, the hook's record, its results."""

    table: dict
    tests: list[str]
    record: dict
    results: list = field(default_factory=list)  # its LaunchResults, once checked


@dataclass
class Outcome:
    launches: list[Checked] = field(default_factory=list)
    recorded: int = 0  # distinct records (before tables merge alike ones)
    unrecorded: int = 0  # launches the hook could not record
    not_written: list[str] = field(default_factory=list)
    capped: int = 0
    findings: list = field(default_factory=list)  # (FileResult, Diagnostic, [Checked]) of every verdict
    exit_code: int = 0  # `check`'s
    problem: str = ""  # why `check` could not run (its exit 2)
    seconds: float = 0.0
    saved: str = ""

    def fails(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        if self.problem or self.exit_code:
            return True
        # refused: every launch decided, so also one that could not be recorded or written as a table
        undecided = self.unrecorded or self.not_written or any(d.code == "TL030" for _, d, _ in self.findings)
        return fail_on == "refused" and bool(undecided)


def check(launches: Launches, config) -> Outcome:
    """Write the distinct launches as tables, check them as `tilelens-lsp check --config` does, and
    attach each result to its launch and tests."""
    from tilelens_lsp.api import anywhere, table_key, table_of  # lazy, as in Session

    started = time.monotonic()
    root = Path(str(config.rootpath)).resolve()
    per_kernel = config.getoption("tilelens_per_kernel")
    out = Outcome(unrecorded=launches.unrecorded)
    by_key: dict[tuple, Checked] = {}
    per: dict[tuple, int] = {}
    tabled = []
    for text, nodeids in launches.tests.items():
        record = json.loads(text)
        out.recorded += 1
        table, why = table_of(record, root)
        if table is None:
            out.not_written.append(f"{record.get('kernel')} (tests {', '.join(sorted(nodeids)[:3])}): {why}")
        else:
            tabled.append((table_key(table), table, record, nodeids))
    # in the order of file and launch text, not of arrival: -n 2 checks (and caps) what -n 0 does
    for key, table, record, nodeids in sorted(tabled, key=lambda t: (t[0], t[1]["launch"])):
        if key in by_key:
            by_key[key].tests.extend(n for n in nodeids if n not in by_key[key].tests)
            continue
        kernel = (key[0], record.get("kernel"))
        if per_kernel and per.get(kernel, 0) >= per_kernel:
            out.capped += 1
            continue
        per[kernel] = per.get(kernel, 0) + 1
        by_key[key] = Checked(anywhere(table, root), list(nodeids), record)
    out.launches = list(by_key.values())
    for c in out.launches:
        c.tests.sort()
    save = config.getoption("tilelens_save")
    if save is not None:
        out.saved = _save(save, [c.record for c in out.launches])
    if out.launches:
        _run_check(out, root, config)
    out.seconds = time.monotonic() - started
    return out


def _save(path: Path, records: list[dict]) -> str:
    from tilelens_lsp.api import table_of
    from tilelens_lsp.capture import runner

    path = path.resolve()
    tables = [t for t, _ in (table_of(r, path.parent) for r in records) if t is not None]
    written = runner.write(path, tables, merge=True)
    return f"{written} launch table(s) added to {path} ({len(tables) - written} already there)"


def _check_argv(toml: Path, root: Path, config) -> list[str]:
    argv = [
        "check",
        "--config",
        str(toml),
        "--root",
        str(root),
        "--format",
        "json",
        "--jobs",
        str(max(1, config.getoption("tilelens_jobs"))),
    ]
    if config.getoption("tilelens_timeout"):
        argv += ["--timeout", str(config.getoption("tilelens_timeout"))]
    if config.getoption("tilelens_python"):
        argv += ["--python", config.getoption("tilelens_python")]
    return argv


def _run_check(out: Outcome, root: Path, config) -> None:
    """`tilelens-lsp check --config TOML --format json` on the launches' tables, in this process (its
    workers are processes of their own); its document, each launch given its tests, is what
    `--tilelens-json` writes."""
    from tilelens_lsp.api import write_check_toml
    from tilelens_lsp.cli.main import main as cli
    from tilelens_lsp.launches.toml import files_in_config
    from tilelens_lsp.model import FileResult

    folder = Path(tempfile.mkdtemp(prefix="tilelens-pytest-"))
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        toml = folder / "tilelens-pytest.toml"
        lines = write_check_toml(toml, [c.table for c in out.launches], sorted({c.record["file"] for c in out.launches}))
        python = config.getoption("tilelens_python") or sys.executable
        try:
            files = [os.path.realpath(f) for f in files_in_config(toml, python)]
        except ValueError:
            files = []
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            out.exit_code = cli(_check_argv(toml, root, config))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if out.exit_code == 2 or not stdout.getvalue().strip():
        out.problem = (stderr.getvalue().strip() or stdout.getvalue().strip() or "no output")[-2000:]
        return
    document = json.loads(stdout.getvalue())
    by_line = dict(zip(lines, out.launches))
    data_files = document.get("files", [])
    if len(files) != len(data_files):
        files = [""] * len(data_files)  # check analysed other files than the toml names: no file-level match
    for real, data in zip(files, data_files):
        result = FileResult.from_json(data)
        in_file = [c for c in out.launches if os.path.realpath(c.record["file"]) == real]
        for launch, launch_data in zip(result.launches, data.get("launches", [])):
            c = by_line.get(launch.line)
            if c is None or c.record["kernel"] != launch.kernel:
                c = None  # a launch the file declares itself (`# tilelens:`): no test made it
            else:
                c.results.append(launch)
                launch_data["tests"] = c.tests
                launch_data["launch"] = c.table["launch"]
            out.findings.extend((result, d, [c] if c else []) for d in launch.diagnostics)
        for d in result.diagnostics:
            if d.severity == "hint":
                continue  # TL100: a kernel of the file that no test launched
            at = d.stack[0].line if d.stack and d.stack[0].path.endswith(toml.name) else None
            about = [by_line[at]] if at in by_line else in_file if d.code in ("TL010", "TL050") else []
            out.findings.append((result, d, about))
    document["pytest"] = {
        "records": out.recorded,
        "launches": len(out.launches),
        "unrecorded": out.unrecorded,
        "not_written": out.not_written,
        "capped": out.capped,
    }
    target = config.getoption("tilelens_json")
    if target is not None:
        Path(target).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


# ---------------------------------------------------------------- the summary


def summary(out: Outcome, fail_on: str) -> list[str]:
    from tilelens_lsp.cli.report import diagnostic_path

    lines = []
    if out.problem:
        lines.append(f"tilelens: the check could not run: {out.problem}")
    groups: dict[tuple, tuple] = {}
    for result, d, launches in out.findings:
        where = f"{diagnostic_path(result, d)}:{d.line}:{d.column}"
        key = (where, d.severity, d.message, d.code)
        _, _, known = groups.setdefault(key, (result, d, []))
        known.extend(c for c in launches if c not in known)
    for (where, severity, message, code), (_, _, launches) in sorted(groups.items(), key=_order):
        lines.append(f"{where}: {severity}: {message} [{code}]")
        for c in launches[:3]:
            lines.append(f"    launch: {c.table['launch']}")
        if len(launches) > 3:
            lines.append(f"    ... and {len(launches) - 3} more launch(es)")
        tests: list[str] = []
        for c in launches:
            tests.extend(t for t in c.tests if t not in tests)
        if tests:
            lines.append(f"    tests: {', '.join(tests[:5])}" + (f" (+{len(tests) - 5} more)" if len(tests) > 5 else ""))
    for why in out.not_written[:10]:
        lines.append(f"tilelens: not checked: {why}")
    if out.unrecorded:
        lines.append(
            f"tilelens: {out.unrecorded} launch(es) could not be recorded (an argument that is neither "
            "a tensor nor a number the launch grammar can write): not checked"
        )
    if out.saved:
        lines.append(f"tilelens: {out.saved}")
    severities = [d.severity for _, d, _ in out.findings]
    verdict = "FAILED" if out.fails(fail_on) else "passed"
    lines.append(
        f"tilelens: {out.recorded} distinct record(s), {len(out.launches)} launch(es) checked"
        + (f", {out.capped} past the per-kernel cap" if out.capped else "")
        + f" in {out.seconds:.1f} s: {severities.count('error')} error(s), "
        f"{severities.count('warning')} warning(s), "
        f"{sum(1 for _, d, _ in out.findings if d.code == 'TL030')} refusal(s); "
        f"check exit {out.exit_code if not out.problem else 2}; {verdict} (--tilelens-fail-on {fail_on})"
    )
    return lines


_RANK = {"error": 0, "warning": 1, "information": 2, "hint": 3}


def _order(item) -> tuple:
    (where, severity, message, code), _ = item
    return (_RANK.get(severity, 4), where, code, message)


if __name__ == "__main__":  # pragma: no cover - a plugin, not a program
    sys.exit("tilelens-lsp's pytest plugin: run `pytest --tilelens`")
