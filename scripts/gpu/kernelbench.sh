#!/usr/bin/env bash
# KernelBench's problems on the GPU: `kernelgen suite kernelbench` over the agent's candidate
# files (evaluations/kernelbench/candidates/<op>/*.py), each problem one `kernelgen optimize`
# run that judges them on CUDA and times the best, then KernelBench's own check and timing of
# it. On the GPU machine, from the repo root, .whl carried, and a KernelBench checkout carried
# as data (KB: its folder holding level1/ and level2/).
#
#   KB=PATH [LEVELS=1,2] [PROBLEMS="1:19,1:23"] [NAME=suite] [BUDGET_S=240*JOBS] [SUITE_S=540]
#     [JOBS=4] [HEAVY=N] [RETRY=1] [REDO=1] [REJUDGE=1] [TUNE=0] [FIRST=1] [BENCH=0] \
#     bash scripts/gpu/kernelbench.sh
#
# JOBS problems at once (--jobs): a problem's time goes mostly to process start, compiles and
# torch.compile, which leave the GPU idle; every timing holds the GPU alone under the suite's
# lock, the judges share it, and each problem's entry says how long it waited (lock_wait_s).
# A run's time limit (BUDGET_S) counts its waits too, so by default it grows with JOBS: 240 s of
# one problem alone, each other job's timings waited for on top. HEAVY of the jobs at most work
# on problems past a job's share of GPU memory (kernelgen/kernelbench/jobs.py): by default 1 on
# an 80 GB H100, where three at once ran it out of memory, 2 on a GPU of 120 GB or more (an
# H200's 141; untried there). TUNE=0: accepted candidates kept as written
# (--no-tune), the lease spent on the problems. FIRST=1: a problem's candidate files judged one
# a round in their order, its run stopped at the first accepted (--first-accepted): the agent's
# fallbacks (a b_ieee.py behind an a_pieces.py) cost the lease nothing where the first is right.
# REDO=1 (with PROBLEMS): the named problems attempted again, accepted ones too (--redo), as
# when faster candidates were added to their folders; with FIRST=0 and BENCH=1 the run judges
# every file and keeps the fastest accepted by its own bench, which KernelBench then times. A
# named problem whose runs have judged every file in its folder is not redone, so a call cut
# short can be repeated as it was.
# REJUDGE=1: the accepted problems (of PROBLEMS, else all) whose runs another GPU made are
# attempted again on this one (--rejudge), and its verdict stands: an H100's record re-judged
# and re-timed on the H200, each problem's accepted source alone (not its folder's first file). A problem whose run is this GPU's is not rejudged, so a call cut
# short can be repeated as it was, on this machine or a fresh one of its kind.
# BENCH=0: the run does not time its accepted candidate (--no-bench); KernelBench's timing of it,
# which follows each run, is the suite's figure, and the pipeline's own bench would time it again
# (about 20 s of a heavy problem's 65-90 s on the H100, under the GPU lock the other jobs'
# timings wait on).
#
# The suite's state (evaluations/kernelbench/NAME.json) and every run it made are packed into
# $OUT/results.tgz every 20 s and at the end, so a call cut short keeps what it finished; the
# suite resumes from that state when run again (RETRY=1: attempting again what was not accepted).
# Its log is $OUT/suite.log. Each call gets a fresh copy of your working tree: unpack the last
# call's results.tgz into it (tar xzf FILE) before the next, or that call starts over from the
# state before it.
. scripts/gpu/env.sh
[ -n "${KB:-}" ] && [ -d "$KB" ] || { echo "KB=PATH: a KernelBench checkout's level folders" >&2; exit 2; }
mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
HEAVY=${HEAVY:-$([ "${mib:-0}" -ge 120000 ] 2>/dev/null && echo 2 || echo 1)}
echo "== heavy problems at once: $HEAVY (GPU memory ${mib:-?} MiB)"
pack() {
  # shellcheck disable=SC2046 # one path per operator folder
  tar czf "$OUT/results.tgz.part" evaluations/kernelbench $(ls -d evaluations/kb[0-9]*_* 2>/dev/null) \
    && mv "$OUT/results.tgz.part" "$OUT/results.tgz"
}
(while sleep 20; do pack; done) &
packer=$!
trap 'kill $packer 2>/dev/null; pack' EXIT
timeout "${SUITE_S:-540}" kernelgen suite kernelbench --level "${LEVELS:-1,2}" \
  ${PROBLEMS:+--problems "$PROBLEMS"} --from "$KB" --device cuda \
  --proposer files --source evaluations/kernelbench/candidates \
  --budget-s "${BUDGET_S:-$((240 * ${JOBS:-4}))}" --jobs "${JOBS:-4}" --heavy "$HEAVY" \
  $([ "${FIRST:-0}" = 1 ] && echo --rounds 4 --candidates 1 --first-accepted \
    || echo --rounds 1 --candidates 4) \
  --repairs 0 --name "${NAME:-suite}" ${RETRY:+--retry} ${REDO:+--redo} ${REJUDGE:+--rejudge} \
  $([ "${TUNE:-1}" = 0 ] && echo --no-tune) $([ "${BENCH:-1}" = 0 ] && echo --no-bench) \
  > "$OUT/suite.log" 2>&1
echo "== suite: rc=$?"
grep -vE "^\s*$" "$OUT/suite.log" | tail -n 60 | cut -c1-240
