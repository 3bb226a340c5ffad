#!/usr/bin/env bash
# instructor/grade.sh — lesson 05's instructor-only cases (lessons/grade 05 --instructor;
# kept beside solution/, so the handout has neither): rank counts the public grade.sh never
# runs, under smpirun on tests/coll/flat1024.xml with its flags (α = 2 µs, β = 0.8 ns/B):
# P = 40 (p' = 32, 8 ranks folding in and out; the sums checked, a count of 20,021, and
# 1 MiB timed) and P = 200 (p' = 128, rem = 72; the schedules and 256 KiB timed; the
# schedules checked for a 1.2 GB buffer too, 300,000,001 floats: --large, with --no-data
# the schedule checks' largest count, never run), where block offsets computed in int
# (b·n/p') overflow (public: at most 100,003 floats). One line per check over both runs
# (lessons/kit/runs.sh); run_grader.sh names them instructor.<check>. Each run's grader asks
# its own subject (student_rhd.c in a process of its own, lessons/kit/subject.h), its output
# in the run's log (kit/split.sh).
set -u
: "${LESSON_GRADER_SMPI:?}" "${SMPIRUN:?}" "${DT_SOURCE:?}"
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
. "$LESSON_DIR/../kit/runs.sh"
. "$LESSON_DIR/../kit/split.sh"  # split_log: the subject's log of a run
# split_launch LABEL LIMIT CMD...: run_launch with the run's own subject log in its environment
split_launch() { LESSON_SUBJECT_LOG=$(split_log "$1") run_launch "$@"; }
runs_begin
RUNS_HANG_HINT="an endless loop in student_rhd, or ranks waiting for each other"
for i in $(seq 0 255); do echo "node-$i"; done >"$RUNS_W/hosts"
. "$LESSON_DIR/../kit/runs_smpi.sh"  # SMPI_TIMING: DT_SMPI_TIMING's flags
smpi=(-platform "$DT_SOURCE/tests/coll/flat1024.xml" -hostfile "$RUNS_W/hosts" -no-privatize
      "${SMPI_TIMING[@]}")
split_launch "P=40" 90 "$SMPIRUN" "${smpi[@]}" -np 40 "$LESSON_GRADER_SMPI" --large 20021 \
    --timing 1048576 --alpha 2e-6 --beta 8e-10
split_launch "P=200" 90 "$SMPIRUN" "${smpi[@]}" -np 200 "$LESSON_GRADER_SMPI" --no-data \
    --large 300000001 --timing 262144 --alpha 2e-6 --beta 8e-10
runs_report "P=40" "P=200"
