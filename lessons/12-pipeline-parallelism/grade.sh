#!/usr/bin/env bash
# grade.sh — lesson 12's driver (run by lessons/kit/run_grader.sh): the grader (five checks
# on the simulator's model of the stages' clocks, grader.c), then the student's schedule in
# the real system: dtrain_check.sh trains gpt2-tiny with the variant's dtrain (--pp 2 on
# one_f_one_b, in_dtrain.c) under mpirun -np 2 against the library's dtrain on one rank,
# losses and weights bit for bit. Both under `timeout`, reported by lessons/kit/runs.sh.
# Env: LESSON_GRADER, MPIRUN, DT_BUILD (run_grader.sh).
# Exit: 0 every check passed; 1 a check failed; 124 a run hung; 3 a run crashed.
set -u
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(date +%s)$((RANDOM % 1000))}
. "$LESSON_DIR/../kit/runs.sh"
runs_begin
run_launch "grader" "${LESSON_RUN_TIMEOUT:-120}" "$LESSON_GRADER"
sed -n '1{/^# lesson/p}' "$RUNS_W/grader.out"
runs_report "grader"
rc=$?
# (CI's mutant of another check stops there: LESSON_STOP_AT_FAIL, run_grader.sh)
case "${LESSON_STOP_AT_FAIL:-}" in
  ""|dtrain_*)
    run_launch "dtrain P=2" "${LESSON_RUN_TIMEOUT:-180}" bash "$LESSON_DIR/dtrain_check.sh" \
        "$(dirname "$LESSON_GRADER")/dtrain" "$DT_BUILD/dtrain" "$DT_BUILD/tests/mpi/st_compare"
    runs_report "dtrain P=2"
    rc2=$? ;;
  *) echo "# the schedule in dtrain left out (LESSON_STOP_AT_FAIL=$LESSON_STOP_AT_FAIL)"; rc2=0 ;;
esac
# the worse of the two: a hang, a crash, a failed check
for v in 124 3 1; do
  if [ "$rc" -eq "$v" ] || [ "$rc2" -eq "$v" ]; then exit "$v"; fi
done
exit 0
