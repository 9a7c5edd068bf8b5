#!/usr/bin/env bash
# On the H200 (carry .whl): a GPU smoke test of the judge's pieces first (stop there if it fails),
# then the pipeline benchmark for the three seeds, smallest first.
set -o pipefail
OUT=${OUT:-/tmp/kernelgen-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./generated || exit 1
python3 -m pytest -q -m gpu tests/verify/test_tensors.py 2>&1 | tail -3 | tee "$OUT/smoke.log" || exit 1
grep -q passed "$OUT/smoke.log" && ! grep -q failed "$OUT/smoke.log" || exit 1
BUDGET_S=${BUDGET_S:-500} bash scripts/h200_pipeline.sh silu_and_mul rms_norm softmax
