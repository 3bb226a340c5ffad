#!/usr/bin/env bash
# instructor/grade.sh — lesson 04's instructor-only cases (lessons/grade 04 --instructor;
# kept beside solution/, so the handout has neither). The same grader on what the public
# grade.sh never shows: the data checks at P = 8 and 11 under mpirun (public: P = 1..7),
# and the simulated time at P = 128 for 65,537 floats (public: P = 64, 256 and 262,143
# floats), on tests/coll/flat1024.xml with grade.sh's flags (α = 2 µs, β = 0.8 ns/B); at
# P = 8 and 11 the schedules of a 1.2 GB bucket too (300,000,001 floats, checked without
# running them: --schedule-count), where chunk offsets computed in int (c·n/P) overflow
# (public: at most 131,071 floats). One
# line per check over the runs (lessons/kit/runs.sh); run_grader.sh names them
# instructor.<check>.
set -u
: "${LESSON_GRADER:?}" "${LESSON_GRADER_SMPI:?}" "${MPIRUN:?}" "${SMPIRUN:?}" "${DT_SOURCE:?}"
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
. "$LESSON_DIR/../kit/runs.sh"
runs_begin
RUNS_HANG_HINT="a receive that no send ever meets?"
for i in $(seq 0 127); do echo "node-$i"; done >"$RUNS_W/hosts"
smpi=(-platform "$DT_SOURCE/tests/coll/flat1024.xml" -hostfile "$RUNS_W/hosts" -no-privatize
      --cfg=smpi/simulate-computation:no --cfg=network/model:CM02 --cfg=network/crosstraffic:0
      --cfg=smpi/test:0 --cfg=smpi/send-is-detached-thresh:0 --log=root.thres:warning)
run_launch "P=128" 60 "$SMPIRUN" "${smpi[@]}" -np 128 "$LESSON_GRADER_SMPI" \
    --timing 262148 --alpha 2e-6 --beta 8e-10 &
for P in 8 11; do
  run_launch "P=$P" "${LESSON_RUN_TIMEOUT:-60}" "$MPIRUN" -np $P --oversubscribe "$LESSON_GRADER" \
      --schedule-count 300000001
done
wait
runs_report "P=8" "P=11" "P=128"
