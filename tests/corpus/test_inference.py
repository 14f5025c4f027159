"""Defects found on inference packages' kernels (issue 29), checked on the installed packages themselves:
unsloth's findings at the access's line (its import turns Triton's line info off), SGLang's
moe_align_small_numel analysed without a crash. Skips, saying why, when `.venv-infer` is absent
(`bash tools/infer_env.sh`); the mechanisms are pinned without the packages in tests/unit/compile/test_declare.py."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.corpus_cli import check_json

REPO = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("TILELENS_INFER_VENV", REPO / ".venv-infer"))
PYTHON = VENV / "bin" / "python"


def _importable(module: str) -> str | None:
    """None when `module` imports in the inference venv, else why not."""
    if not PYTHON.exists():
        return f"the inference venv {VENV} is absent: create it with `bash tools/infer_env.sh`"
    proc = subprocess.run(
        [str(PYTHON), "-c", f"import {module}; print({module}.__file__)"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd="/",
    )
    if proc.returncode != 0:
        return f"{module} does not import in {PYTHON}: {proc.stderr.strip().splitlines()[-1:]}"
    return None


def _check(tmp_path: Path, module: str, launch: str) -> dict:
    config = tmp_path / "tilelens.toml"
    config.write_text(f'[[launch]]\nmodule = "{module}"\nlaunch = {json.dumps(launch)}\n')
    [file] = check_json(config, tmp_path, python=PYTHON, timeout=600, cache=False)["files"]
    return file


def _source(module: str) -> Path:
    out = (
        subprocess.run(
            [str(PYTHON), "-c", f"import {module}; print({module}.__file__)"],
            capture_output=True,
            text=True,
            timeout=300,
            cwd="/",
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    return Path(out)


def test_unsloth_findings_land_on_the_access_line(tmp_path):
    module = "unsloth.kernels.swiglu"
    why = _importable(module)
    if why:
        pytest.skip(why)
    lines = _source(module).read_text().splitlines()
    load = next(i for i, line in enumerate(lines, 1) if "e_row = tl.load(e + offsets" in line)
    file = _check(
        tmp_path,
        module,
        "_fg_kernel[(cdiv(3000, 1024),)](fp16[2000], fp16[3000], fp16[3000], 3000, BLOCK_SIZE=1024, LONG_INDEXING=0)",
    )
    [launch] = file["launches"]
    assert [(d["code"], d["line"]) for d in launch["diagnostics"]] == [("TL001", load)]


def test_sglang_moe_align_small_numel_is_analysed_without_a_crash(tmp_path):
    module = "sglang.kernels.ops.moe.moe_align_small_numel"
    why = _importable(module)
    if why:
        pytest.skip(why)
    # 12 (token, slot) expert ids in [-1, 8): 9 buckets, block size 16, the buffers sized as its caller sizes them
    file = _check(
        tmp_path,
        module,
        "_moe_align_small_numel_kernel[(1,)](i32[12].values(-1, 8), i32[12 + 9 * 15], "
        "i32[cdiv(12 + 9 * 15, 16)], i32[1], 9, 16, 12, NP=16, NB=16)",
    )
    [launch] = file["launches"]
    codes = [d["code"] for d in launch["diagnostics"]]
    assert "TL050" not in codes, launch["diagnostics"]
    # its fill loop runs `cdiv(total, NP)` times, `total` computed from the loaded ids: a data-dependent trip
    # count, refused by name until such loops are bounded by the declared ranges
    assert launch["status"] == "analyzed" or codes == ["TL030"], launch["diagnostics"]


VLLM = VENV / "vllm-kernels" / "vllm_fused_moe.py"
# vLLM's fused_moe_kernel as vLLM launches it for an fp16 MoE (E experts, top-k routing, block-aligned
# sorted token ids): compute_type is a dtype-valued constexpr. The output's rows are S elements apart (a
# strided view of a wider buffer), so row * stride passes 2**31 at 2056 routed tokens.
FUSED_MOE = """fused_moe_kernel[(cdiv(EM, BM) * cdiv(N, BN),)](
    fp16[M, K], fp16[E, N, K], tensor(fp16, (M, TOPK, N), strides=(TOPK * S, S, 1), storage=M * TOPK * S),
    None, None, None, fp32[NUMEL],
    i32[EM].values(0, NUMEL), i32[cdiv(EM, BM)].values(0, E), i32[1].values(0, (EM // BM) * BM + 1),
    N, K, EM, NUMEL, K, 1, N * K, 1, K, S, 1, 0, 0, 0, 0, 0, 0, 0,
    group_n=0, group_k=0, naive_block_assignment=False, BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK,
    GROUP_SIZE_M=1, SPLIT_K=1, MUL_ROUTED_WEIGHT=False, top_k=TOPK, compute_type=tl.float16,
    use_fp8_w8a8=False, use_int8_w8a8=False, use_int8_w8a16=False, per_channel_quant=False, HAS_BIAS=False,
    SWAP_AB=False)"""
LET = "TOPK = 2; E = 8; N = 64; K = 64; BM = 16; BN = 64; BK = 32; NUMEL = M * TOPK; EM = NUMEL + E * (BM - 1)"


def _fused_moe(tmp_path: Path, kernel_file: Path, m: int, row_stride: int) -> dict:
    config = tmp_path / "tilelens.toml"
    config.write_text(
        f'[[launch]]\nfile = "{kernel_file}"\nlet = "M = {m}; S = {row_stride}; {LET}"\nlaunch = """{FUSED_MOE}"""\n'
    )
    [file] = check_json(config, tmp_path, timeout=600, cache=False)["files"]
    [launch] = file["launches"]
    return launch


def test_vllm_fused_moe_with_a_declared_compute_type_is_analysed_and_its_int64_fix_holds(tmp_path):
    if not VLLM.exists():
        pytest.skip(f"{VLLM} is absent: `bash tools/infer_env.sh` extracts vLLM's kernels from its wheel")
    small = _fused_moe(tmp_path, VLLM, 20, 64)
    assert small["status"] == "analyzed" and small["diagnostics"] == [], small["diagnostics"]
    assert small["config"]["compute_type"] == "fp16"
    wide = _fused_moe(tmp_path, VLLM, 1028, 2**21)  # vLLM 0.33 casts the token index to int64
    assert wide["status"] == "analyzed" and wide["diagnostics"] == [], wide["diagnostics"]
    # the kernel as it was before that cast (vllm#34507): the same launch overflows, with its witness
    source = VLLM.read_text()
    assert source.count("    offs_token = offs_token.to(tl.int64)\n") == 1
    before = tmp_path / "fused_moe_before_fix.py"
    before.write_text(source.replace("    offs_token = offs_token.to(tl.int64)\n", "    pass\n"))
    overflow = [d for d in _fused_moe(tmp_path, before, 1028, 2**21)["diagnostics"] if d["code"] == "TL003"]
    assert overflow and overflow[0]["witness"]["value"] == 2055 * 2**21
    assert "stride_cm * offs_token" in before.read_text().splitlines()[overflow[0]["line"] - 1]
