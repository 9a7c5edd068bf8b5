#!/usr/bin/env bash
# On the H200 (carry .whl): the shipped kernels of OPs re-measured unchanged through the agent
# path (scripts/remeasure_plan.py), each new run promoted, then the library's figures on what
# that promotion wrote (scripts/h200_library.sh, its own variables apply). The device tool brings
# back only a few files, so every step writes under a work folder that is packed into
# $OUT/results.tgz every 15 s and at the end (a call cut short keeps what was packed): agent/
# (the runs, results.tgz), promote-OP.log, promoted/ (the files promotion wrote, to compare with
# the promotion made from the committed run), then the library's files.
#   [WHY="what changed" (for each OP not resumed)] [RESUME="OP=RUN ..."] [AGENT_S=240] \
#     bash scripts/h200_remeasure.sh OP [OP ...]
. scripts/h200_env.sh
final=$OUT
export OUT=/tmp/kernelgen-remeasure
rm -rf "$OUT" && mkdir -p "$OUT"
pack() { tar czf "$final/results.tgz.part" -C "$OUT" . && mv "$final/results.tgz.part" "$final/results.tgz"; }
(while sleep 15; do pack; done) &
packer=$!
trap 'kill $packer 2>/dev/null; pack' EXIT
resume=()
for r in ${RESUME:-}; do resume+=(--resume "$r"); done
python3 scripts/remeasure_plan.py "$@" ${WHY:+--why "$WHY"} "${resume[@]}" > "$OUT/plan.json" \
  || exit 1
# The agent's promote runs the sanitizer, which promotion requires, then refuses a kernel that
# does not beat itself: `kernelgen promote` below promotes it.
(OUT=$OUT/agent bash scripts/h200_agent.sh "$OUT/plan.json" "${AGENT_S:-240}")
mkdir -p "$OUT/promoted"
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
bash scripts/h200_library.sh
