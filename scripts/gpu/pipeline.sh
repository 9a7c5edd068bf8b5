#!/usr/bin/env bash
# The pipeline on the GPU: how long it takes to judge, time and tune, and the runs it makes. On the
# GPU machine, from the repo root, .whl carried. One mode a call:
#
#   bash scripts/gpu/pipeline.sh bench [OP ...]       [BUDGET_S=480] [SKIP="tune batch round"]
#     scripts/bench_pipeline.py: verify cold, warm and in-run, bench, tune, a batch's candidates
#     per GPU-minute, one optimize round ($OUT/pipeline.json; SKIP names steps to leave out).
#   bash scripts/gpu/pipeline.sh optimize [OP ...]    [RERUN=1] [DEADLINE=540] [ROUNDS=2]
#     `kernelgen optimize OP --proposer tune --device cuda` per operator (default silu_and_mul
#     rms_norm softmax), promotion included, then the status page. An operator whose tune run
#     already finished on CUDA (committed under evaluations/) is skipped unless RERUN=1; an
#     operator is started only with 150 s left of DEADLINE. $OUT/results.tgz holds evaluations/
#     and generated/, packed again after every run.
#   bash scripts/gpu/pipeline.sh agent PLAN.json [DEADLINE_S=520] [agent_plan.py's options]
#     An agent's plan through kernelgen's agent session (scripts/agent_plan.py, e.g.
#     --no-promote): $OUT/agent.jsonl, $OUT/results.tgz with the runs, as each step finishes.
#   bash scripts/gpu/pipeline.sh remeasure OP [OP ...]  [WHY="what changed"] [RESUME="OP=RUN ..."]
#                                                     [AGENT_S=240]
#     The shipped kernels of OPs re-measured unchanged through the agent path
#     (scripts/remeasure_plan.py), each new run promoted (`kernelgen promote`), then the library's
#     figures on what that promotion wrote (scripts/gpu/library.sh; its variables apply). All of
#     it under one work folder packed into $OUT/results.tgz every 15 s and at the end: agent/,
#     promote-OP.log, promoted/ (the files promotion wrote), then the library's files.
#   bash scripts/gpu/pipeline.sh workers              [WORKERS=3] [WORKER_OPS=silu_and_mul]
#                                                     [WORKERS_S=150]
#     scripts/shared_workers.py: WORKERS evaluation workers sharing the one GPU give the same
#     verdicts as one worker ($OUT/workers/workers.json).
. scripts/gpu/env.sh
usage() {
  echo "usage: scripts/gpu/pipeline.sh bench|optimize|agent|remeasure|workers [ARG ...]" >&2
  exit 2
}

bench() {
  local ops=("$@")
  [ ${#ops[@]} -gt 0 ] || ops=(softmax rms_norm silu_and_mul)
  # shellcheck disable=SC2086 # SKIP is a list of steps
  timeout "${BUDGET_S:-480}" python3 scripts/bench_pipeline.py --out "$OUT/pipeline.json" \
    --ops "${ops[@]}" --skip ${SKIP:-} 2>&1 | tee "$OUT/pipeline.log"
}

optimize() {
  local start=$SECONDS deadline=${DEADLINE:-540} failed="" op budget
  local ops=("$@")
  [ ${#ops[@]} -gt 0 ] || ops=(silu_and_mul rms_norm softmax)
  pack() { tar czf "$OUT/results.tgz" --exclude='*.egg-info' evaluations generated; }
  trap pack EXIT
  for op in "${ops[@]}"; do
    if [ "${RERUN:-0}" != 1 ] && grep -ls '"proposer": "tune"' "evaluations/$op"/*/run.json 2>/dev/null |
      xargs -r grep -l '"state": "finished"' | xargs -r grep -lq '"device": "cuda"'; then
      echo "skip $op: a finished CUDA tune run is already here"
      continue
    fi
    budget=$((deadline - (SECONDS - start) - 45)) # keep time to pack
    if [ "$budget" -lt 150 ]; then
      echo "skip $op: ${budget}s left"
      failed="$failed no-time-$op"
      continue
    fi
    timeout "$budget" kernelgen optimize "$op" --proposer tune --device cuda \
      --rounds "${ROUNDS:-2}" --candidates 1 --json 2>&1 | tee -a "$OUT/optimize.log" ||
      failed="$failed optimize-$op"
    pack
  done
  kernelgen report --all --json 2>&1 | tail -3 || failed="$failed status"
  echo "failed steps:${failed:- none}"
  [ -z "$failed" ]
}

agent() {
  [ -n "${1:-}" ] || usage
  local out=${AGENT_OUT:-$OUT}
  mkdir -p "$out"
  python3 scripts/agent_plan.py "$1" --out "$out" --deadline-s "${2:-520}" "${@:3}" \
    2> "$out/stderr.log" | cut -c1-600
  tail -5 "$out/stderr.log"
}

remeasure() {
  [ $# -gt 0 ] || usage
  local op run
  # Globals: the EXIT trap runs after this function has returned.
  final=$OUT
  export OUT=/tmp/kernelgen-remeasure
  rm -rf "$OUT" && mkdir -p "$OUT/agent" "$OUT/promoted"
  pack() { tar czf "$final/results.tgz.part" -C "$OUT" . && mv "$final/results.tgz.part" "$final/results.tgz"; }
  (while sleep 15; do pack; done) &
  packer=$!
  trap 'kill $packer 2>/dev/null; pack' EXIT
  local resume=()
  for r in ${RESUME:-}; do resume+=(--resume "$r"); done
  python3 scripts/remeasure_plan.py "$@" ${WHY:+--why "$WHY"} "${resume[@]}" > "$OUT/plan.json" ||
    exit 1
  # The agent's promote runs the sanitizer, which promotion requires, then refuses a kernel that
  # does not beat itself: `kernelgen promote` below promotes it.
  AGENT_OUT=$OUT/agent agent "$OUT/plan.json" "${AGENT_S:-240}"
  for op in "$@"; do
    # OP's run: the plan's (resumed), or the one this call started (its "start" step).
    run=$(python3 -c 'import json, sys
runs = [i["run"] for i in json.load(open(sys.argv[1])) if i["op"] == sys.argv[3] and "run" in i]
for line in open(sys.argv[2]):
    s = json.loads(line)
    if s["step"] == "start" and s["op"] == sys.argv[3] and s["ok"]:
        runs.append(s["result"]["id"])
print(runs[-1] if runs else "")' "$OUT/plan.json" "$OUT/agent/agent.jsonl" "$op")
    if [ -z "$run" ]; then
      echo "== promote $op: no run started"
      continue
    fi
    python3 -m kernelgen promote "$op" --run "$run" > "$OUT/promote-$op.log" 2>&1
    echo "== promote $op --run $run: rc=$?"
    tail -n 3 "$OUT/promote-$op.log"
    cp "generated/kernelgen_ops/$op.py" "generated/kernelgen_ops/configs/$op.json" "$OUT/promoted/"
  done
  cp generated/kernelgen_ops/MANIFEST.json "$OUT/promoted/"
  bash scripts/gpu/library.sh
}

workers() {
  # timeout: whatever hangs, the call still ends with what was written.
  step workers timeout $((${WORKERS_S:-150} + 60)) \
    python3 scripts/shared_workers.py "$OUT/workers" --workers "${WORKERS:-3}" \
    --ops "${WORKER_OPS:-silu_and_mul}" --budget-s "${WORKERS_S:-150}"
}

mode=${1:-}
shift || true
case "$mode" in
  bench | optimize | agent | remeasure | workers) "$mode" "$@" ;;
  *) usage ;;
esac
