#!/usr/bin/env bash
# On the H200, from the repo root (carry .whl): where a verify's time goes
# (scripts/profile_verify.py) and whether CUDA IPC works between processes (scripts/ipc_probe.py).
#   [OPS="softmax"] scripts/h200_profile.sh
set -o pipefail
OUT=${OUT:-/tmp/kernelgen-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH=/tmp/site:$PWD
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./generated || exit 1
timeout 60 python3 scripts/ipc_probe.py 2>&1 | tail -5 | tee "$OUT/ipc.log"
# shellcheck disable=SC2086
timeout "${BUDGET_S:-420}" python3 scripts/profile_verify.py --out "$OUT/profile" \
  --ops ${OPS:-softmax rms_norm silu_and_mul} 2>&1 | tee "$OUT/profile.log"
