#!/usr/bin/env bash
# On the H200, from the repo root: install kernelgen and kernelgen_ops, run the GPU tests, run
# `kernelgen optimize --proposer tune` per operator (promotion included), measure the library's
# host overhead, and write the status page. Operators whose tune run already finished on CUDA
# (committed under evaluations/) are skipped, so a second call picks up where a first one stopped.
# Results land in $OUT: logs, and evaluations/ + generated/ as one archive.
#   scripts/h200_optimize.sh [OP ...]      (default: silu_and_mul rms_norm softmax)
set -x
set -o pipefail
OUT=${OUT:-/tmp/kernelgen-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export KERNELGEN_CACHE=$PWD/evaluations/ceilings-cache
mkdir -p "$KERNELGEN_CACHE" && cp evaluations/ceilings/*.json "$KERNELGEN_CACHE"/ 2>/dev/null
failed=""
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || failed="$failed wheels"
  export PYTHONPATH=/tmp/site:$PWD
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./generated || failed="$failed install"

# The library's tests all run on CUDA when it is there; the pipeline's GPU tests are marked.
python3 -m pytest -q generated/tests -k "not install" 2>&1 | tee "$OUT/pytest.log" || failed="$failed pytest-generated"
python3 -m pytest -q -m gpu tests 2>&1 | tee -a "$OUT/pytest.log" || failed="$failed pytest-gpu"

ops=${*:-silu_and_mul rms_norm softmax}
for op in $ops; do
  if grep -ls '"proposer": "tune"' evaluations/$op/*/run.json 2>/dev/null | xargs -r grep -l '"state": "finished"' | xargs -r grep -lq '"device": "cuda"'; then
    echo "skip $op: a finished CUDA tune run is already here"; continue
  fi
  timeout 420 kernelgen optimize "$op" --proposer tune --device cuda --rounds 2 --candidates 1 \
    --json 2>&1 | tee -a "$OUT/optimize.log" || failed="$failed optimize-$op"
done

python3 scripts/host_overhead.py evaluations/host_overhead.json 2>&1 | tee "$OUT/overhead.log" || failed="$failed overhead"
kernelgen report --all --json 2>&1 | tail -3 | tee "$OUT/status.log" || failed="$failed status"

rm -rf "$KERNELGEN_CACHE"
tar czf "$OUT/results.tgz" evaluations generated || failed="$failed archive"
echo "failed steps:${failed:- none}"
[ -z "$failed" ]
