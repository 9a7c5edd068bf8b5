#!/usr/bin/env bash
# Sets up .venv for kernelgen: torch, Triton 3.6.0 (the H200's version), numpy < 2.3 (Triton 3.6's
# interpreter breaks with newer numpy), then kernelgen and kernelgen_ops, editable.
#   scripts/setup.sh          the pipeline, the library and the MCP SDK (`kernelgen mcp`)
#   scripts/setup.sh --dev    also pytest, ruff, matplotlib, Ray (the --ray workers' test on a local
#                             cluster) and Chromium for the report tests
set -euo pipefail
cd "$(dirname "$0")/.."
dev=0
[ "${1:-}" = "--dev" ] && dev=1
python3 -m venv .venv
py=.venv/bin/python
"$py" -m pip install -q --upgrade pip
# torch 2.13.0: a CPU build where one lies on disk (CI, dev machines), else PyPI's default build.
"$py" -m pip install -q "torch==2.13.0" "triton==3.6.0" "numpy<2.3"
extras="[mcp]"
[ "$dev" = 1 ] && extras="[dev,mcp]"
# setuptools announces every editable install of a flat layout ("Editable installation ...
# folders with the same name may take precedence"): a note for packagers, not for a newcomer.
PYTHONWARNINGS="ignore:Editable installation" "$py" -m pip install -q -e ".$extras" -e ./generated
if [ "$dev" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  # The HTML report is tested in headless Chromium; install it where we may (CI runs as root).
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    (apt-get update -qq && apt-get install -y -qq chromium >/dev/null) ||
      echo "warning: could not install chromium; the browser test will be skipped" >&2
  else
    echo "note: chromium not found; the browser test will be skipped" >&2
  fi
fi
echo "kernelgen is set up in .venv (activate with: . .venv/bin/activate)"
