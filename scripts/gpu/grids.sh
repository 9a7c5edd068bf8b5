#!/usr/bin/env bash
# The peers' accuracy-test grids against kernelgen_ops on the GPU (scripts/peer_grids.py, issue
# [P] item 4). On the GPU machine, from the repo root, .whl carried.
#
#   [GRIDS_ARGS="--grids flaggems quack"] [GRIDS_S=480] bash scripts/gpu/grids.sh
#
# The run appends a JSON line per call to /tmp/kernelgen-grids/grids.jsonl, outside $OUT, so that
# a call cut short by GRIDS_S (default 480 s, leaving the summary and the copy-back room in a
# 600 s call) is resumed by the next call of a warm machine: the script skips the calls the file
# holds. Each call then writes $OUT/grids.jsonl (the lines so far) and $OUT/grids-summary.json
# (scripts/peer_grids.py summary); commit the summary of the call that finished as
# evaluations/grids/grids-<UTC time>.json. A cold machine starts the file afresh.
. scripts/gpu/env.sh
WORK=${GRIDS_WORK:-/tmp/kernelgen-grids}
mkdir -p "$WORK"
# shellcheck disable=SC2086 # GRIDS_ARGS is a list of options
TAIL=30 step grids timeout "${GRIDS_S:-480}" python3 scripts/peer_grids.py run "$WORK/grids.jsonl" \
  ${GRIDS_ARGS:-}
# rc=124: stopped at GRIDS_S; the next call of a warm machine resumes.
cp "$WORK/grids.jsonl" "$OUT/grids.jsonl"
TAIL=3 step summary python3 scripts/peer_grids.py summary "$WORK/grids.jsonl" "$OUT/grids-summary.json"
