#!/usr/bin/env bash
# On the H200, from the repo root (carry .whl): the pipeline benchmark (scripts/bench_pipeline.py)
# and, with TESTS, the GPU-marked tests named there. The record is written under $OUT as it goes.
#   [STEPS_SKIP="bench tune"] [TESTS=tests/verify/test_deadlines.py] scripts/h200_pipeline.sh [OP ...]
. scripts/h200_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
# shellcheck disable=SC2086
timeout "${BUDGET_S:-480}" python3 scripts/bench_pipeline.py --out "$OUT/pipeline.json" \
  --ops ${*:-softmax rms_norm silu_and_mul} --skip ${STEPS_SKIP:-} 2>&1 | tee "$OUT/pipeline.log"
if [ -n "${TESTS:-}" ]; then
  # shellcheck disable=SC2086
  python3 -m pytest -q -m gpu $TESTS 2>&1 | tail -25 | tee "$OUT/pytest-gpu.log"
fi
