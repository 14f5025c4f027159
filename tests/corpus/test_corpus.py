"""The real-world corpus in CI: a fixed, representative subset of installed PyPI kernels (liger-kernel,
flag-gems, fla-core; tools/corpus.py SUBSET) swept by the product, through the CLI and a worker in the
corpus venv, as a user would run it. Skips when `.venv-corpus` is absent (`bash tools/corpus_env.sh`);
`.ci/run` creates it, so CI runs it."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.support.corpus_cli import CORPUS_VENV, REPO, check_json, needs_corpus_venv, run_check

LINE = re.compile(
    r"^corpus: (\d+) packages, (\d+) kernels, (\d+) launches, (\d+) analyzed, (\d+) refused, "
    r"(\d+) compile-errors, (\d+) crashed, (\d+) unvisited$"
)

pytestmark = needs_corpus_venv


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus") / "sweep.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(REPO / "tools" / "corpus.py"),
            "sweep",
            "--subset",
            "--jobs",
            "2",
            "--timeout",
            "300",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    print(proc.stdout)  # the table and the line, in the test log
    m = LINE.match(last)
    assert m, f"the sweep's last line is not the corpus line: {last!r}"
    keys = ("packages", "kernels", "launches", "analyzed", "refused", "compile_errors", "crashed", "unvisited")
    return {"line": dict(zip(keys, map(int, m.groups()))), **json.loads(out.read_text())}


def test_the_subset_sweeps_all_three_packages(sweep):
    assert sweep["line"]["packages"] == 3 and sweep["line"]["launches"] > 0


def test_no_launch_crashes_or_times_out_the_worker(sweep):
    assert sweep["line"]["crashed"] == 0


def test_no_launch_leaves_a_memory_op_unvisited(sweep):
    assert sweep["line"]["unvisited"] == 0


def test_every_module_imports_under_the_worker_as_it_does_plainly(sweep):
    # fla asks Triton's driver about the device at import; FlagGems needs GEMS_VENDOR (set by the tool)
    assert sweep["totals"].get("file-TL010", 0) == 0, sweep["examples"].get("file-TL010")


def test_every_subset_kernel_with_a_launch_is_reached_or_fails_to_compile_for_real(sweep):
    bad = {k: v for kernels in sweep["kernels"].values() for k, v in kernels.items() if v in ("directive-error", "crashed")}
    assert bad == {}


def test_libentry_wrapped_flag_gems_kernels_are_analysed(sweep):
    reached = {k for k, v in sweep["kernels"]["flag-gems"].items() if v == "analyzed"}
    assert any(k.startswith("flag_gems.ops.mm.") for k in reached), sorted(sweep["kernels"]["flag-gems"])


def test_liger_multi_block_softmax_is_the_documented_compile_error(sweep):
    # tl.float32(-float("inf")) in the kernel: Triton 3.6-3.9 cannot compile it; TL010 is right
    kernel = "liger_kernel.ops.softmax._softmax_multi_block_forward_kernel"
    assert sweep["kernels"]["liger-kernel"][kernel] == "compile-error"


def test_hand_written_launches_conform_to_the_interpreter_where_it_runs():
    # FlagGems cannot be imported under TRITON_INTERPRET=1, and some Liger kernels use float-scalar
    # .to(): those are not compared; every launch the interpreter runs must have our footprints
    proc = subprocess.run(
        [str(CORPUS_VENV / "bin" / "python"), str(REPO / "tools" / "corpus.py"), "conform"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=900,
    )
    print(proc.stdout)
    last = proc.stdout.strip().splitlines()[-1]
    counts = dict((k.strip(), int(v)) for k, v in (part.rsplit(":", 1) for part in last.split(": ", 1)[1].split(", ")))
    assert proc.returncode == 0 and counts.get("differing", 0) == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert counts["compared"] >= 4 and counts["conforming"] == counts["compared"]


def test_launches_captured_on_a_gpu_are_all_analysed_or_honestly_refused(tmp_path):
    """Launches `tilelens-lsp capture` recorded from Liger-Kernel's ops running on a real GPU
    (tests/corpus/captured_gpu.toml): every one compiles on this host and is examined, nothing crashes
    and no memory op is left unvisited."""
    doc = check_json(REPO / "tests" / "corpus" / "captured_gpu.toml", tmp_path, python=CORPUS_VENV / "bin" / "python")
    launches = [launch for f in doc["files"] for launch in f["launches"]]
    statuses = [launch["status"] for launch in launches]
    print("captured on a GPU:", {s: statuses.count(s) for s in set(statuses)})
    assert len(launches) >= 11
    assert all(s in ("analyzed", "refused") for s in statuses), statuses
    kinds = [d["kind"] for launch in launches for d in launch["diagnostics"] if d["code"] == "TL030"]
    assert "unvisited" not in kinds
    assert not [
        d
        for f in doc["files"]
        for d in f["diagnostics"] + [x for l in f["launches"] for x in l["diagnostics"]]
        if d["code"] in ("TL010", "TL020", "TL050")
    ]


def test_fla_varlen_hand_launches_are_clean_by_the_relation_of_their_offsets(tmp_path):
    """fla's varlen kernels mask rows by `o_t < eos - bos` and address `bos + o_t` (cu_seqlens ranged):
    in bounds only through the relation between the two loaded offsets, which the analysis now reads
    (docs/directives.md, "Relations between loaded values"); before it, each access was a TL002."""
    blocks = (REPO / "tests" / "corpus" / "hand.toml").read_text().split("[[launch]]")
    varlen = [b for b in blocks[1:] if "cu_seqlens=i32" in b and ".values(" in b]
    assert len(varlen) >= 2
    config = tmp_path / "varlen.toml"
    config.write_text("".join("[[launch]]" + b for b in varlen))
    out = run_check(config, tmp_path, python=CORPUS_VENV / "bin" / "python")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    launches = [launch for f in json.loads(out.stdout)["files"] for launch in f["launches"]]
    assert len(launches) >= 3  # the vector kernel's autotune configs count one each
    assert all(x["status"] == "analyzed" and not x["diagnostics"] for x in launches), launches
    assert all(any(not a["exact"] for a in x["accesses"]) for x in launches), "the bounds rest on the ranges"


FLA_LET = "N = 64; T = 1048576; H = 32; S = 64; BT = 64; NT = 16384"
FLA_SCALAR = (
    "chunk_local_cumsum_scalar_kernel[(NT * 1 * H,)](s=fp32[1, T, H], o=fp32[1, T, H], scale=None, "
    "cu_seqlens=i32[N + 1].values(0, T + {top}), chunk_indices=i64[NT, 2].values(0, N), T=T, B=1, H=H, BT=BT, "
    "REVERSE={reverse})"
)
FLA_VECTOR = (
    'chunk_local_cumsum_vector_kernel[lambda meta: (cdiv(S, meta["BS"]) * NT, 1 * 4)](s=fp32[1, T, 4, S], '
    "o=fp32[1, T, 4, S], scale=None, cu_seqlens=i32[N + 1].values(0, T + 1), chunk_indices=i64[NT, 2].values(0, N), "
    "T=T, B=1, H=4, S=S, BT=BT, REVERSE=False)"
)


def _fla_launch(launch: str) -> str:
    return f"""[[launch]]\nmodule = "fla.ops.utils.cumsum"\nlet = "{FLA_LET}"\nlaunch = '{launch}'\n\n"""


def test_fla_varlen_launches_at_production_size_are_clean_by_the_relation_in_the_grid_engine(tmp_path):
    """The same kernels over 2^20 tokens (131,072 to 524,288 programs: the grid engine answers) are
    clean by the relation too (docs/performance-scale.md, "Relational atoms"); offsets declared up to
    T + 1 (rows past the tokens) still get their TL002 at row T. Before, every one was a TL002."""
    config = tmp_path / "varlen_scale.toml"
    config.write_text(
        _fla_launch(FLA_SCALAR.format(top=1, reverse=False))
        + _fla_launch(FLA_SCALAR.format(top=1, reverse=True))
        + _fla_launch(FLA_VECTOR)
        + _fla_launch(FLA_SCALAR.format(top=2, reverse=False))
    )
    report = check_json(config, tmp_path, python=CORPUS_VENV / "bin" / "python")
    launches = [launch for f in report["files"] for launch in f["launches"]]
    assert len(launches) == 5, launches  # the vector kernel's two autotune configs count one each
    assert all(x["engine"] == "grid" and x["status"] == "analyzed" for x in launches), launches
    *clean, past = launches
    assert [x["diagnostics"] for x in clean] == [[]] * 4
    T, H = 1 << 20, 32
    found = [d for d in past["diagnostics"] if d["code"] != "TL030"]
    assert {d["code"] for d in found} == {"TL002"} and len(found) == 2, found
    assert all(T * H <= d["witness"]["element"] < (T + 1) * H for d in found)  # row T, one past the rows
