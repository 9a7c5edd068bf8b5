#!/usr/bin/env bash
# On the H200 (carry .whl): the GPU half of the verifier's adversarial suite and the CUDA deadline
# test (TESTS_K picks cases, as pytest -k), then where an in-run verify's time goes (rms_norm,
# sampled, with the round-trip floor). Results stream to $OUT.   [TESTS_S=400] [TESTS_K=...]
. scripts/h200_env.sh
timeout "${TESTS_S:-400}" python3 -m pytest -v -m gpu tests/verify/test_holes.py \
  tests/verify/test_deadlines.py ${TESTS_K:+-k "$TESTS_K"} 2>&1 \
  | grep -E "PASS|FAIL|ERROR|passed|failed|Error|assert" | tee "$OUT/pytest-gpu.log" | tail -45
timeout "${PROFILE_S:-120}" python3 scripts/profile_verify.py --ops rms_norm --out "$OUT/profile" 2>&1 | tail -8
cd "$OUT/profile/rms_norm-runners" 2>/dev/null && ls -t | tail -n +4 | xargs -r rm -f
