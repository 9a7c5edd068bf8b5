#!/usr/bin/env bash
# On the H200 (carry .whl): the agent's plan through kernelgen's agent session
# (scripts/h200_agent.py), results packed into $OUT as they finish.
#   scripts/h200_agent.sh PLAN.json [DEADLINE_S=520] [h200_agent.py's options, e.g. --no-promote]
. scripts/h200_env.sh
# The ceilings measured on this GPU are committed; the judge reads them from its cache.
export KERNELGEN_CACHE=/tmp/kernelgen-cache
mkdir -p "$KERNELGEN_CACHE" && cp evaluations/ceilings/*.json "$KERNELGEN_CACHE"/
python3 scripts/h200_agent.py "$1" --out "$OUT" --deadline-s "${2:-520}" "${@:3}" 2>"$OUT/stderr.log" \
  | cut -c1-600
tail -5 "$OUT/stderr.log"
