#!/usr/bin/env bash
# On the H200 (carry .whl): the shipped kernels of OPs re-measured unchanged through the agent
# path (scripts/remeasure_plan.py), each new run promoted, then the library's figures on what
# that promotion wrote (scripts/h200_library.sh, its own variables apply). Every step writes
# under $OUT as it goes: agent/ (results.tgz: the runs), promote-OP.log, promoted.tgz (the
# promoted files, to compare with the promotion made from the committed run), then the library's.
#   WHY="what changed" [AGENT_S=240] bash scripts/h200_remeasure.sh OP [OP ...]
. scripts/h200_env.sh
python3 scripts/remeasure_plan.py "$@" --why "${WHY:?say what changed since the shipped record}" \
  > "$OUT/plan.json" || exit 1
(OUT=$OUT/agent bash scripts/h200_agent.sh "$OUT/plan.json" "${AGENT_S:-240}")
promoted=()
for op in "$@"; do
  # The run this call started for OP: its "start" step in the agent's log.
  run=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    s = json.loads(line)
    if s["step"] == "start" and s["op"] == sys.argv[2] and s["ok"]:
        print(s["result"]["id"])' "$OUT/agent/agent.jsonl" "$op")
  if [ -z "$run" ]; then
    echo "== promote $op: no run started"
    continue
  fi
  python3 -m kernelgen promote "$op" --run "$run" > "$OUT/promote-$op.log" 2>&1
  echo "== promote $op --run $run: rc=$?"
  tail -n 3 "$OUT/promote-$op.log"
  promoted+=("generated/kernelgen_ops/$op.py" "generated/kernelgen_ops/configs/$op.json")
done
[ ${#promoted[@]} -gt 0 ] && tar czf "$OUT/promoted.tgz" generated/kernelgen_ops/MANIFEST.json "${promoted[@]}"
bash scripts/h200_library.sh
