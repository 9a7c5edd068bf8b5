#!/usr/bin/env bash
# Each operator's seed on the GPU: judged on CUDA on every case (`kernelgen verify --json`: the
# verdict, its phases, the wall time), then `kernelgen bench OP --seed` (peers timed in the same
# run; the record lands under evaluations/OP/), optionally under compute-sanitizer. For a new
# operator's first figures, or after a change to the judge or the bench. On the GPU machine, from
# the repo root, .whl carried.
#
#   [STEPS="verify bench"] [VERIFY_S=150] [BENCH_S=180] bash scripts/gpu/seeds.sh OP [OP ...]
#
# STEPS picks among verify, bench and sanitize (`kernelgen verify OP seeds/OP.py --sanitize`).
# Each step has its own time limit. Every file a step writes goes into $OUT/results.tgz
# (evaluations/OP, evaluations/peers, which a bench refreshes, ceilings measured here that are not
# committed yet, and the step logs), packed again after each step, so a call cut short keeps
# what finished.
. scripts/gpu/env.sh
STEPS=${STEPS:-verify bench}
ops=("$@")
[ ${#ops[@]} -gt 0 ] || { echo "usage: scripts/gpu/seeds.sh OP [OP ...]" >&2; exit 2; }
logs="$OUT/logs"
mkdir -p "$logs"
pack() {
  mkdir -p "$logs/ceilings"
  new_ceilings | xargs -r cp -t "$logs/ceilings"
  tar czf "$OUT/results.tgz" "${ops[@]/#/evaluations/}" evaluations/peers -C "$OUT" logs 2>/dev/null
}
trap pack EXIT

verify() {
  local op=$1 start=$SECONDS
  timeout "${VERIFY_S:-150}" kernelgen verify "$op" "seeds/$op.py" --device cuda --json \
    > "$logs/verify-$op.json" 2> "$logs/verify-$op.err"
  echo "$op verify: rc=$? $((SECONDS - start)) s"
  python3 - "$logs/verify-$op.json" <<'PY' || tail -c 600 "$logs/verify-$op.err"
import json, sys
v = json.load(open(sys.argv[1]))
print(" ", v["outcome"], v.get("category"), (v.get("reason") or "")[:300], "seconds", v["seconds"])
print("  phases", {k: x for k, x in (v.get("phases") or {}).items() if k != "calls"})
print("  cases", sum(c["status"] == "passed" for c in v["cases"]), "passed of", len(v["cases"]))
PY
}

bench() {
  local op=$1 start=$SECONDS
  timeout "${BENCH_S:-180}" kernelgen bench "$op" --seed --json \
    > "$logs/bench-$op.json" 2> "$logs/bench-$op.err"
  echo "$op bench: rc=$? $((SECONDS - start)) s"
  tail -c 600 "$logs/bench-$op.err"
}

sanitize() {
  local op=$1 start=$SECONDS
  kernelgen verify "$op" "seeds/$op.py" --device cuda --sanitize > "$logs/sanitize-$op.log" 2>&1
  echo "$op sanitize: rc=$? $((SECONDS - start)) s"
  tail -n 8 "$logs/sanitize-$op.log"
}

for op in "${ops[@]}"; do
  if has verify; then verify "$op"; pack; fi
  if has bench; then bench "$op"; pack; fi
  if has sanitize; then sanitize "$op"; pack; fi
done
