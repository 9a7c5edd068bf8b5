#!/usr/bin/env bash
# On the H200 machine, from the repo root: the environment, the GPU tests, then verify and bench
# the seed of each operator. Logs, the new evaluation records and the measured ceilings land in
# $OUT (4 files: env.log, pytest.log, ops.log, evaluations.tgz).
#
# The machine's image lacks pydantic and openai: run shared/gpu/wheels.sh here first and carry
# .whl along (device run: carry [".whl"]). Every step runs even when an earlier one failed; the
# last line lists the failed ones, and the exit status is 1 if there were any.
set -x
set -o pipefail
OUT=${OUT:-/tmp/kernelgen-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
export KERNELGEN_CACHE=${KERNELGEN_CACHE:-$HOME/.cache/kernelgen}
failed=""
marker=$(mktemp)

if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || failed="$failed wheels"
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=$PWD
fi
# kernelgen is not installed there: run the CLI from the checkout.
command -v kernelgen >/dev/null ||
  kernelgen() { python3 -c 'import sys; from kernelgen.cli import app; sys.argv[0] = "kernelgen"; app()' "$@"; }

{ nvidia-smi; python3 -c 'import torch, triton; print("torch", torch.__version__, "cuda", torch.version.cuda, "triton", triton.__version__, "gpu", torch.cuda.get_device_name())'; } 2>&1 | tee "$OUT/env.log" || failed="$failed env"

python3 -m pytest -m gpu -q 2>&1 | tee "$OUT/pytest.log" || failed="$failed pytest"

for op in softmax rms_norm silu_and_mul; do
  kernelgen verify "$op" "seeds/$op.py" --device cuda --json 2>&1 | tee -a "$OUT/ops.log" || failed="$failed verify-$op"
  kernelgen bench "$op" --seed --json 2>&1 | tee -a "$OUT/ops.log" || failed="$failed bench-$op"
done

# New evaluation records and the ceilings cache, in one archive (the device returns few files).
{ find evaluations -name '*.json' -newer "$marker" 2>/dev/null; find "$KERNELGEN_CACHE" -name 'ceilings-*.json' 2>/dev/null; } |
  tar czf "$OUT/evaluations.tgz" -T - || failed="$failed archive"
tar tzf "$OUT/evaluations.tgz"

echo "failed steps:${failed:- none}"
[ -z "$failed" ]
