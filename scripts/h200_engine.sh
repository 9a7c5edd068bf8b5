#!/usr/bin/env bash
# On the H200, from the repo root: the evaluation engine's checks. Verifies each seed on CUDA
# (wall time per operator), one seed under compute-sanitizer, and runs the GPU-marked tests of
# the verifier (deadlines, the adversarial suite). Everything lands under $OUT as it goes.
#   scripts/h200_engine.sh            (carry .whl; see ../shared/gpu/wheels.sh)
. scripts/h200_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv | tee "$OUT/gpu.txt"
log="$OUT/engine.log"
for op in ${OPS:-softmax rms_norm silu_and_mul}; do
  s=$(date +%s%N)
  python3 -m kernelgen verify "$op" "seeds/$op.py" --device cuda --json > "$OUT/verify-$op.json" 2> "$OUT/verify-$op.err"
  rc=$?
  echo "verify $op: rc=$rc wall=$(( ($(date +%s%N) - s) / 1000000 )) ms" | tee -a "$log"
  python3 - "$OUT/verify-$op.json" <<'PY' | tee -a "$log"
import json, sys
try:
    v = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
except Exception as e:
    print("  no verdict:", e); sys.exit()
run = sum(c["status"] != "not_run" for c in v["cases"])
print(f"  {v['outcome']} {v.get('category')} {v.get('reason')}; {run}/{len(v['cases'])} cases; "
      f"seconds {v['seconds']} compile {v.get('compile_seconds')}")
PY
  tail -3 "$OUT/verify-$op.err" | tee -a "$log"
done
if [ "${SANITIZE:-1}" = 1 ]; then
  s=$(date +%s)
  python3 -m kernelgen verify softmax seeds/softmax.py --device cuda --sanitize 2>&1 | tail -8 | tee -a "$log"
  echo "sanitize wall $(( $(date +%s) - s )) s" | tee -a "$log"
fi
if [ -n "${TESTS:-tests/verify}" ]; then
  python3 -m pytest -q -m gpu -x ${TESTS:-tests/verify} 2>&1 | tail -30 | tee "$OUT/pytest-gpu.log"
fi
