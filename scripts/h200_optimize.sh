#!/usr/bin/env bash
# On the H200, from the repo root: install kernelgen and kernelgen_ops, optionally run the GPU
# tests, run `kernelgen optimize --proposer tune` per operator (promotion included), measure the
# library's host overhead, and write the status page. Results land in $OUT as results.tgz
# (evaluations/ + generated/), re-packed after every step, so a call cut short by its time limit
# still brings back every finished run. Operators whose tune run already finished on CUDA
# (committed under evaluations/) are skipped, so the next call picks up where this one stopped;
# RERUN=1 runs them again (after a change to the engine).
#   [TESTS=1] [RERUN=1] [DEADLINE=540] scripts/h200_optimize.sh [OP ...]
#   (default ops: silu_and_mul rms_norm softmax; DEADLINE: seconds this script may use)
set -x
set -o pipefail
start=$(date +%s)
OUT=${OUT:-/tmp/kernelgen-out}
DEADLINE=${DEADLINE:-540}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export KERNELGEN_CACHE=$PWD/evaluations/ceilings-cache
mkdir -p "$KERNELGEN_CACHE" && cp evaluations/ceilings/*.json "$KERNELGEN_CACHE"/ 2>/dev/null
failed=""
left() { echo $((DEADLINE - ($(date +%s) - start))); }
pack() { tar czf "$OUT/results.tgz" --exclude=evaluations/ceilings-cache evaluations generated; }
trap pack EXIT

if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || failed="$failed wheels"
  export PYTHONPATH=/tmp/site:$PWD
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./generated || failed="$failed install"

if [ "${TESTS:-0}" = 1 ]; then
  # The library's tests all run on CUDA when it is there; the pipeline's GPU tests are marked.
  python3 -m pytest -q generated/tests -k "not install" 2>&1 | tee "$OUT/pytest.log" || failed="$failed pytest-generated"
  python3 -m pytest -q -m gpu tests 2>&1 | tee -a "$OUT/pytest.log" || failed="$failed pytest-gpu"
fi

for op in ${*:-silu_and_mul rms_norm softmax}; do
  if [ "${RERUN:-0}" != 1 ] && grep -ls '"proposer": "tune"' evaluations/$op/*/run.json 2>/dev/null | xargs -r grep -l '"state": "finished"' | xargs -r grep -lq '"device": "cuda"'; then
    echo "skip $op: a finished CUDA tune run is already here"; continue
  fi
  budget=$(( $(left) - 45 ))  # keep time to pack
  if [ "$budget" -lt 150 ]; then echo "skip $op: ${budget}s left"; failed="$failed no-time-$op"; continue; fi
  timeout "$budget" kernelgen optimize "$op" --proposer tune --device cuda --rounds 2 \
    --candidates 1 --json 2>&1 | tee -a "$OUT/optimize.log" || failed="$failed optimize-$op"
  pack
done

if [ "$(left)" -gt 90 ]; then
  timeout 60 python3 scripts/host_overhead.py evaluations/host_overhead.json 2>&1 | tee "$OUT/overhead.log" || failed="$failed overhead"
fi
kernelgen report --all --json 2>&1 | tail -3 | tee "$OUT/status.log" || failed="$failed status"
rm -rf "$KERNELGEN_CACHE"
echo "failed steps:${failed:- none}"
[ -z "$failed" ]
