#!/usr/bin/env bash
# instructor/grade.sh — lesson 03's instructor-only cases (lessons/grade 03 --instructor;
# kept beside solution/, so the handout has neither): rank counts the public grade.sh never
# runs — P = 5 and 6 under mpirun (public: 1..4; 5 is prime, so a shard or an average that
# only works for P dividing 4 or 12 shows) and P = 16 under smpirun on tests/coll/flat1024.xml
# (public: 8), every rank in one process. One line per check over the runs
# (lessons/kit/runs.sh); run_grader.sh names them instructor.<check>.
set -u
: "${LESSON_GRADER:?}" "${LESSON_GRADER_SMPI:?}" "${MPIRUN:?}" "${SMPIRUN:?}" "${DT_SOURCE:?}"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}
. "$LESSON_DIR/../kit/runs.sh"
runs_begin
RUNS_HANG_HINT="a collective that not every rank called?"
seq 0 15 | sed 's/^/node-/' >"$RUNS_W/hosts"
for P in 5 6; do
  run_launch "P=$P" "${LESSON_RUN_TIMEOUT:-60}" "$MPIRUN" -np $P --oversubscribe "$LESSON_GRADER"
done
run_launch "P=16" 60 "$SMPIRUN" -np 16 -platform "$DT_SOURCE/tests/coll/flat1024.xml" \
    -hostfile "$RUNS_W/hosts" -no-privatize --cfg=smpi/simulate-computation:no \
    --log=root.thres:warning "$LESSON_GRADER_SMPI"
runs_report "P=5" "P=6" "P=16"
