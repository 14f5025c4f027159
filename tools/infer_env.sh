#!/usr/bin/env bash
# Inference packages whose kernels found defects (issue 29): unsloth and SGLang, installed (never copied) into
# their own virtual environment `.venv-infer` (git-ignored), on top of the corpus venv's torch and Triton
# (a .pth file adds `.venv-corpus`'s site-packages: nothing is installed twice). tests/corpus/test_inference.py
# skips when it is missing. Everything is --no-deps: the kernels' packages, and only what their kernel modules'
# imports reach (unsloth's `__init__` pulls transformers and huggingface_hub; SGLang's pulls its server
# utilities). vLLM is not installed: its kernel module imports its compiled extension; its kernels are
# extracted from the wheel (tools/extract_kernel.py), below.
#
#   bash tools/corpus_env.sh && bash tools/infer_env.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
venv="${TILELENS_INFER_VENV:-.venv-infer}"
corpus="${TILELENS_CORPUS_VENV:-.venv-corpus}"

kernels=("unsloth==2026.10.9" "unsloth-zoo==2026.10.9" "sglang==0.5.23")
deps=("transformers==5.24.0" "huggingface_hub==2.4.0" "tokenizers==0.23.3" "safetensors==0.8.0" "hf-xet==1.8.0"
      "regex==2026.11.19" "tqdm==4.70.1" "requests==2.34.2" "urllib3==2.8.0" "idna==3.20"
      "certifi==2026.10.19.post1" "charset-normalizer==3.5.3" "psutil==7.2.2" "httpx2==2.16.2"
      "httpcore2==2.16.2" "truststore==0.10.5" "h11==0.16.0" "orjson==3.13.0" "pybase64==1.5.1"
      "pillow==13.0.0" "starlette==1.10.0" "anyio==4.16.0" "msgspec==0.23.0" "pydantic==2.14.4"
      "pydantic_core==2.50.5" "typing-inspection==0.4.5" "pyzmq==27.3.0" "ipython==9.18.1" "traitlets==5.16.1"
      "Pygments==2.21.0" "aiohttp==3.14.5" "multidict==7.2.1" "yarl==1.25.1" "propcache==0.5.4"
      "aiohappyeyeballs==2.7.1" "aiosignal==1.4.0" "frozenlist==1.8.0")

[ -x "$corpus/bin/python" ] || { echo "infer_env: $corpus is missing: run tools/corpus_env.sh first" >&2; exit 2; }
stamp="$venv/.tilelens-infer"
wanted="$(printf '%s\n' "${kernels[@]}" "${deps[@]}" "$(cd "$corpus" && pwd)")"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ] \
   && [ -f "$venv/vllm-kernels/vllm_fused_moe.py" ]; then
  echo "infer_env: $venv is ready"
  exit 0
fi
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$corpus/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' > "$site/zz_tilelens_corpus.pth"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps "${deps[@]}" "${kernels[@]}"
"$venv/bin/python" -c "import unsloth.kernels.swiglu, sglang.kernels.ops.moe.moe_align_small_numel" >/dev/null

# vLLM's fused_moe_kernel: its module imports vLLM's compiled extension, so the kernels alone are extracted
# from the wheel (never into the repository) into $venv/vllm-kernels/.
if [ ! -f "$venv/vllm-kernels/vllm_fused_moe.py" ]; then
  wheels="$(mktemp -d)"
  "$venv/bin/python" -m pip download -q --disable-pip-version-check --no-deps -d "$wheels" "vllm==0.33.0"
  "$venv/bin/python" tools/extract_kernel.py "$wheels"/vllm-0.33.0-*.whl \
    vllm/model_executor/layers/fused_moe/fused_moe.py "$venv/vllm-kernels/vllm_fused_moe.py" \
    write_zeros_to_output fused_moe_kernel
  rm -rf "$wheels"
fi
printf '%s' "$wanted" > "$stamp"
echo "infer_env: $venv ready"
