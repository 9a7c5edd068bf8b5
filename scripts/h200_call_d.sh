#!/usr/bin/env bash
# On the H200 (carry .whl with the peers' wheels): the library's GPU tests (lean launches, CUDA
# graphs, torch.compile), then, only if they pass, lean launches on for the rest: the host cost
# breakdown (host_overhead.py) and the library benchmark against every peer (bench_library.py),
# then the profile tool against the real ncu. Results stream to $OUT.
#   [LIB_TESTS_S=150] [HOST_S=90] [BENCH_S=250] [PROFILE_S=60] bash scripts/h200_call_d.sh
. scripts/h200_env.sh
timeout "${LIB_TESTS_S:-150}" python3 -m pytest -q -m gpu generated/tests -p no:cacheprovider -rs \
  2>&1 | tail -40 | tee "$OUT/gpu-library-tests.log"
lean=0
grep -qE "^[0-9]+ passed" "$OUT/gpu-library-tests.log" && ! grep -q failed "$OUT/gpu-library-tests.log" && lean=1
echo "lean launches on for the benchmarks: $lean" | tee -a "$OUT/gpu-library-tests.log"
[ $lean = 1 ] && export KERNELGEN_OPS_LEAN=1
timeout "${HOST_S:-90}" python3 scripts/host_overhead.py "$OUT/host_overhead.json" 2>&1 | tail -40 \
  > "$OUT/host_overhead.log"
timeout $(( ${BENCH_S:-250} + 30 )) python3 scripts/bench_library.py "$OUT/bench_library.json" \
  --budget-s "${BENCH_S:-250}" 2>&1 | tail -60 > "$OUT/bench_library.log"
timeout "${PROFILE_S:-60}" python3 -m pytest -q -m gpu tests/test_profile.py -p no:cacheprovider -rs \
  2>&1 | tail -30 > "$OUT/gpu-profile-tests.log"
