#!/usr/bin/env bash
# On the H200 (carry .whl): GPU tests of the verifier's adversarial suite, in SHARDS pytest
# processes side by side (each cheat is a fresh source whose first minute is compile-ahead and
# process start, which leave the GPU idle), after the CUDA hang test run alone (its bound is
# wall time; HANG=0 skips it). Node ids as arguments; none: every GPU test of test_holes.py.
# Logs to $OUT.   [SHARDS=3] [SUITE_S=330] [HANG=1] bash scripts/h200_suite.sh [NODE_ID ...]
. scripts/h200_env.sh
tests="tests/verify/test_holes.py"
if [ "${HANG:-1}" = 1 ]; then
  timeout 100 python3 -m pytest -q -m gpu tests/verify/test_deadlines.py -p no:cacheprovider -rA \
    2>&1 | tail -15 > "$OUT/suite-hang.log"
fi
ids=("$@")
if [ ${#ids[@]} -eq 0 ]; then
  mapfile -t ids < <(python3 -m pytest --collect-only -q -m gpu "$tests" 2>/dev/null | grep '::')
fi
shards=${SHARDS:-3}
# Each verdict as it comes (category, reason, wall): the reasons survive a cut-off pytest.
export KERNELGEN_VERDICT_LOG="$OUT/suite-verdicts.jsonl"
for ((s = 0; s < shards; s++)); do
  mine=()
  for ((i = s; i < ${#ids[@]}; i += shards)); do mine+=("${ids[$i]}"); done
  [ ${#mine[@]} -eq 0 ] && continue
  timeout "${SUITE_S:-330}" python3 -m pytest -v -m gpu -p no:cacheprovider "${mine[@]}" \
    > "$OUT/suite-$s.log" 2>&1 &
done
wait
cat "$OUT/suite-hang.log" 2>/dev/null
grep -hE "PASSED|FAILED|ERROR|passed|failed|^E " "$OUT"/suite-[0-9]*.log | cut -c1-300
grep -h "\"accepted\"" "$OUT/suite-verdicts.jsonl" 2>/dev/null | cut -c1-300
