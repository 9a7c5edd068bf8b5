#!/usr/bin/env bash
# The library on the GPU (kernelgen_ops): its tests, its host overhead per call and its figures
# against the peers. On the GPU machine, from the repo root, .whl carried. Each step's output lands
# under $OUT as it goes (scripts/gpu/env.sh's `step`), so a call cut short keeps what finished.
#
#   [STEPS="tests host bench graph"] [GEN_TESTS=generated/tests] [HOST_ARGS=--profile]
#   [BENCH_S=SECONDS] [BENCH_ARGS="--ops softmax rms_norm"] [BEFORE=.before]
#     bash scripts/gpu/library.sh
#
# Steps, in this order (STEPS picks; `floor` is not in the default list):
#   floor  scripts/host_floor.py: what each step a call could take costs alone ($OUT/floor.json)
#   tests  pytest of GEN_TESTS (paths; the GPU tests included), `-k "not install"`
#   host   scripts/host_overhead.py ($OUT/host.json; HOST_ARGS, e.g. --profile). With BEFORE, a
#          folder holding generated/kernelgen_ops and scripts/host_overhead.py of an earlier
#          commit, it runs for that library and this tree's in the order before, after, after,
#          before ($OUT/host-{before,after,after2,before2}.json): the host's slow spells last
#          minutes, and an ABBA order spreads them over both sides. Make BEFORE here with
#            mkdir -p .before && git archive COMMIT generated/kernelgen_ops scripts/host_overhead.py | tar -x -C .before
#          (.before ignored in .git/info/exclude); it is imported ahead of the editable library.
#   bench  scripts/bench_library.py ($OUT/library.json; BENCH_ARGS, e.g. --ops softmax rms_norm
#          --groups kernelgen): the status page's record when complete. BENCH_S bounds it; unset,
#          the script's default, the sum of the started groups' shares (77 s an operator for
#          kernelgen, Liger and FlagGems together, a serving peer's family's own). The serving
#          peers run where scripts/gpu/stage.sh installed them into /tmp/site in this or an
#          earlier call of the warm machine; where not, the record says so per shape. All of them
#          (over 600 s by default: split the ops over two calls, or give BENCH_S):
#            BENCH_ARGS="--ops softmax rms_norm silu_and_mul decode_attn fused_moe fp8_gemm sparse_attn"
#   graph  scripts/graph_dispatch.py: device time inside a CUDA graph, torch's op against the
#          kernel the capture recorded ($OUT/graph.json)
. scripts/gpu/env.sh
STEPS=${STEPS:-tests host bench graph}
# The peers stage.sh installed in an earlier call, where this one carried no .whl.
case ":${PYTHONPATH:-}:" in
  *:/tmp/site:*) ;;
  *) [ -d /tmp/site ] && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} ;;
esac

if has floor; then
  step floor python3 scripts/host_floor.py "$OUT/floor.json"
fi
if has tests; then
  # shellcheck disable=SC2086 # GEN_TESTS is a list of paths
  step generated python3 -m pytest -q ${GEN_TESTS:-generated/tests} -k "not install"
fi
if has host; then
  if [ -n "${BEFORE:-}" ]; then
    base_path=${PYTHONPATH:-}
    for side in before after after2 before2; do
      if [ "${side#before}" != "$side" ]; then
        # shellcheck disable=SC2086 # HOST_ARGS is a list of options
        PYTHONPATH="$PWD/$BEFORE/generated${base_path:+:$base_path}" step "host-$side" \
          python3 "$BEFORE/scripts/host_overhead.py" "$OUT/host-$side.json" ${HOST_ARGS:-}
      else
        # shellcheck disable=SC2086
        step "host-$side" python3 scripts/host_overhead.py "$OUT/host-$side.json" ${HOST_ARGS:-}
      fi && rm -f "$OUT/host-$side.log"  # the JSON holds the rows: a log only where it failed
    done
  else
    # shellcheck disable=SC2086
    step host python3 scripts/host_overhead.py "$OUT/host.json" ${HOST_ARGS:-}
  fi
fi
if has bench; then
  # shellcheck disable=SC2086 # BENCH_ARGS is a list of options
  TAIL=30 step library python3 scripts/bench_library.py "$OUT/library.json" \
    ${BENCH_S:+--budget-s "$BENCH_S"} ${BENCH_ARGS:-}
fi
if has graph; then
  TAIL=20 step graph python3 scripts/graph_dispatch.py "$OUT/graph.json"
fi
