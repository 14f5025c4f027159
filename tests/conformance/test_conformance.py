"""The footprint client against Triton's own interpreter, access by access.

For every declared launch of every corpus kernel (each autotune config on its own), the elements
that `tilelens_lsp` says each load/store/atomic touches must equal what `TRITON_INTERPRET=1` touched
(`oracle.py`), keyed by (op, file name, line, pointer). A refused launch is counted by kind, never
compared; an inexact access must cover the interpreter's elements. The bug corpus checks that the
expected verdict lands on the expected line.
"""

from __future__ import annotations

import os
import re
import traceback
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest

from tests.support.footprints import compare, config_matches, difference
from tests.support.oracle_runner import REPO_ROOT, corpus_files
from tilelens_lsp.engines import select
from tilelens_lsp.launches.scanner import parse_directives
from tilelens_lsp.model import FileResult
from tilelens_lsp.pipeline import analyze_path

HERE = Path(__file__).resolve().parent
BUGS_DIR = HERE / "bugs"
FALSE_ALARMS = {"TL001", "TL003", "TL004", "TL005"}  # the corpus kernels are correct: these would be wrong


# ---------------------------------------------------------------- the two sides


def _launch_params():
    params = []
    for path in corpus_files():
        launches, _ = parse_directives(path.read_text())
        for launch in launches:
            params.append(pytest.param(path, launch.line, id=f"{path.name}:{launch.line}"))
    return params


ENGINES_BY_FILE: dict[Path, Counter] = {}  # which engine answered each launch of a corpus file


@lru_cache(maxsize=None)
def _analyze(path: Path) -> FileResult | str:
    # both engines answer every launch the affine summary covers and must agree (a disagreement is a
    # TL050 on the launch); the interpreter then checks whichever answered
    saved = os.environ.get(select.ENGINE_ENV)
    os.environ[select.ENGINE_ENV] = "compare"
    before = Counter(select.ENGINES)
    try:
        return analyze_path(path, workspace_root=REPO_ROOT)
    except Exception:  # a product crash fails every launch of the file, with its traceback's tail
        return traceback.format_exc(limit=-6)
    finally:
        ENGINES_BY_FILE[path] = Counter(select.ENGINES) - before
        if saved is None:
            os.environ.pop(select.ENGINE_ENV, None)
        else:
            os.environ[select.ENGINE_ENV] = saved


def expected_refusals(path: Path) -> set[str]:
    """Refusal kinds a corpus file declares with `# expect-refusal: KIND` (e.g. a gather's address)."""
    kinds: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("# expect-refusal:"):
            kinds.update(k.split()[0] for k in line.split(":", 1)[1].split("(")[0].split(",") if k.strip())
    return kinds


def product_result(path: Path) -> FileResult:
    result = _analyze(path)
    if isinstance(result, str):
        pytest.fail(f"analyze_path({path.name}) raised:\n{result}", pytrace=False)
    return result


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_corpus_directives_parse(path):
    launches, errors = parse_directives(path.read_text())
    assert not errors, [f"line {e.line}: {e.message}" for e in errors]
    assert launches, "a corpus kernel file declares at least one launch"


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: p.name)
def test_directives_agree_with_an_independent_reading(path):
    """Oracle and product share the product's LaunchSpecs; a second, independent reading of the
    directives (the test-only parser) guards against both sides inheriting one misreading."""
    import ast

    from tests.support import directives_fallback as independent

    def norm(expr):
        return ast.dump(ast.parse(f"(\n{expr}\n)", mode="eval")) if expr else expr

    ours, _ = parse_directives(path.read_text())
    theirs, errors = independent.parse_directives(path.read_text())
    assert not errors, errors
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert (a.kernel, a.line, a.args, a.kwargs, a.grid) == (b.kernel, b.line, b.args, b.kwargs, b.grid)
        assert norm(a.grid_expr) == norm(b.grid_expr)


