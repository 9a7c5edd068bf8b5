#!/usr/bin/env bash
# On the H200 (carry .whl and BEFORE): scripts/host_overhead.py for an earlier library and for this
# tree's, in the order before, after, after, before (the host's slow spells last minutes: an ABBA
# order spreads them over both), then this tree's generated/tests/test_calls.py and the library
# bench with BENCH_S seconds (0 skips it). BEFORE holds generated/kernelgen_ops and
# scripts/host_overhead.py of the earlier commit, e.g. made here with
#   mkdir -p .before && git archive COMMIT generated/kernelgen_ops scripts/host_overhead.py | tar -x -C .before
# (.before ignored in .git/info/exclude); it is imported ahead of the editable kernelgen_ops.
. scripts/h200_env.sh
BEFORE=${BEFORE:-.before}
base_path=$PYTHONPATH
for side in before after after2 before2; do
  start=$SECONDS
  if [ "${side#before}" != "$side" ]; then
    PYTHONPATH="$PWD/$BEFORE/generated:$base_path" python3 "$BEFORE/scripts/host_overhead.py" \
      "$OUT/host-$side.json" > "$OUT/host-$side.log" 2>&1
  else
    python3 scripts/host_overhead.py "$OUT/host-$side.json" > "$OUT/host-$side.log" 2>&1
  fi
  rc=$?
  echo "== host $side: rc=$rc in $((SECONDS - start)) s"
  # The JSON holds the rows; the device brings back few files: a log only where it failed.
  [ "$rc" = 0 ] && rm -f "$OUT/host-$side.log"
done
python3 -m pytest -q generated/tests/test_calls.py > "$OUT/calls.log" 2>&1
echo "== test_calls: rc=$?"; tail -n 2 "$OUT/calls.log"
if [ "${BENCH_S:-170}" != 0 ]; then
  python3 scripts/bench_library.py "$OUT/library.json" --budget-s "${BENCH_S:-170}" \
    > "$OUT/library.log" 2>&1
  echo "== library: rc=$?"; tail -n 30 "$OUT/library.log"
fi
