#!/usr/bin/env bash
# On the H200 (carry .whl): a GPU smoke test of the judge's pieces first (stop there if it fails),
# then the pipeline benchmark for the three seeds, smallest first.
. scripts/h200_env.sh
python3 -m pytest -q -m gpu tests/verify/test_tensors.py 2>&1 | tail -3 | tee "$OUT/smoke.log" || exit 1
grep -q passed "$OUT/smoke.log" && ! grep -q failed "$OUT/smoke.log" || exit 1
BUDGET_S=${BUDGET_S:-500} bash scripts/h200_pipeline.sh silu_and_mul rms_norm softmax
