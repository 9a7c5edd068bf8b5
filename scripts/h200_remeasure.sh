#!/usr/bin/env bash
# On the H200 (carry .whl): the shipped kernels of OPs re-measured unchanged through the agent
# path (scripts/remeasure_plan.py), each new run promoted, then the library's figures on what
# that promotion wrote (scripts/h200_library.sh, its own variables apply). The device tool brings
# back only a few files, so every step writes under a work folder that is packed into
# $OUT/results.tgz every 15 s and at the end (a call cut short keeps what was packed): agent/
# (the runs, results.tgz), promote-OP.log, promoted/ (the files promotion wrote, to compare with
# the promotion made from the committed run), then the library's files.
#   WHY="what changed" [AGENT_S=240] bash scripts/h200_remeasure.sh OP [OP ...]
. scripts/h200_env.sh
final=$OUT
export OUT=/tmp/kernelgen-remeasure
rm -rf "$OUT" && mkdir -p "$OUT"
pack() { tar czf "$final/results.tgz.part" -C "$OUT" . && mv "$final/results.tgz.part" "$final/results.tgz"; }
(while sleep 15; do pack; done) &
packer=$!
trap 'kill $packer 2>/dev/null; pack' EXIT
python3 scripts/remeasure_plan.py "$@" --why "${WHY:?say what changed since the shipped record}" \
  > "$OUT/plan.json" || exit 1
# --no-promote: the agent's promote refuses a kernel that does not beat itself; promoted below.
(OUT=$OUT/agent bash scripts/h200_agent.sh "$OUT/plan.json" "${AGENT_S:-240}" --no-promote)
mkdir -p "$OUT/promoted"
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
  cp "generated/kernelgen_ops/$op.py" "generated/kernelgen_ops/configs/$op.json" "$OUT/promoted/"
done
cp generated/kernelgen_ops/MANIFEST.json "$OUT/promoted/"
bash scripts/h200_library.sh
