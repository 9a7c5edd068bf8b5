#!/usr/bin/env bash
# On the H200 (carry .whl), from the repo root: per operator, the seed judged on CUDA on every
# case (`kernelgen verify --json`), then `kernelgen bench OP --seed` (peers timed in the same run;
# the record lands under evaluations/OP/). Each step has its own time limit; every file it
# writes goes into $OUT/results.tgz (evaluations/OP and the step logs), re-packed after each
# step (with evaluations/peers, which a bench refreshes), so a call cut short keeps what finished.
#   [VERIFY_S=150] [BENCH_S=180] [STEPS="verify bench"] bash scripts/h200_ops.sh OP [OP ...]
. scripts/h200_env.sh
ops=("$@")
logs="$OUT/logs"
mkdir -p "$logs"
pack() { tar czf "$OUT/results.tgz" "${ops[@]/#/evaluations/}" evaluations/peers -C "$OUT" logs 2>/dev/null; }
trap pack EXIT
has() { [[ " ${STEPS:-verify bench} " == *" $1 "* ]]; }

verify() {
  local op=$1 start
  start=$(date +%s)
  timeout "${VERIFY_S:-150}" kernelgen verify "$op" "seeds/$op.py" --device cuda --json \
    > "$logs/verify-$op.json" 2> "$logs/verify-$op.err"
  echo "$op verify: rc=$? $(( $(date +%s) - start )) s"
  python3 - "$logs/verify-$op.json" <<'PY' || tail -c 600 "$logs/verify-$op.err"
import json, sys
v = json.load(open(sys.argv[1]))
print(" ", v["outcome"], v.get("category"), (v.get("reason") or "")[:300], "seconds", v["seconds"])
print("  phases", {k: x for k, x in (v.get("phases") or {}).items() if k != "calls"})
print("  cases", sum(c["status"] == "passed" for c in v["cases"]), "passed of", len(v["cases"]))
PY
}

bench() {
  local op=$1 start
  start=$(date +%s)
  timeout "${BENCH_S:-180}" kernelgen bench "$op" --seed --json \
    > "$logs/bench-$op.json" 2> "$logs/bench-$op.err"
  echo "$op bench: rc=$? $(( $(date +%s) - start )) s"
  tail -c 600 "$logs/bench-$op.err"
}

for op in "${ops[@]}"; do
  if has verify; then verify "$op"; pack; fi
  if has bench; then bench "$op"; pack; fi
done
