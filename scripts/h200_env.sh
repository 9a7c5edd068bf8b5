# Sourced by the scripts run on the H200, from the repo root with .whl carried: $OUT made, Python
# unbuffered, the wheels of ../shared/gpu/wheels.sh installed, kernelgen and kernelgen_ops
# installed editable. Exits the caller when an install fails. A script that runs others sources
# it once for all of them: the installs are skipped where an enclosing script made them.
set -o pipefail
OUT=${OUT:-/tmp/kernelgen-out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [ -z "${KERNELGEN_H200_ENV:-}" ]; then
  if [ -d .whl ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site:$PWD
  fi
  python3 -m pip install -q --no-deps --no-build-isolation -e . -e ./generated || exit 1
  export KERNELGEN_H200_ENV=1
fi
