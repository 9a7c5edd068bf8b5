#!/usr/bin/env bash
# On the H200 (carry .whl): one operator's verify, sampled, and the round-trip floor of a judged
# call (scripts/profile_verify.py), inside a short budget.   [OP=rms_norm] [BUDGET_S=110]
. scripts/h200_env.sh
timeout "${BUDGET_S:-110}" python3 scripts/profile_verify.py --ops "${OP:-rms_norm}" \
  --out "$OUT/profile" 2>&1 | tail -4
# Many runner files (compile runners too) and only so many come back: keep the newest three
# (the round-trip runner, the in-run candidate's, the seed's).
cd "$OUT/profile/${OP:-rms_norm}-runners" && ls -t | tail -n +4 | xargs -r rm -f
