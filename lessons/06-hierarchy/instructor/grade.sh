#!/usr/bin/env bash
# instructor/grade.sh — lesson 06's instructor-only cases (lessons/grade 06 --instructor;
# kept beside solution/, so the handout has neither): group sizes and shapes the public
# grade.sh never runs, under smpirun on tests/coll/flat1024.xml with its flags. P = 64, one
# rank per host: hier in groups of 5, 6 and 16 (public: 2, 3, 4 and 8), the tori 8×8, 4×16
# and 16×4, exact on a count of 10,007; then P = 256 with 4 ranks per host: hier in groups of
# 4 timed against its closed form (public: groups of 8 at P = 1024); and the public
# performance target at P = 1024 with the flat ring simulated here (~40 s) instead of taken
# from grade.sh's FLAT_RING_TIME, which it must reproduce (to 1e-9). One line per check over the
# runs (lessons/kit/runs.sh); run_grader.sh names them instructor.<check>. Each run's grader
# asks its own subject (student_hier.c in a process of its own, lessons/kit/subject.h), its
# output in the run's log (kit/split.sh).
set -u
: "${LESSON_GRADER_SMPI:?}" "${SMPIRUN:?}" "${DT_SOURCE:?}"
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
. "$LESSON_DIR/../kit/runs.sh"
. "$LESSON_DIR/../kit/split.sh"  # split_log: the subject's log of a run
# split_next LABEL LIMIT CMD...: runs_next with the run's own subject log in its environment
split_next() { LESSON_SUBJECT_LOG=$(split_log "$1") runs_next "$@"; }
runs_begin
RUNS_HANG_HINT="an endless loop in student_hier.c, or ranks waiting for each other"
for i in $(seq 0 63); do echo "node-$i"; done >"$RUNS_W/hosts64"
for h in $(seq 0 63); do for _ in 1 2 3 4; do echo "node-$h"; done; done >"$RUNS_W/hosts256"
for h in $(seq 0 127); do for _ in 1 2 3 4 5 6 7 8; do echo "node-$h"; done; done >"$RUNS_W/hosts1024"
ring=$(sed -n 's/^FLAT_RING_TIME=//p' "$LESSON_DIR/grade.sh")
. "$LESSON_DIR/../kit/runs_smpi.sh"  # SMPI_TIMING: DT_SMPI_TIMING's flags
smpi=(-platform "$DT_SOURCE/tests/coll/flat1024.xml" -no-privatize "${SMPI_TIMING[@]}")
split_next "P=64" 90 "$SMPIRUN" "${smpi[@]}" -hostfile "$RUNS_W/hosts64" -np 64 \
    "$LESSON_GRADER_SMPI" --groups 5,6,16 --tori 8x8,4x16,16x4 --large 10007 --few
split_next "P=256" 90 "$SMPIRUN" "${smpi[@]}" -hostfile "$RUNS_W/hosts256" -np 256 \
    "$LESSON_GRADER_SMPI" --no-data --timing 4194304 --group 4 --alpha 2e-6 --beta 8e-10 \
    --alpha-intra 1e-7 --beta-intra 1e-11
# (CI's mutant that only these cases catch, LESSON_STOP_AT_FAIL: once a check has failed,
# runs_next leaves out the 40 s of the live flat ring, which add nothing)
split_next "P=1024" 120 "$SMPIRUN" "${smpi[@]}" -hostfile "$RUNS_W/hosts1024" -np 1024 \
    "$LESSON_GRADER_SMPI" --no-data --timing 4194304 --group 8 --alpha 2e-6 --beta 8e-10 \
    --alpha-intra 1e-7 --beta-intra 1e-11 --versus-flat --flat-ring-time "$ring"
runs_report "${RUNS_LABELS[@]}"
