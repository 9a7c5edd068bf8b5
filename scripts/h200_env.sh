# Sourced by the scripts run on the H200, from the repo root with .whl carried: $OUT made, Python
# unbuffered, the wheels of ../shared/gpu/wheels.sh installed, kernelgen and kernelgen_ops
# installed editable. Exits the caller when an install fails.
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
