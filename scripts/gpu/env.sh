# shellcheck shell=bash
# Sourced by the scripts of scripts/gpu/, on the GPU machine, from the repo root with .whl carried
# (the wheels of ../shared/gpu/wheels.sh: the machine's image lacks pydantic, openai, mcp and the
# peers). It makes $OUT, sets Python unbuffered, installs the wheels and kernelgen and kernelgen_ops
# editable (exiting the caller when an install fails), points the bench's ceilings cache at a copy
# of the committed ceilings, and prints the GPU's name, driver and clocks. A script
# that runs others sources it once for all of them: the installs are skipped where an enclosing
# script made them.
set -o pipefail
OUT=${OUT:-/tmp/kernelgen-out}
mkdir -p "$OUT"
export OUT
export PYTHONUNBUFFERED=1
if [ -z "${KERNELGEN_GPU_ENV:-}" ]; then
  if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PWD
  fi
  python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./generated || exit 1
  # The ceilings measured on this GPU are committed; the bench and the judge read them from this
  # cache, and measure (and add there) those of a GPU or stack not committed yet.
  export KERNELGEN_CACHE=${KERNELGEN_CACHE:-/tmp/kernelgen-cache}
  mkdir -p "$KERNELGEN_CACHE" && cp evaluations/ceilings/*.json "$KERNELGEN_CACHE"/ 2>/dev/null
  # Printed, not written: the device machine brings back only a few files from $OUT.
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,temperature.gpu \
    --format=csv,noheader 2>&1
  export KERNELGEN_GPU_ENV=1
fi

# step NAME COMMAND...: the command's output in $OUT/NAME.log, its status and wall time and the
# log's last TAIL lines (default 6) here. Each step writes as it goes, so a call cut short by its
# time limit keeps the steps it finished.
step() {
  local name=$1 start=$SECONDS rc
  shift
  "$@" > "$OUT/$name.log" 2>&1
  rc=$?
  echo "== $name: rc=$rc in $((SECONDS - start)) s"
  tail -n "${TAIL:-6}" "$OUT/$name.log"
  return "$rc"
}

# has WORD: whether WORD is in $STEPS (each script sets its default list).
has() { [[ " $STEPS " == *" $1 "* ]]; }

# new_ceilings: the ceilings measured here that evaluations/ceilings does not hold yet.
new_ceilings() {
  local f
  for f in "$KERNELGEN_CACHE"/ceilings-*.json; do
    [ -e "$f" ] && [ ! -e "evaluations/ceilings/$(basename "$f")" ] && echo "$f"
  done
  return 0
}
