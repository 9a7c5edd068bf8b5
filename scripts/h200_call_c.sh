#!/usr/bin/env bash
# On the H200 (carry .whl): an agent plan (scripts/h200_agent.sh), then as much of the GPU
# adversarial suite as the rest of the call allows.   PLAN.json AGENT_S TESTS_S [TESTS_K]
bash scripts/h200_agent.sh "$1" "$2"
. scripts/h200_env.sh
timeout "$3" python3 -m pytest -v -m gpu tests/verify/test_holes.py tests/verify/test_deadlines.py \
  ${4:+-k "$4"} 2>&1 | grep -E "PASS|FAIL|ERROR|passed|failed|Error|assert" \
  | tee "$OUT/pytest-gpu.log" | tail -30
