#!/usr/bin/env bash
# On the H200 (carry .whl): one operator's verify, sampled, and the round-trip floor of a judged
# call (scripts/profile_verify.py), inside a short budget.   [OP=rms_norm] [BUDGET_S=110]
set -o pipefail
OUT=${OUT:-/tmp/kernelgen-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./generated || exit 1
timeout "${BUDGET_S:-110}" python3 scripts/profile_verify.py --ops "${OP:-rms_norm}" \
  --out "$OUT/profile" 2>&1 | tail -4
# Many runner files (compile runners too) and only so many come back: keep the newest three
# (the round-trip runner, the in-run candidate's, the seed's).
cd "$OUT/profile/${OP:-rms_norm}-runners" && ls -t | tail -n +4 | xargs -r rm -f
