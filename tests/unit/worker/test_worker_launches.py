"""The worker's timeout applies to each launch, not to the file; a launch that hangs or crashes costs
only itself (its own TL050, status `crashed`), the launches after it are analysed by a fresh worker.

The slow parts are heuristics that sleep (the launch's configs are evaluated in the worker, under its
timeout), so the timing does not depend on how fast this machine compiles.
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from tilelens_lsp.pipeline import analyze_path, plan_path
from tilelens_lsp.settings import Settings
from tilelens_lsp.worker.process import Worker

SLEEPY = textwrap.dedent("""\
    import time
    import triton
    import triton.language as tl


    def nap(args):
        time.sleep(args["n"] / 1000)   # n milliseconds
        return 16


    @triton.heuristics({"BLOCK": nap})
    @triton.jit
    def k(x_ptr, n, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


    @triton.jit
    def oob(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
""")


def launches(naps: list[int]) -> str:
    lines = [f"# tilelens: k[(1,)](fp32[16], {n})" for n in naps]
    lines.append("# tilelens: oob[(1,)](fp32[8], BLOCK=16)")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def worker():
    w = Worker(Settings(timeout=30.0))
    w.start()
    yield w
    w.stop()


def test_many_launches_longer_than_the_timeout_together_are_all_analysed(worker, tmp_path: Path):
    # six launches of 0.6 s each: 3.6 s for the file, under 2.5 s for any one launch
    f = tmp_path / "many.py"
    f.write_text(launches([600] * 6) + SLEEPY)
    result = worker.analyze(f, tmp_path, settings=Settings(timeout=2.5))
    assert [launch.status for launch in result.launches] == ["analyzed"] * 7
    assert [d.code for d in result.all_diagnostics()] == ["TL001"]  # oob's store, and nothing else


def test_the_result_so_far_is_heard_after_each_launch_but_the_last(worker, tmp_path: Path):
    f = tmp_path / "partial.py"
    f.write_text(launches([1, 1]) + SLEEPY + "\n@triton.jit\ndef unused(x_ptr):\n    pass\n")
    heard = []
    result = worker.analyze(f, tmp_path, on_partial=heard.append)
    assert [len(p.launches) for p in heard] == [1, 2]  # not the last: the reply itself is the whole
    assert all(p.launches == result.launches[: len(p.launches)] for p in heard)
    assert all(p.diagnostics == result.diagnostics for p in heard)  # the file's own TL100, from the start
    assert [d.code for d in result.all_diagnostics()] == ["TL100", "TL001"]


def test_a_hung_launch_costs_only_itself(worker, tmp_path: Path):
    f = tmp_path / "one_hangs.py"
    f.write_text(launches([10, 100_000, 10]) + SLEEPY)
    result = worker.analyze(f, tmp_path, settings=Settings(timeout=2.5))
    statuses = [(launch.line, launch.status) for launch in result.launches]
    assert statuses == [(1, "analyzed"), (2, "crashed"), (3, "analyzed"), (4, "analyzed")]
    hung = result.launches[1].diagnostics
    assert [d.code for d in hung] == ["TL050"] and "timed out after 2.5 s" in hung[0].message
    assert hung[0].line == 2
    assert [d.code for d in result.launches[3].diagnostics] == ["TL001"]  # found after the restart
    assert worker.alive()


def test_a_selection_analyses_those_launches_and_the_parts_add_up(worker, tmp_path: Path):
    f = tmp_path / "parts.py"
    f.write_text(launches([1, 2, 3]) + SLEEPY + "\n@triton.jit\ndef unused(x_ptr):\n    pass\n")
    whole = worker.analyze(f, tmp_path)
    first = worker.analyze(f, tmp_path, select=[3, 0])
    rest = worker.analyze(f, tmp_path, select=[1, 2], file_level=False)
    assert [d.code for d in whole.diagnostics] == ["TL100"]
    assert first.diagnostics == whole.diagnostics and rest.diagnostics == ()
    # results come back in the order of their indices, whatever order they were asked in
    assert first.launches == (whole.launches[0], whole.launches[3])
    assert rest.launches == whole.launches[1:3]


def test_the_worker_times_the_import_apart_from_the_launches(worker, tmp_path: Path):
    # the pool weighs a package's import by this: a module that sleeps 0.8 s on import, a launch
    # that naps 0.6 s after it (both lower bounds, whatever the load)
    f = tmp_path / "slow_import.py"
    f.write_text(launches([600]) + "import time as _t\n_t.sleep(0.8)\n" + SLEEPY)
    begun = time.monotonic()
    worker.analyze_parts(f, tmp_path)
    took = time.monotonic() - begun
    assert worker.last_import is not None
    assert 0.8 <= worker.last_import <= took - 0.6


def test_the_plan_names_every_launch_without_importing(tmp_path: Path):
    f = tmp_path / "planned.py"
    f.write_text(launches([1, 2]) + "import sys\nsys.exit('imported!')\n" + SLEEPY)
    plan = plan_path(f, tmp_path)
    assert plan["path"] == "planned.py"
    assert [(x["index"], x["kernel"], x["line"], x["origin"]) for x in plan["launches"]] == [
        (0, "k", 1, "comment"),
        (1, "k", 2, "comment"),
        (2, "oob", 3, "comment"),
    ]
    # and the analysis of the same file imports it (and fails, as a TL010): the plan did not
    assert [d.code for d in analyze_path(f, tmp_path).diagnostics] == ["TL010"]


def test_the_plan_weighs_a_launch_by_its_autotune_configs(tmp_path: Path):
    f = tmp_path / "tuned.py"
    f.write_text(
        textwrap.dedent("""\
        # tilelens: t[(1,)](fp32[64])
        # tilelens: p[(1,)](fp32[64], BLOCK=64)
        # tilelens: w[(1,)](fp32[64])
        import triton
        import triton.language as tl
        from somewhere import tuner

        @triton.autotune(configs=[triton.Config({"BLOCK": b}) for b in (16, 32)], key=[])
        @triton.jit
        def t(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

        @triton.autotune([triton.Config({}), triton.Config({}), triton.Config({})], key=[])
        @triton.jit
        def p(x_ptr, BLOCK: tl.constexpr):
            tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)

        @tuner(configs=[triton.Config({"B": 1}), triton.Config({"B": 2})], key=[])  # a package's own autotuner
        @triton.jit
        def w(x_ptr):
            tl.store(x_ptr + tl.arange(0, 64), 1.0)
    """)
    )
    # t: two BLOCK values; p: three configs, one constexpr dict; w: a package's tuner, two configs
    assert [x["weight"] for x in plan_path(f, tmp_path)["launches"]] == [2, 1, 2]


TRICKY = [
    "# tilelens: N = 64\n# tilelens: k[(cdiv(N, 16),)](\n# tilelens:     fp32[N], BLOCK=16)\n" + SLEEPY,
    's = """\n# tilelens: k[(1,)](fp32[4])\n"""\n' + SLEEPY,  # inside a string: no directive
    "    #tilelens: oob[(1,)](fp32[8], BLOCK=16)\n# tilelens: nope[(1,)](\n" + SLEEPY,
    "# tilelens: k[(1,)](fp32[16], 3)  # tilelens: ignore[TL001]\ndef broken(:\n",  # no parse: tokenized
    "# tilelens: oob[(1,)](fp32[8], BLOCK=M)\n# tilelens: M = 4\n" + SLEEPY,  # used before bound
]


@pytest.mark.parametrize("text", TRICKY)
def test_directives_reused_across_saves_equal_a_fresh_parse(tmp_path: Path, text: str):
    """A save that changes code but no directive reuses the evaluated directives: the same launches and
    errors (lines, columns, messages) as parsing the new text from scratch."""
    from tilelens_lsp.launches.kernels import find_kernels
    from tilelens_lsp.launches.scanner import parse_directives
    from tilelens_lsp.pipeline import declared_launches

    f = tmp_path / "k.py"
    for edit in ("", "\nx = 1  # an edit that moves no directive\n", "\n\n# tilelens: M = 8\n"):
        changed = text + edit
        known = {k.name for k in find_kernels(changed)}
        launches, errors = parse_directives(changed, known or None)
        _, cached_launches, cached_errors, _ = declared_launches(f, changed, tmp_path)
        assert (cached_launches, cached_errors) == (launches, errors)


def test_module_tables_resolved_in_another_interpreter_at_once(tmp_path: Path):
    """`check --python` resolves a config's `module =` tables in one process of that interpreter; the
    files are those a lookup one module at a time finds, in the config's order."""
    import os
    import sys

    from tilelens_lsp.launches import toml

    python = tmp_path / "python"
    os.symlink(sys.executable, python)  # another path: another interpreter, as far as we know
    names = ["json.decoder", "email.mime.text", "xml.dom.minidom", "json.decoder", "no_such.module_here"]
    config = tmp_path / "tilelens.toml"
    config.write_text("".join(f'[[launch]]\nmodule = "{n}"\nlaunch = "k[(1,)](fp32[4])"\n\n' for n in names))
    together = toml.files_in_config(config, str(python))
    expected = []
    for n in names:  # stdlib modules: this interpreter finds them where the other one does
        found = toml.module_file(n, tmp_path)
        if found is not None and found not in expected:
            expected.append(found)
    assert together == expected and len(together) == 3


def test_a_launch_that_comes_back_unanswered_is_a_tl050_not_silence(tmp_path: Path):
    """The plan and the analysis read the file at different times: a launch the plan named and the
    analysis no longer finds (the file was edited meanwhile) is reported, never dropped."""
    from tilelens_lsp.worker.pool import analyze_files

    f = tmp_path / "edited.py"
    f.write_text(launches([1, 2]) + SLEEPY)

    class Planned(Worker):
        def plan(self, *args, **kwargs):
            plan = super().plan(*args, **kwargs)
            f.write_text(launches([]) + SLEEPY)  # edited after the plan: only `oob` is left
            return plan

    workers = [Planned(Settings()), Planned(Settings())]
    try:
        (result,) = analyze_files(workers, [f], tmp_path, None, Settings())
    finally:
        for w in workers:
            w.stop()
    statuses = sorted(launch.status for launch in result.launches)
    assert "crashed" in statuses and len(result.launches) == 3
    assert all(d.code == "TL050" for launch in result.launches if launch.status == "crashed" for d in launch.diagnostics)


HANGS_SECOND = textwrap.dedent("""\
    import triton
    import triton.language as tl


    # tilelens: k[(1,)](fp32[16])
    @triton.autotune(configs=[triton.Config({"N": 1}), triton.Config({"N": 10**7})], key=[])
    @triton.jit
    def k(x_ptr, N: tl.constexpr):
        for i in tl.static_range(N):   # 10**7 copies: Triton's code generator never ends
            tl.store(x_ptr + tl.arange(0, 16), 1.0)
""")


def test_a_config_that_hangs_keeps_the_configs_answered_before_it(worker, tmp_path: Path):
    f = tmp_path / "second_hangs.py"
    f.write_text(HANGS_SECOND)
    result = worker.analyze(f, tmp_path, settings=Settings(timeout=2.5))
    assert [(launch.config, launch.status) for launch in result.launches] == [({"N": 1}, "analyzed"), ({}, "crashed")]
    assert "timed out after 2.5 s" in result.launches[1].diagnostics[0].message


GONE_FIRST = textwrap.dedent("""\
    import triton
    import triton.language as tl

    # tilelens: gone[(1,)](fp32[16], BLOCK=16)
    # tilelens: k[(1,)](fp32[16], BLOCK=16)
    @triton.jit
    def gone(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


    del gone
""")


def test_a_launch_of_a_kernel_the_module_lacks_streams_its_own_error(worker, tmp_path: Path):
    f = tmp_path / "gone_first.py"
    f.write_text(GONE_FIRST)
    result = worker.analyze(f, tmp_path)
    gone, k = result.launches
    assert [d.code for d in gone.diagnostics] == ["TL020"]
    assert "defines no kernel named 'gone'" in gone.diagnostics[0].message
    assert k.status == "analyzed"
