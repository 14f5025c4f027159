#!/usr/bin/env bash
# The real-world corpus (issue 15): pinned PyPI packages with Triton kernels, installed (never copied)
# into their own virtual environment `.venv-corpus` (git-ignored), beside the Triton release of `.venv`
# and this checkout (editable), so `tilelens-lsp` runs there as a user's environment would run it.
#
# Every kernel package is installed with --no-deps and only the dependencies its kernel modules import;
# torch is the CPU build (`torch==2.13.0`: pip takes the +cpu wheel that lies on this machine's disk,
# about 190 MB; any other torch release from the default index is a CUDA build of several GB).
# A stamp file records the requirements: a second run with the same pins installs nothing.
#
#   bash tools/corpus_env.sh            # creates or refreshes .venv-corpus
#   .venv-corpus/bin/python tools/corpus.py
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-python3}"
venv="${TILELENS_CORPUS_VENV:-.venv-corpus}"

# The kernels: the corpus proper. Change a pin here and in tests/corpus/*.toml's header together.
kernels=("liger-kernel==0.8.5" "flag-gems==5.0.2" "fla-core==0.6.0")
# What their kernel modules import at module level, and nothing else:
#   torch (all three), einops (fla), packaging + PyYAML + sqlalchemy (flag_gems' runtime config and
#   its sqlite-backed tuning cache), and torch's own import-time dependencies.
deps=("torch==2.13.0" "einops==0.8.2" "packaging==26.0" "PyYAML==6.0.3" "sqlalchemy==2.0.48"
      "greenlet==3.2.4" "filelock==3.20.0" "typing_extensions==4.15.0" "sympy==1.14.0" "mpmath==1.3.0"
      "networkx==3.5" "jinja2==3.1.6" "MarkupSafe==3.0.3" "fsspec==2025.9.0")
# The tool itself, as in .venv: the main tested Triton release and the server's dependencies.
tool=("triton==3.9.0" "numpy==2.4.6" "pygls==2.1.1" "lsprotocol==2025.0.0" "attrs==26.1.0" "cattrs==26.2.1" "tomli-w==1.2.0")

stamp="$venv/.tilelens-corpus"
wanted="$(printf '%s\n' "${kernels[@]}" "${deps[@]}" "${tool[@]}" "$(pwd)")"
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$wanted" ] \
   && "$venv/bin/python" -c "import torch, triton, tilelens_lsp, liger_kernel, flag_gems, fla" >/dev/null 2>&1; then
  echo "corpus_env: $venv is ready"
  exit 0
fi
start=$(date +%s)
echo "corpus_env: preparing $venv"
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps)
"${pip[@]}" "${tool[@]}" "${deps[@]}"
"${pip[@]}" "${kernels[@]}"
"${pip[@]}" -e .
# flag_gems reads its vendor and tuning database at import: on a host without a GPU it imports only
# with these two (tools/corpus.py and tests/corpus set them for the worker).
GEMS_VENDOR=nvidia FLAGGEMS_DB_URL=sqlite:// "$venv/bin/python" -c \
  "import torch, triton, tilelens_lsp, liger_kernel.ops, flag_gems, fla.ops; print('corpus_env: torch', torch.__version__, 'triton', triton.__version__)"
printf '%s' "$wanted" > "$stamp"
echo "corpus_env: $venv ready in $(( $(date +%s) - start ))s ($(du -sm "$venv" | cut -f1) MB)"
