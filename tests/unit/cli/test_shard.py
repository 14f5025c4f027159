"""`check --shard K/N` partitions the launches (each in exactly one shard, by a hash of its identity,
never of its position), and `tilelens-lsp merge` of the shards' JSON equals the unsharded run.

The workspace mixes what the merge must put back in place: comment launches and toml launches of
one file, autotuned configs, a directive error and a kernel without launch (file diagnostics), and
a module whose import fails (every shard holding one of its launches sees the TL010).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import FIXTURES, SAMPLES
from tilelens_lsp.cli.shard import parse_share
from tilelens_lsp.worker.pool import Share, launch_keys

N = 3
BROKEN_IMPORT = """\
# tilelens: k[(1,)](fp32[16], BLOCK=16)
# tilelens: k[(2,)](fp32[16], BLOCK=16)
# tilelens: k[(3,)](fp32[16], BLOCK=16)
# tilelens: k[(4,)](fp32[16], BLOCK=16)
import triton
import triton.language as tl
import no_such_module_here


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
"""


def check(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tilelens_lsp", *args], cwd=cwd, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("shards")
    for f in SAMPLES.glob("*.py"):
        shutil.copy(f, root / f.name)
    for name in ("tuned.py", "toml_declared.py", "launch_forms.py"):
        shutil.copy(FIXTURES / name, root / name)
    (root / "broken_import.py").write_text(BROKEN_IMPORT)
    (root / "unlaunched.py").write_text(
        "# tilelens: nothing_here[(1,)](fp32[4])\n"
        + (SAMPLES / "vector_add.py").read_text()
        + "\n\n@triton.jit\ndef lonely(x_ptr):\n    pass\n"
    )
    tables = "".join(
        f'[[launch]]\nfile = "{f}"\nlet = "N = {n}"\nlaunch = "fill_kernel[(cdiv(N, 32),)](fp32[N], N, BLOCK=32)"\n\n'
        for f, n in (("toml_declared.py", 64), ("toml_declared.py", 100), ("toml_declared.py", 96))
    )
    (root / "tilelens.toml").write_text(tables)
    return root


@pytest.fixture(scope="module")
def runs(ws: Path) -> dict:
    out = {}
    whole = check("check", ".", "--format", "json", cwd=ws)
    assert whole.returncode in (0, 1), whole.stderr
    out["whole"] = (whole.returncode, whole.stdout)
    for k in range(1, N + 1):
        part = check("check", ".", "--format", "json", "--shard", f"{k}/{N}", "--jobs", "2", cwd=ws)
        assert part.returncode in (0, 1), part.stderr
        (ws / f"shard{k}.json").write_text(part.stdout)
        out[k] = (part.returncode, json.loads(part.stdout))
    return out


def test_every_launch_is_in_exactly_one_shard(runs):
    whole = json.loads(runs["whole"][1])
    expected = {(f["path"], i) for f in whole["files"] for i, _ in enumerate(_declared(f))}
    held: list[tuple[str, int]] = []
    for k in range(1, N + 1):
        doc = runs[k][1]
        assert doc["shard"] == {"index": k, "count": N}
        for f in doc["files"]:
            held += sorted({(f["path"], launch["index"]) for launch in f["launches"]})
    assert len(held) == len(set(held))  # no launch in two shards
    assert {p for p, _ in held} <= {p for p, _ in expected}
    n_launches = sum(len(f["launches"]) for k in range(1, N + 1) for f in runs[k][1]["files"])
    assert n_launches == sum(len(f["launches"]) for f in whole["files"])  # every config of every launch once
    assert sum(1 for k in range(1, N + 1) if any(f["launches"] for f in runs[k][1]["files"])) > 1


def _declared(f: dict) -> list:
    """A file's declared launches, one per (line, kernel) run of configs (enough to count them here)."""
    seen = []
    for launch in f["launches"]:
        key = (launch["kernel"], launch["line"])
        if not seen or seen[-1] != key:
            seen.append(key)
    return seen


def test_the_merged_shards_equal_the_unsharded_run(ws: Path, runs):
    shards = [f"shard{k}.json" for k in (3, 1, 2)]  # any order
    merged = check("merge", *shards, cwd=ws)
    assert merged.returncode == runs["whole"][0], merged.stderr
    assert json.loads(merged.stdout) == json.loads(runs["whole"][1])
    whole_sarif = check("check", ".", "--format", "sarif", cwd=ws).stdout
    assert json.loads(check("merge", *shards, "--format", "sarif", cwd=ws).stdout) == json.loads(whole_sarif)
    codes = {d["code"] for f in json.loads(merged.stdout)["files"] for d in f["diagnostics"]}
    assert {"TL010", "TL020", "TL100"} <= codes


def test_merge_refuses_an_incomplete_or_repeated_set(ws: Path, runs):
    missing = check("merge", "shard1.json", "shard2.json", cwd=ws)
    assert missing.returncode == 2 and "shards missing" in missing.stderr
    twice = check("merge", "shard1.json", "shard1.json", "shard2.json", "shard3.json", cwd=ws)
    assert twice.returncode == 2 and "twice" in twice.stderr
    assert check("merge", "shard1.json", "shard2.json", "--partial", cwd=ws).returncode in (0, 1)


def test_a_sarif_shard_carries_its_category(ws: Path):
    doc = json.loads(check("check", "vector_add.py", "--format", "sarif", "--shard", "2/4", cwd=ws).stdout)
    assert doc["runs"][0]["automationDetails"] == {"id": "tilelens-shard-2-of-4/"}


def test_a_launch_keeps_its_shard_whatever_else_changes():
    plan = {"launches": [{"kernel": "k", "origin": "comment", "line": line} for line in (3, 5, 9)]}
    keys = launch_keys("pkg/a.py", plan)
    moved = launch_keys("pkg/a.py", {"launches": [{"kernel": "j", "origin": "comment", "line": 1}] + plan["launches"]})
    assert moved[1:] == keys  # a launch declared before them changes no key
    for n in (2, 7, 64):
        owners = [[k for k in range(1, n + 1) if Share(k, n).owns(key)] for key in keys]
        assert all(len(o) == 1 for o in owners)
    spread = {k for key in (f"f{i}.py|k|comment|1|1" for i in range(200)) for k in range(1, 9) if Share(k, 8).owns(key)}
    assert spread == set(range(1, 9))


@pytest.mark.parametrize("bad", ["0/3", "4/3", "3", "a/b", "1/0", "-1/2"])
def test_shard_syntax(bad: str):
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        parse_share(bad)
    assert parse_share("2/5") == Share(2, 5)
