#!/usr/bin/env bash
# instructor/grade.sh — lesson 07's instructor-only cases (lessons/grade 07 --instructor;
# kept beside solution/, so the handout has neither): the grader under mpirun at P = 4 and 5
# (public: 1..3) with the planner's random passes up to 16 events and K up to 10 (grader
# --instructor; public: 12 events, K <= 5), then the planner inside dtsim on another cluster
# and other plans: 64 GPUs (public: 256), --fusion segments:3 and :8 (public: 2 and 4), byte
# thresholds of 5MB and 100MB (public: 64MB and 25MB), each run cut at 20 s (the DP takes
# well under one; trying every split of ResNet-50's events at K = 8 would take days). One
# line per check over the runs (lessons/kit/runs.sh); run_grader.sh names them
# instructor.<check>.
set -u
: "${LESSON_GRADER:?}" "${MPIRUN:?}" "${DT_BUILD:?}"
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(date +%s)$((RANDOM % 1000))}
. "$LESSON_DIR/../kit/runs.sh"
runs_begin
RUNS_HANG_HINT="an allreduce started on some ranks and not others, or one never waited for"
for np in 4 5; do
  run_launch "P=$np" "${LESSON_RUN_TIMEOUT:-90}" "$MPIRUN" --quiet -np "$np" --oversubscribe \
      "$LESSON_GRADER" --instructor
done
runs_report "P=4" "P=5"
rc=$?
DTSIM_CHECK_GPUS=64 DTSIM_CHECK_SEGMENTS="3 8" DTSIM_CHECK_THRESHOLDS="5MB 100MB" \
DTSIM_CHECK_LIMIT=20 \
  bash "$LESSON_DIR/dtsim_check.sh" "$(dirname "$LESSON_GRADER")/dtsim_rank.so" "$DT_BUILD/dtsim"
src=$?
[ "$rc" -ge 2 ] && exit "$rc"
[ "$src" -ge 2 ] && exit "$src"
exit $((rc | src))