@pytest.mark.parametrize("path,line", _launch_params())
def test_footprint_matches_interpreter(path, line, oracle_results, conformance_stats):
    record = oracle_results[str(path)]
    assert not record["errors"], f"the oracle could not run {path.name}: {record['errors']}"
    runs = [r for r in record["runs"] if r["line"] == line]
    assert runs, f"the oracle has no run for the launch at line {line}"
    broken = [f"{r['config']}: {r['error']}" for r in runs if "error" in r]
    assert not broken, f"the interpreter could not run this launch: {broken}"
    for r in runs:
        assert not r.get("unattributed"), f"accesses outside every argument: {r['unattributed']}"

    conformance_stats.launches += len(runs)
    for r in runs:
        conformance_stats.kernels.add((path.name, r["kernel"]))
    if isinstance(_analyze(path), str):
        conformance_stats.not_analyzed["analyze_path raised"] += len(runs)
    result = product_result(path)
    product = [l for l in result.launches if l.line == line]
    if path not in conformance_stats.engine_files:
        conformance_stats.engine_files.add(path)
        conformance_stats.engines.update(ENGINES_BY_FILE.get(path, Counter()))

    problems: list[str] = []
    used: set[int] = set()
    for run in runs:
        label = f"config {run['config']}" if run["config"] else "launch"
        # Autotune configs that differ only in num_warps/num_stages share their kwargs: the oracle
        # runs them once, and every product record with those kwargs must match that run.
        matches = [i for i, l in enumerate(product) if config_matches(run["config"], l.config)]
        if not matches:
            problems.append(f"{label}: no product record (product configs: {[l.config for l in product]})")
            continue
        used.update(matches)
        if any(product[i].status == "refused" for i in matches):
            launch = next(product[i] for i in matches if product[i].status == "refused")
            kinds = [d.kind or "unknown" for d in launch.diagnostics if d.code == "TL030"] or ["unknown"]
            conformance_stats.refused[kinds[0]] += 1
            # a refusal is honest only where the kernel file expects it; a crash (TL050) never is
            unexpected = sorted(set(kinds) - expected_refusals(path))
            crashes = [d.message for d in launch.diagnostics if d.code == "TL050"]
            if unexpected or crashes:
                problems.append(
                    f"{label}: unexpected refusal {unexpected or ''} {crashes[:1] or ''}: "
                    f"{[d.message for d in launch.diagnostics][:2]}"
                )
            continue
        bad = [product[i] for i in matches if product[i].status != "analyzed"]
        if bad:
            conformance_stats.not_analyzed[bad[0].status] += 1
            msgs = [f"{d.code} line {d.line}: {d.message}" for d in bad[0].diagnostics]
            problems.append(f"{label}: status {bad[0].status}: {msgs[:3]}")
            continue
        conformance_stats.compared += 1
        diffs: list[str] = []
        for i in matches:
            launch = product[i]
            for d in compare(run, launch):
                if d not in diffs:
                    diffs.append(d)
            for d in launch.diagnostics:
                alarm = f"false alarm on a correct kernel: {d.code} at line {d.line}: {d.message}"
                if d.code in FALSE_ALARMS and alarm not in diffs:
                    diffs.append(alarm)
        if diffs:
            problems.append(f"{label}, grid {tuple(run['grid'])}:\n    " + "\n    ".join(diffs))
        else:
            conformance_stats.conforming += 1
    for i, l in enumerate(product):
        if i not in used:
            problems.append(f"the product analysed config {l.config} that the kernel does not declare")
    assert not problems, f"{path.name}:{line}:\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------- known bugs

_EXPECT = re.compile(r"#\s*expect:\s*(TL\d{3})\s+at\s+line\s+(\d+)")


def _bug_params():
    params = []
    for path in sorted(BUGS_DIR.glob("*.py")):
        for code, line in _EXPECT.findall(path.read_text()):
            params.append(pytest.param(path, code, int(line), id=f"{path.name}:{code}@{line}"))
    return params


@pytest.mark.parametrize("path,code,line", _bug_params())
def test_known_bug_is_reported(path, code, line):
    result = product_result(path)
    found = [(d.code, d.line) for d in result.all_diagnostics()]
    assert (code, line) in found, f"expected {code} at line {line}; got {sorted(set(found))}"


def test_every_bug_kernel_declares_an_expectation():
    for path in sorted(BUGS_DIR.glob("*.py")):
        assert _EXPECT.search(path.read_text()), f"{path.name} has no `# expect:` comment"


# ---------------------------------------------------------------- the comparison itself


def _access(elements, exact=True, op="load", line=10, pointer="x_ptr"):
    from tilelens_lsp.model import Access

    return Access(
        op=op,
        line=line,
        column=5,
        pointer=pointer,
        dtype="fp32",
        exact=exact,
        elements=tuple(elements),
        in_bounds=True,
        path="kernels/k.py",
    )


def _launch(*accesses):
    from tilelens_lsp.model import LaunchResult

    return LaunchResult(kernel="k", line=20, config={}, status="analyzed", accesses=tuple(accesses))


_RUN = {
    "accesses": [
        {"op": "load", "path": "/abs/kernels/k.py", "line": 10, "pointer": "x_ptr", "elements": [[0, 10], [20, 30]]}
    ]
}


def test_difference_of_interval_lists():
    assert difference([(0, 10), (20, 30)], [(5, 25)]) == [(0, 5), (25, 30)]
    assert difference([(0, 10)], [(0, 10)]) == []
    assert difference([(0, 10)], []) == [(0, 10)]


def test_compare_accepts_an_equal_footprint():
    assert compare(_RUN, _launch(_access([(0, 10), (20, 30)]))) == []


def test_compare_flags_missed_and_spurious_elements():
    problems = compare(_RUN, _launch(_access([(0, 9), (20, 31)])))
    assert len(problems) == 1 and "missed 1 elements: [9, 10)" in problems[0]
    assert "spurious 1 elements: [30, 31)" in problems[0]


def test_compare_lets_an_inexact_access_over_approximate_but_not_miss():
    assert compare(_RUN, _launch(_access([(0, 40)], exact=False))) == []
    assert compare(_RUN, _launch(_access([(0, 25)], exact=False)))


def test_compare_flags_an_access_on_one_side_only():
    assert compare(_RUN, _launch())
    extra = _access([(0, 4)], op="store", line=11)
    assert compare(_RUN, _launch(_access([(0, 10), (20, 30)]), extra))
