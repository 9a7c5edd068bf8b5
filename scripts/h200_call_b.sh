#!/usr/bin/env bash
# On the H200 (carry .whl): where an in-run verify's time goes (rms_norm, sampled), then the GPU
# half of the verifier's adversarial suite and the CUDA deadline test, results streamed to $OUT.
. scripts/h200_env.sh
timeout 120 python3 scripts/profile_verify.py --ops rms_norm --out "$OUT/profile" 2>&1 | tail -4
timeout "${TESTS_S:-400}" python3 -m pytest -v -m gpu tests/verify/test_holes.py \
  tests/verify/test_deadlines.py 2>&1 | grep -E "PASS|FAIL|ERROR|passed|failed|Error|assert" \
  | tee "$OUT/pytest-gpu.log" | tail -45
