#!/usr/bin/env bash
# The verifier on the GPU: its adversarial suite (every cheat rejected, every honest twin
# accepted, on CUDA), its CUDA deadline, and where an in-run verify's time goes (a seed under
# compute-sanitizer: scripts/gpu/seeds.sh). On the GPU machine, from the repo root, .whl carried; output under $OUT as it goes.
#
#   [STEPS="hang suite"] [SHARDS=3] [SUITE_S=330] [SUITE_K="6_race or honest"] [SUITE=FILES]
#   [SUITE_PART=I/N]
#   [TESTS="PATH ..."] [PROFILE_OPS=rms_norm] [PROFILE_S=120]
#   [COLD="PATH ..."] [COLD_PARALLEL=2] [COLD_SEED=1] [COLD_S=540]
#     bash scripts/gpu/verifier.sh [NODE_ID ...]
#
# Steps, in this order (STEPS picks):
#   hang      tests/verify/test_deadlines.py's GPU tests alone (their bound is wall time):
#             $OUT/suite-hang.log
#   suite     the GPU tests of SUITE (default tests/verify/test_holes.py and test_suite_gpu.py: the
#             adversarial suite), or the node ids given,
#             or those SUITE_K selects (as pytest -k); SUITE_PART=I/N keeps every Nth of them from
#             the Ith (0-based), the suite split over N calls. In SHARDS pytest processes side by side:
#             each cheat is a fresh source whose first minute is compile-ahead and process start,
#             which leave the GPU idle. Each shard is cut at SUITE_S seconds. $OUT/suite-N.log,
#             and every verdict as it comes (category, reason, wall) in
#             $OUT/suite-verdicts.jsonl, which survives a cut-off pytest. With
#             KERNELGEN_COLD_VERDICTS=1 each verdict is cold (a fresh judge, an empty Triton
#             cache: tests/verify/suite.py), the time [V2] bounds by 60 s
#   tests     every GPU test of TESTS in one process, -x. By default every GPU test of the
#             project that the suite and hang steps leave (tests/, less test_holes.py,
#             test_suite_gpu.py and test_deadlines.py): the limit cases' cheats, fills, tensors,
#             the interpreter's twin, KernelBench's hacks, the bench's and the inputs' GPU tests,
#             and any GPU test added anywhere since
#   cold      scripts/cold_verdicts.py over COLD (default: every shipped kernel's source, each of
#             which must be accepted): each candidate in a fresh process over an empty Triton
#             cache, COLD_PARALLEL at once, cut at COLD_S s; $OUT/cold-verdicts.jsonl as it goes
#   profile   scripts/profile_verify.py --ops PROFILE_OPS: an in-run verify sampled, and the
#             round-trip floor of a judged call ($OUT/profile/); cut at PROFILE_S seconds
. scripts/gpu/env.sh
STEPS=${STEPS:-hang suite}
suite=${SUITE:-tests/verify/test_holes.py tests/verify/test_suite_gpu.py}

if has hang; then
  timeout 100 python3 -m pytest -q -m gpu tests/verify/test_deadlines.py -p no:cacheprovider -rA \
    2>&1 | tail -15 > "$OUT/suite-hang.log"
  cat "$OUT/suite-hang.log"
fi

if has suite; then
  ids=("$@")
  if [ ${#ids[@]} -eq 0 ]; then
    # shellcheck disable=SC2086 # SUITE is a list of paths
    mapfile -t ids < <(python3 -m pytest --collect-only -q -m gpu $suite ${SUITE_K:+-k "$SUITE_K"} \
      2>/dev/null | grep '::')
  fi
  if [ -n "${SUITE_PART:-}" ]; then
    part=${SUITE_PART%/*} parts=${SUITE_PART#*/} kept=()
    for ((i = part; i < ${#ids[@]}; i += parts)); do kept+=("${ids[$i]}"); done
    ids=("${kept[@]}")
  fi
  shards=${SHARDS:-3}
  export KERNELGEN_VERDICT_LOG="$OUT/suite-verdicts.jsonl"
  # The shards' judges share the GPU and the host: 6 with every truth kept ran it out of memory
  # at the limit cases (evaluations/logs/h200-20261205-router-gemm-block-sums-cold-suite), and
  # each would start 12 compile runners on the 16 cores. Each gets its part of both.
  while IFS='=' read -r name value; do export "$name=$value"; done < <(python3 -c \
    "from kernelgen.verify.sharing import judges_share as s; [print(f'{k}={v}') for k, v in s($shards).items()]")
  for ((s = 0; s < shards; s++)); do
    mine=()
    for ((i = s; i < ${#ids[@]}; i += shards)); do mine+=("${ids[$i]}"); done
    [ ${#mine[@]} -eq 0 ] && continue
    timeout "${SUITE_S:-330}" python3 -m pytest -v -m gpu -p no:cacheprovider "${mine[@]}" \
      > "$OUT/suite-$s.log" 2>&1 &
  done
  wait
  unset KERNELGEN_VERDICT_LOG KERNELGEN_TRUTH_SHARE KERNELGEN_COMPILE_WORKERS KERNELGEN_GPU_LOCK
  echo "== suite: ${#ids[@]} tests in $shards shards"
  grep -hE "PASSED|FAILED|ERROR|passed|failed|^E " "$OUT"/suite-[0-9]*.log | cut -c1-300
  grep -h "\"accepted\"" "$OUT/suite-verdicts.jsonl" 2>/dev/null | cut -c1-300
  # The bound [V2] sets on a cold verdict: those past it, with where their time went.
  python3 scripts/cold_verdicts.py --table "$OUT/suite-verdicts.jsonl"
fi

if has tests; then
  if [ -z "${TESTS:-}" ]; then
    TESTS="tests --ignore=tests/verify/test_holes.py --ignore=tests/verify/test_suite_gpu.py \
      --ignore=tests/verify/test_deadlines.py"
  fi
  # shellcheck disable=SC2086 # TESTS is a list of paths and options
  TAIL=30 step tests python3 -m pytest -q -m gpu -x $TESTS
fi

if has cold; then
  if [ -z "${COLD:-}" ]; then
    COLD="$(grep -h -m1 '^# source' generated/kernelgen_ops/*.py | awk '{print $3}' | tr '\n' ' ')"
  fi
  # shellcheck disable=SC2086 # COLD is a list of paths
  TAIL=${COLD_TAIL:-60} step cold timeout "${COLD_S:-540}" python3 scripts/cold_verdicts.py \
    --device cuda --seed "${COLD_SEED:-1}" --parallel "${COLD_PARALLEL:-2}" --out "$OUT" $COLD
fi

if has profile; then
  # shellcheck disable=SC2086 # PROFILE_OPS is a list of operators
  TAIL=8 step profile timeout "${PROFILE_S:-120}" python3 scripts/profile_verify.py \
    --ops ${PROFILE_OPS:-rms_norm} --out "$OUT/profile"
  # Many runner files (compile runners too) and only a few come back: per operator, keep the
  # newest three (the round-trip runner, the in-run candidate's, the seed's).
  for d in "$OUT"/profile/*-runners; do
    # shellcheck disable=SC2012 # the runner files are named by the verifier, without spaces
    if [ -d "$d" ]; then (cd "$d" && ls -t | tail -n +4 | xargs -r rm -f); fi
  done
fi
