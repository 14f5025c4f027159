#!/usr/bin/env bash
# The IR tests under one Triton release: `.ci/matrix.sh RELEASE [PYTEST ARGS...]`, e.g. `.ci/matrix.sh 3.6`;
# `.ci/matrix.sh all` runs every release of tilelens_lsp/releases.py's TESTED_RELEASES except the one
# installed in `.venv` (the main release, whose suite .ci/run runs there).
#
# Creates `.venv-RELEASE` with that Triton and the test dependencies when it is missing or was made
# for other requirements (a stamp file records them: a second run skips pip entirely), installs this
# checkout into it (editable, no deps), then runs tests/unit, tests/golden, tests/conformance and
# tests/release there. The release's goldens (tests/golden/RELEASE/) are compared byte for byte;
# regenerate them with `.venv-RELEASE/bin/python tests/golden/generate.py`, after reading the diff.
# A release that TESTED_RELEASES does not list runs with TILELENS_IR_ALLOW_UNTESTED_TRITON=1 (to try
# a candidate release); otherwise its IR tests would all skip.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
  echo "usage: .ci/matrix.sh RELEASE|all [PYTEST ARGS...]   (e.g. 3.6)" >&2
  exit 2
fi
python="${PYTHON:-python3}"

# The patch release each minor release is tested at (the goldens were generated with these).
pinned() {
  case "$1" in
    3.6) echo "triton==3.6.0" ;;
    3.7) echo "triton==3.7.1" ;;
    3.8) echo "triton==3.8.0" ;;
    3.9) echo "triton==3.9.0" ;;
    *) echo "triton==$1.*" ;;
  esac
}

run_release() {
  local release="$1"
  shift
  if ! [[ "$release" =~ ^[0-9]+\.[0-9]+$ ]]; then
    echo "matrix.sh: RELEASE is MAJOR.MINOR (e.g. 3.8) or 'all', got '$release'" >&2
    return 2
  fi
  local venv=".venv-$release"
  # Triton 3.6's interpreter (the conformance oracle) converts 1-element arrays with int(), which
  # numpy 2.4 refuses ("only 0-dimensional arrays can be converted to Python scalars").
  local numpy_spec="numpy>=1.26"
  case "$release" in
    3.6) numpy_spec="numpy>=1.26,<2.4" ;;
  esac
  local requirements=("$(pinned "$release")" "$numpy_spec" "pytest>=8" "hypothesis>=6" "pygls>=2.0,<3"
                      "lsprotocol>=2025.0.0" "pytest-asyncio" "jsonschema>=4" "tomli-w>=1.0")
  local stamp="$venv/.tilelens-matrix"
  local wanted
  wanted="$(printf '%s\n' "${requirements[@]}" "$(pwd)")"
  local start
  start=$(date +%s)
  if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ] \
     || ! "$venv/bin/python" -c "import triton, tilelens_lsp" >/dev/null 2>&1; then
    echo "matrix.sh: preparing $venv"
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "${requirements[@]}"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e .
    printf '%s' "$wanted" > "$stamp"
  fi

  local installed
  installed="$("$venv/bin/python" -c "import triton; print(triton.__version__)")"
  case "$installed" in
    "$release".*) ;;
    *) echo "matrix.sh: $venv holds Triton $installed, not $release" >&2; return 2 ;;
  esac
  local allow=()
  if ! "$venv/bin/python" -c "import sys, tilelens_lsp.releases as r; sys.exit(0 if r.is_tested('$installed') else 1)"; then
    echo "matrix.sh: Triton $release is not in TESTED_RELEASES: running with TILELENS_IR_ALLOW_UNTESTED_TRITON=1"
    allow=(env TILELENS_IR_ALLOW_UNTESTED_TRITON=1)
  fi
  echo "matrix.sh: Triton $installed in $venv (ready in $(( $(date +%s) - start ))s)"

  local status=0
  ${allow[@]+"${allow[@]}"} "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    tests/unit tests/golden tests/conformance tests/release "$@" || status=$?
  echo "matrix.sh: Triton $installed: pytest exit $status in $(( $(date +%s) - start ))s"
  return $status
}

if [ "$1" = "all" ]; then
  shift
  main_release="$(.venv/bin/python -c "import triton; print('.'.join(triton.__version__.split('.')[:2]))" 2>/dev/null || true)"
  releases="$(PYTHONPATH=. "$python" -c "from tilelens_lsp.releases import TESTED_RELEASES as t; print(' '.join(t))")"
  overall=0
  for release in $releases; do
    [ "$release" = "$main_release" ] && continue
    run_release "$release" "$@" || overall=1
  done
  exit $overall
fi
run_release "$@"
