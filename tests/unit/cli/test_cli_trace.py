"""`tilelens-lsp check` as a new user meets it: nothing dropped in silence, every finding traceable.

Through the CLI as a subprocess, in folders of kernels written for each case: a toml launch that
names nothing importable, `--config` checking only its own launches, trees without launches, refused
kernels in the summary and under `--fail-on refused`, findings that name their launches (merged when
identical), paths a user can open and printed commands that work when pasted.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support import REPO, SAMPLES

KERNELS = textwrap.dedent("""\
    import triton
    import triton.language as tl


    @triton.jit
    def tail_kernel(x_ptr, n, scale, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, 1.0)


    @triton.jit
    def gather_kernel(idx_ptr, x_ptr, out_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        idx = tl.load(idx_ptr + offs)
        tl.store(out_ptr + offs, tl.load(x_ptr + idx))
    """)
TAIL = "tail_kernel[(8,)](fp32[1000], 1000, {scale}, BLOCK=128)"
GATHER = "gather_kernel[(1,)](i32[64], fp32[100], fp32[64], BLOCK=64)"
STORE_LINE = 8


def check(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", "check", *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env
    )


def paste(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """A command the CLI printed, run as a user would paste it (`tilelens-lsp` is this checkout)."""
    argv = shlex.split(command)
    assert argv[0] == "tilelens-lsp", command
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", *argv[1:]], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def printed_command(text: str, verb: str) -> str:
    start = text.index(f"`tilelens-lsp {verb} ") + 1
    return text[start : text.index("`", start)]


# ---------------------------------------------------------------- nothing dropped in silence


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """mykernels/ (the user's package, not installed), a buggy sibling file, a toml in sub/."""
    root = tmp_path_factory.mktemp("proj")
    (root / ".git").mkdir()
    (root / "mykernels").mkdir()
    (root / "mykernels" / "__init__.py").write_text("")
    (root / "mykernels" / "rowscale.py").write_text(KERNELS)
    (root / "other.py").write_text((SAMPLES / "buggy_kernels.py").read_text())
    (root / "sub").mkdir()
    return root


def test_an_unresolvable_module_launch_is_a_tl010_at_its_toml_line_and_exit_2(project):
    (project / "sub" / "x.toml").write_text(
        f'[[launch]]\nmodule = "mykernels.rowscale"\nlaunch = "{TAIL.format(scale=1.0)}"\n'
    )
    run = check("--config", "sub/x.toml", cwd=project)
    assert run.returncode == 2, run.stderr
    [line] = run.stdout.splitlines()
    assert line.startswith(
        "sub/x.toml:2:1: error: this launch is not checked: `module`: no module named 'mykernels.rowscale'"
    ) and line.endswith("[TL010]")
    assert 'write `file = "../mykernels/rowscale.py"`' in line  # the fix, for a file of the workspace


def test_check_with_a_config_checks_its_launches_and_nothing_else(project):
    (project / "sub" / "y.toml").write_text(
        f'[[launch]]\nfile = "../mykernels/rowscale.py"\nlaunch = "{TAIL.format(scale=1.0)}"\n'
    )
    run = check("--config", "sub/y.toml", "--format", "json", cwd=project)
    doc = json.loads(run.stdout)
    assert [f["path"] for f in doc["files"]] == ["mykernels/rowscale.py"]  # not other.py, not a folder walk
    assert run.returncode == 1 and doc["summary"]["launches"] == 1


def test_a_tree_with_kernels_and_no_launch_exits_2_naming_them_and_the_next_step(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "softmax.py").write_text(KERNELS)
    run = check(cwd=tmp_path)
    assert run.returncode == 2
    assert "nothing was checked" in run.stderr and "tail_kernel" in run.stderr and "gather_kernel" in run.stderr
    suggest = paste(printed_command(run.stderr, "suggest"), tmp_path)  # the printed next step works
    assert suggest.returncode in (0, 1) and "# tilelens: tail_kernel[" in suggest.stdout, suggest.stderr


def test_declared_only_accepts_a_tree_without_launches(tmp_path):
    (tmp_path / "k.py").write_text(KERNELS)
    assert check("--declared-only", ".", cwd=tmp_path).returncode == 0


@pytest.fixture(scope="module")
def refused(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("refused")
    (root / ".git").mkdir()
    (root / "g.py").write_text(
        f"# tilelens: {GATHER}\n"
        + KERNELS.replace("    tl.store(x_ptr + offs, 1.0)", "    tl.store(x_ptr + offs, 1.0, mask=offs < n)")
    )
    return root


def test_a_refused_launch_is_counted_as_refused_by_kind_not_as_passed(refused):
    run = check(".", cwd=refused)
    assert run.returncode == 0  # a refusal is no error verdict ...
    assert "0 analysed (0 clean, 0 with findings), 1 refused (indirect-address: 1)" in run.stderr
    assert "--fail-on refused" in run.stderr  # ... and the summary says how to make CI fail on it


def test_fail_on_refused_exits_1(refused):
    assert check(".", "--fail-on", "refused", cwd=refused).returncode == 1
    assert check(".", "--fail-on", "refused", "--select", "TL030", cwd=refused).returncode == 1


def test_the_json_summary_counts_by_outcome(refused):
    doc = json.loads(check(".", "--format", "json", cwd=refused).stdout)
    assert doc["summary"] | {"refused_by_kind": None} == {
        "files": 1,
        "launches": 1,
        "analyzed": 0,
        "clean": 0,
        "with_findings": 0,
        "refused": 1,
        "refused_by_kind": None,
        "failed": 0,
        "files_not_imported": 0,
    }
    assert doc["summary"]["refused_by_kind"] == {"indirect-address": 1}


# ---------------------------------------------------------------- findings name their launches


@pytest.fixture(scope="module")
def twice(tmp_path_factory) -> Path:
    """One kernel, two launches that give the same finding (an unused scalar differs) and a third
    whose finding differs."""
    root = tmp_path_factory.mktemp("twice")
    (root / ".git").mkdir()
    (root / "kernels").mkdir()
    head = (
        f"# tilelens: {TAIL.format(scale=1.0)}\n# tilelens: {TAIL.format(scale=2.0)}\n"
        "# tilelens: tail_kernel[(4,)](fp32[300], 300, 1.0, BLOCK=128)\n"
    )
    (root / "kernels" / "k.py").write_text(head + KERNELS)
    return root


def test_identical_findings_of_two_launches_are_one_text_line_naming_both(twice):
    run = check(".", cwd=twice)
    lines = [x for x in run.stdout.splitlines() if "[TL001]" in x]
    assert len(lines) == 2, run.stdout
    merged = next(x for x in lines if "2 launches" in x)
    assert merged.startswith(f"kernels/k.py:{STORE_LINE + 3}:")
    assert "2 launches of tail_kernel: [BLOCK=128] at kernels/k.py:1; [BLOCK=128] at kernels/k.py:2)" in merged
    single = next(x for x in lines if x is not merged)
    assert "(launch: tail_kernel[BLOCK=128] at kernels/k.py:3)" in single


def test_json_launches_name_engine_and_origin(twice):
    doc = json.loads(check(".", "--format", "json", cwd=twice).stdout)
    launches = doc["files"][0]["launches"]
    assert [(x["origin"]["path"], x["origin"]["line"]) for x in launches] == [("kernels/k.py", n) for n in (1, 2, 3)]
    assert {x["engine"] for x in launches} <= {"enumerate", "affine", "grid"} and all(x["engine"] for x in launches)
    assert doc["files"][0]["absolute_path"] == str((twice / "kernels" / "k.py").resolve())


def test_sarif_lists_the_launches_in_properties_and_related_locations(twice):
    sarif = json.loads(check(".", "--format", "sarif", cwd=twice).stdout)
    merged = [r for r in sarif["runs"][0]["results"] if len(r.get("properties", {}).get("launches", [])) == 2]
    assert len(merged) == 1
    lines = [loc["physicalLocation"]["region"]["startLine"] for loc in merged[0]["relatedLocations"]]
    assert lines == [1, 2] and "2 launches of tail_kernel" in merged[0]["message"]["text"]


def test_github_annotations_name_the_launches_once(twice):
    run = check(".", "--format", "github", cwd=twice)
    errors = [x for x in run.stdout.splitlines() if x.startswith("::error")]
    assert len(errors) == 2 and sum("2 launches of tail_kernel" in x for x in errors) == 1


def test_a_toml_launch_is_named_by_the_toml_file_and_line(project):
    (project / "sub" / "z.toml").write_text(
        f'# two lines above\n\n[[launch]]\nfile = "../mykernels/rowscale.py"\nlaunch = "{TAIL.format(scale=1.0)}"\n'
    )
    run = check("--config", "z.toml", cwd=project / "sub")  # run from the toml's folder
    assert f"../mykernels/rowscale.py:{STORE_LINE}:" in run.stdout  # relative to where it was run
    assert "(launch: tail_kernel[BLOCK=128] at z.toml:5)" in run.stdout


# ---------------------------------------------------------------- paths a user can open


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """A package in a site-packages folder the worker imports from, named by `module =`."""
    base = tmp_path_factory.mktemp("inst")
    site = base / "lib" / "site-packages"
    (site / "acme" / "ops").mkdir(parents=True)
    (site / "acme" / "__init__.py").write_text("")
    (site / "acme" / "ops" / "__init__.py").write_text("")
    (site / "acme" / "ops" / "tail.py").write_text(KERNELS)
    (site / "acme" / "ops" / "extra.py").write_text(KERNELS)
    ws = base / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / "tail.py").write_text(KERNELS)  # the user's own file of the same basename
    (ws / "tilelens.toml").write_text(
        f'[[launch]]\nmodule = "acme.ops.tail"\nlaunch = "{TAIL.format(scale=1.0)}"\n'
        f'[[launch]]\nfile = "tail.py"\nlaunch = "{TAIL.format(scale=1.0)}"\n'
    )
    return ws, site


def _env_with(site: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(site)])
    return env


def test_an_installed_file_prints_by_its_importable_path_never_a_colliding_basename(installed):
    ws, site = installed
    run = check("--config", "tilelens.toml", cwd=ws, env=_env_with(site))
    assert f"acme/ops/tail.py:{STORE_LINE}:" in run.stdout and f"\ntail.py:{STORE_LINE}:" in "\n" + run.stdout


def test_json_gives_the_absolute_path_of_an_installed_file(installed):
    ws, site = installed
    doc = json.loads(check("--config", "tilelens.toml", "--format", "json", cwd=ws, env=_env_with(site)).stdout)
    entry = next(f for f in doc["files"] if f["path"] == "acme/ops/tail.py")
    assert entry["absolute_path"] == str((site / "acme" / "ops" / "tail.py").resolve())


def test_tl100_is_one_line_for_all_kernels_without_launches_and_its_command_works(installed):
    ws, site = installed
    run = check("--config", "tilelens.toml", cwd=ws, env=_env_with(site))
    hint = [x for x in run.stderr.splitlines() if "without a declared launch" in x]
    assert len(hint) == 1 and "gather_kernel" in hint[0] and "[TL100]" not in run.stdout
    command = printed_command(hint[0], "suggest")
    assert paste(command, ws).returncode in (0, 1)


def test_show_hints_prints_each_tl100(installed):
    ws, site = installed
    run = check("--config", "tilelens.toml", "--show-hints", cwd=ws, env=_env_with(site))
    assert sum(x.endswith("[TL100]") for x in run.stdout.splitlines()) == 2  # gather_kernel in both files


def test_a_misspelt_parameter_gets_did_you_mean_on_its_directive_line(tmp_path):
    (tmp_path / "k.py").write_text("# tilelens: tail_kernel[(8,)](fp32[1000], n=1000, scal=1.0, BLOCK=128)\n" + KERNELS)
    run = check("k.py", cwd=tmp_path)
    assert run.returncode == 2  # its one launch is broken: nothing was checked
    assert "k.py:1:1: error: unknown parameter 'scal' of tail_kernel: did you mean 'scale'? [TL020]" in run.stdout


def test_the_printed_suggest_command_carries_the_interpreter_check_ran_with(tmp_path):
    # k.py imports a module only the environment `env` has: a pasted `suggest` without `--python` fails
    import site
    import sysconfig
    import venv

    venv.EnvBuilder(with_pip=False).create(tmp_path / "env")
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(tmp_path / "env")}))
    (purelib / "acme_only_here.py").write_text("WIDTH = 64\n")
    (purelib / "this_checkout.pth").write_text("\n".join([str(REPO), *site.getsitepackages()]) + "\n")
    (tmp_path / "k.py").write_text("import acme_only_here  # noqa: F401\n" + KERNELS)
    run = check("--python", "env/bin/python", "k.py", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr  # kernels, and no launch
    command = printed_command(run.stderr, "suggest")
    assert command == "tilelens-lsp suggest --python env/bin/python k.py"
    pasted = paste(command, tmp_path)
    assert pasted.returncode == 0, pasted.stderr
    assert "# tilelens: tail_kernel[" in pasted.stdout and "# tilelens: gather_kernel[" in pasted.stdout


def test_a_misspelt_parameter_of_a_toml_launch_gets_did_you_mean_at_its_toml_line(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.py").write_text(KERNELS)
    (tmp_path / "t.toml").write_text(
        '# a comment\n[[launch]]\nfile = "k.py"\nlaunch = "tail_kernel[(8,)](fp32[1000], n=1000, scal=1.0, BLOCK=128)"\n'
    )
    run = check("--config", "t.toml", cwd=tmp_path)
    assert run.returncode == 2, run.stdout + run.stderr  # its one launch is broken: nothing was checked
    assert run.stdout.startswith(
        "t.toml:4:1: error: `launch`: unknown parameter 'scal' of tail_kernel: did you mean 'scale'? [TL020]"
    )
    assert "tail_kernel" not in run.stderr  # a broken launch names it: it is not "without a launch"


# ---------------------------------------------------------------- every refusal names its fix

REFUSED = textwrap.dedent("""\
    import triton
    import triton.language as tl


    # tilelens: embedding_kernel[(2,)](i32[2], fp32[4096], fp32[64], n_tokens=2, dim=32, BLOCK_D=32)
    @triton.jit
    def embedding_kernel(ids_ptr, weight_ptr, out_ptr, n_tokens, dim, BLOCK_D: tl.constexpr):
        pid = tl.program_id(0)
        tok = tl.load(ids_ptr + pid)
        cols = tl.arange(0, BLOCK_D)
        row = tl.load(weight_ptr + tok * dim + cols, mask=cols < dim)
        tl.store(out_ptr + pid * dim + cols, row, mask=cols < dim)


    # tilelens: loop_kernel[(1,)](i32[4], fp32[1024], BLOCK=16)
    @triton.jit
    def loop_kernel(len_ptr, x_ptr, BLOCK: tl.constexpr):
        n = tl.load(len_ptr)
        for i in range(0, n):
            tl.store(x_ptr + i * BLOCK + tl.arange(0, BLOCK), 1.0, mask=i < 64)
    """)


def test_a_data_dependent_refusal_names_the_tensor_whose_range_decides_it_and_that_range_does(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "r.py").write_text(REFUSED)
    run = check("r.py", cwd=tmp_path)
    [gather] = [x for x in run.stdout.splitlines() if x.startswith("r.py:11:")]
    [loop] = [x for x in run.stdout.splitlines() if x.startswith("r.py:18:")]
    assert "indirect-address" in gather and "`ids_ptr=i32[2].values(LO, HI)`" in gather
    assert "data-dependent-bound" in loop and "`len_ptr=i32[4].values(LO, HI)`" in loop
    # the fix as the message writes it, with a range: both launches are analysed
    fixed = (
        REFUSED.replace("](i32[2],", "](ids_ptr=i32[2].values(0, 128), weight_ptr=", 1)
        .replace("fp32[4096], fp32[64], n_tokens", "fp32[4096], out_ptr=fp32[64], n_tokens", 1)
        .replace("](i32[4],", "](len_ptr=i32[4].values(0, 64), x_ptr=", 1)
    )
    (tmp_path / "r.py").write_text(fixed)
    doc = json.loads(check("r.py", "--format", "json", cwd=tmp_path).stdout)
    status = {r["kernel"]: r for r in doc["files"][0]["launches"]}
    assert status["embedding_kernel"]["status"] == "analyzed"
    # a loop bound from declared-range data: analysed, or refused without asking for the range again
    loop = status["loop_kernel"]
    assert loop["status"] == "analyzed" or all(
        ".values(LO, HI)" not in d["message"] and "No declaration decides this" in d["message"]
        for d in loop["diagnostics"]
        if d["code"] == "TL030"
    ), loop["diagnostics"]


def test_a_launch_over_the_budget_names_the_setting_and_that_setting_finishes_it(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "k.py").write_text(
        REFUSED.replace(  # a gather: enumerated, 64 programs of 32 lanes
            "embedding_kernel[(2,)](i32[2], fp32[4096], fp32[64],",
            "embedding_kernel[(64,)](i32[64].values(0, 128), fp32[4096], fp32[2048],",
        )
    )
    small = dict(os.environ, TILELENS_ENUMERATION_BUDGET="100")  # past the grid engine's reach too
    run = check("k.py", cwd=tmp_path, env=small)
    [line] = [x for x in run.stdout.splitlines() if "launch-too-large" in x]
    assert "TILELENS_ENUMERATION_BUDGET=N" in line and "enumerationBudget" in line
    doc = json.loads(
        check(
            "k.py", "--format", "json", cwd=tmp_path, env=dict(os.environ, TILELENS_ENUMERATION_BUDGET="10_000_000")
        ).stdout
    )
    [gather] = [r for r in doc["files"][0]["launches"] if r["kernel"] == "embedding_kernel"]
    assert gather["status"] == "analyzed", gather["diagnostics"]


def test_a_toml_outside_the_workspace_is_named_by_a_path_that_opens(tmp_path):
    (tmp_path / "ws" / ".git").mkdir(parents=True)
    (tmp_path / "ws" / "k.py").write_text(KERNELS)
    (tmp_path / "elsewhere").mkdir()
    toml = tmp_path / "elsewhere" / "c.toml"
    toml.write_text(f'[[launch]]\nfile = "../ws/k.py"\nlaunch = "{TAIL.format(scale=1.0)}"\n')
    run = check("--config", str(toml), cwd=tmp_path / "ws")
    assert f"k.py:{STORE_LINE}:" in run.stdout
    assert f"(launch: tail_kernel[BLOCK=128] at {toml.resolve()}:3)" in run.stdout, run.stdout


def test_a_launch_label_shows_its_tile_sizes_not_its_flags():
    from tilelens_lsp.cli.report import launch_label
    from tilelens_lsp.model import Frame, LaunchResult

    config = {"BLOCK_SIZE": 32768, "HAS_WEIGHT": False, "reduction": "mean", "label_smoothing": 0.0}
    launch = LaunchResult("ce_kernel", 5, config, "analyzed", origin=Frame("c.toml", 5, 1))
    assert launch_label(launch) == "ce_kernel[BLOCK_SIZE=32768] at c.toml:5"
    many = LaunchResult("k", 1, {f"B{i}": 16 for i in range(6)}, "analyzed", origin=Frame("k.py", 1, 1))
    assert launch_label(many) == "k[B0=16, B1=16, B2=16, B3=16, +2] at k.py:1"
