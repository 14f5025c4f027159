"""Measure and cross-check `pytest --tilelens` on a real test suite, side by side in one run.

    python tools/bench_pytest_plugin.py time    [--python PY] [--rounds N] -- PYTEST_ARGS...
    python tools/bench_pytest_plugin.py compare [--python PY] [--jobs N] -- PYTEST_ARGS...

`time` runs the same tests, rounds interleaved, with the plugin not loaded (`-p no:tilelens`), loaded
but inactive (no flag), and active (`--tilelens`), and prints the median wall time and the median of
the tests' own time (setup + call + teardown of every test, from JUnit XML: the run's speed without
the start-up and without the check after the session), each as a ratio to the run without the plugin.
`compare` runs `tilelens-lsp capture` + `tilelens-lsp check --config` on the tests, then `pytest
--tilelens` and `pytest --tilelens -n 2`, and prints whether the three agree on the findings (code,
file, line, column, message) and on the exit status. Run it from the test suite's root folder.
Nothing here is a test: it prints figures.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

MODES = {"no plugin (-p no:tilelens)": ["-p", "no:tilelens"], "plugin inactive": [], "--tilelens": ["--tilelens"]}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("TRITON_INTERPRET", "1")
    return env


def _pytest(python: str, args: list[str], extra: list[str]) -> tuple[int, float, str]:
    started = time.monotonic()
    run = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, *args], env=_env(), capture_output=True, text=True
    )
    return run.returncode, time.monotonic() - started, run.stdout + run.stderr


def _test_seconds(junit: Path) -> float:
    return sum(float(case.get("time", 0)) for case in ET.parse(junit).getroot().iter("testcase"))


def run_time(python: str, args: list[str], rounds: int) -> None:
    walls: dict[str, list[float]] = {m: [] for m in MODES}
    tests: dict[str, list[float]] = {m: [] for m in MODES}
    folder = Path(tempfile.mkdtemp(prefix="tilelens-bench-"))
    for r in range(rounds):
        for mode, extra in MODES.items():
            junit = folder / f"{r}-{len(walls[mode])}.xml"
            code, wall, out = _pytest(python, args, extra + ["--junitxml", str(junit)])
            if not junit.exists():
                sys.exit(f"pytest wrote no JUnit XML ({mode}, exit {code}):\n{out[-3000:]}")
            walls[mode].append(wall)
            tests[mode].append(_test_seconds(junit))
            summary = [line for line in out.splitlines() if line.startswith("tilelens")]
            print(
                f"round {r + 1} {mode}: exit {code}, wall {wall:.1f} s, tests {tests[mode][-1]:.2f} s"
                + (f"\n    {summary[-1]}" if summary else ""),
                flush=True,
            )
    base_wall = statistics.median(walls["no plugin (-p no:tilelens)"])
    base_tests = statistics.median(tests["no plugin (-p no:tilelens)"])
    print(f"\n{'mode':<28} {'wall (median)':>14} {'ratio':>6} {'tests (median)':>15} {'ratio':>6}")
    for mode in MODES:
        wall, test = statistics.median(walls[mode]), statistics.median(tests[mode])
        print(f"{mode:<28} {wall:>12.1f} s {wall / base_wall:>6.2f} {test:>13.2f} s {test / base_tests:>6.2f}")


def _findings(document: dict) -> set[tuple]:
    found = set()
    for f in document.get("files", []):
        for d in f.get("diagnostics", []):
            if d["severity"] != "hint":
                found.add((d["code"], f["path"], d["line"], d["column"], d["message"]))
        for launch in f.get("launches", []):
            for d in launch["diagnostics"]:
                found.add((d["code"], f["path"], d["line"], d["column"], d["message"]))
    return {x for x in found if ".toml" not in x[4]}  # toml errors name each run's own toml file


def run_compare(python: str, args: list[str], jobs: int, timeout: float) -> int:
    folder = Path(tempfile.mkdtemp(prefix="tilelens-compare-"))
    toml = Path.cwd() / "tilelens.toml"  # in the tests' root, as a user's capture would write it
    if toml.exists():
        sys.exit(f"{toml} exists; run from a folder without one")
    started = time.monotonic()
    cap = subprocess.run(
        [
            python,
            "-m",
            "tilelens_lsp",
            "capture",
            "--out",
            str(toml),
            "--per-kernel",
            "100000",
            "--",
            python,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:tilelens",
            *args,
        ],
        env=_env(),
        capture_output=True,
        text=True,
    )
    try:
        chk = subprocess.run(
            [
                python,
                "-m",
                "tilelens_lsp",
                "check",
                "--config",
                str(toml),
                "--root",
                str(Path.cwd()),
                "--format",
                "json",
                "--jobs",
                str(jobs),
                "--timeout",
                str(timeout),
            ],
            capture_output=True,
            text=True,
        )
    finally:
        toml.unlink(missing_ok=True)
    print(
        f"capture + check: pytest exit {cap.returncode}, check exit {chk.returncode}, "
        f"{time.monotonic() - started:.0f} s; {cap.stderr.strip().splitlines()[-1] if cap.stderr.strip() else ''}"
    )
    reference = _findings(json.loads(chk.stdout)) if chk.stdout.strip() else set()
    agree = True
    for label, extra in (("pytest --tilelens", []), ("pytest --tilelens -n 2", ["-n", "2"])):
        report = folder / f"{len(extra)}.json"
        code, wall, out = _pytest(
            python,
            args,
            extra
            + [
                "--tilelens",
                "--tilelens-json",
                str(report),
                "--tilelens-jobs",
                str(jobs),
                "--tilelens-timeout",
                str(timeout),
            ],
        )
        found = _findings(json.loads(report.read_text())) if report.exists() else set()
        tail = [line for line in out.splitlines() if line.startswith("tilelens:")]
        print(f"{label}: exit {code}, {wall:.0f} s; {tail[-1] if tail else 'no tilelens summary'}")
        same = found == reference
        expected = cap.returncode if cap.returncode else chk.returncode
        print(
            f"  findings: {len(found)}, same as capture + check: {same}; exit as capture + check say "
            f"({expected}): {code == expected}"
        )
        agree &= same and code == expected
    for code, path, line, column, message in sorted(reference):
        print(f"  {path}:{line}:{column}: {code}: {message[:140]}")
    return 0 if agree else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("time", "compare"))
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=300.0)
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args, rest = parser.parse_args(argv[:cut]), argv[cut + 1 :]
    if args.what == "time":
        run_time(args.python, rest, args.rounds)
        return 0
    return run_compare(args.python, rest, args.jobs, args.timeout)


if __name__ == "__main__":
    raise SystemExit(main())
