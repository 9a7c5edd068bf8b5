#!/usr/bin/env bash
# On the H200 (carry .whl): the library's GPU checks and figures, each step's output written under
# $OUT as it goes, so a call cut short keeps the steps it finished:
#   GEN_TESTS (default generated/tests, their gpu tests included; none skips them), scripts/host_overhead.py,
#   issue [R]'s WORKERS workers sharing the one GPU on WORKER_OPS for WORKERS_S seconds
#   (scripts/h200_workers.py; defaults 3, silu_and_mul, 150; WORKERS=0 skips it), then
#   scripts/bench_library.py with BENCH_S seconds (default 200; none skips it), then
#   scripts/graph_dispatch.py (GRAPH=none skips it). HOST=none skips host_overhead.
. scripts/h200_env.sh
step() {  # step NAME COMMAND...: the command's output in $OUT/NAME.log, its tail here
  local name=$1
  shift
  local start=$SECONDS
  "$@" > "$OUT/$name.log" 2>&1
  echo "== $name: rc=$? in $((SECONDS - start)) s"
  tail -n "${TAIL:-6}" "$OUT/$name.log"
}
if [ "${GEN_TESTS:-}" != none ]; then
  # shellcheck disable=SC2086 # GEN_TESTS is a list of paths
  step generated python3 -m pytest -q ${GEN_TESTS:-generated/tests} -k "not install"
fi
if [ "${HOST:-}" != none ]; then
  step host python3 scripts/host_overhead.py "$OUT/host.json"
fi
if [ "${WORKERS:-3}" != 0 ]; then
  # timeout: whatever hangs, the library bench after it still runs.
  step workers timeout $((${WORKERS_S:-150} + 60)) \
    python3 scripts/h200_workers.py "$OUT/workers" --workers "${WORKERS:-3}" \
    --ops "${WORKER_OPS:-silu_and_mul}" --budget-s "${WORKERS_S:-150}"
fi
if [ "${BENCH_S:-}" != none ]; then
  TAIL=30 step library python3 scripts/bench_library.py "$OUT/library.json" --budget-s "${BENCH_S:-200}"
fi
if [ "${GRAPH:-}" != none ]; then
  TAIL=20 step graph python3 scripts/graph_dispatch.py "$OUT/graph.json"
fi
