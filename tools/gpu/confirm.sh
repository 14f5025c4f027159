#!/usr/bin/env bash
# On a CUDA machine: run each bug kernel under compute-sanitizer memcheck, then capture a real GPU
# workload. Writes $OUT/memcheck.txt (one line per file: whether memcheck reported an error) and
# $OUT/gpu_capture.toml. Usage (from the repository root): bash tools/gpu/confirm.sh
set -u
OUT="${OUT:-/tmp/tilelens-gpu}"
mkdir -p "$OUT"
: > "$OUT/memcheck.txt"
for f in tests/conformance/bugs/*.py; do
  case "$f" in *int32_overflow*) continue ;; esac   # tensors of billions of elements: minutes each under memcheck
  log="$(mktemp)"
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 python3 tools/gpu/launch.py "$f" > "$log" 2>&1
  rc=$?
  errors=$(grep -c "Invalid __global__" "$log")
  echo "$(basename "$f") rc=$rc invalid_global_accesses=$errors" >> "$OUT/memcheck.txt"
  { echo "===== $f (rc $rc)"; tail -c 20000 "$log"; } >> "$OUT/memcheck.log"
  rm -f "$log"
done
[ -n "${SKIP_CAPTURE:-}" ] && exit 0
python3 -m tilelens_lsp capture --out "$OUT/gpu_capture.toml" --per-kernel 4 -- python3 tools/gpu/workload.py \
  > "$OUT/capture.log" 2>&1
echo "capture rc=$?" >> "$OUT/capture.log"
