# runs_each.sh — sourced by lessons 05's and 06's grade.sh: runs their grader several times
# (mpirun for several P, smpirun), printing each run's check lines as they come, and turns a
# run that hangs or crashes into a FAIL line with a hint. (Lessons 04's runs go through
# runs.sh instead, which merges a check's lines over the runs.)
#   each_begin                  before the first run
#   each_run LABEL CMD...       one run under `timeout $EACH_LIMIT`; its lines go to stdout
#   each_end                    the status: 0 every run passed, 1 otherwise
# Set before the runs:
#   EACH_LIMIT        seconds a run may take
#   EACH_HANG_CHECK   the check a hung run fails; EACH_HANG_HINT: why it may hang
#   EACH_CRASH_CHECK  the check a run fails that ended before its checks did
#   EACH_STOP=1       honour LESSON_STOP_AT_FAIL (run_grader.sh sets it for CI's mutants):
#                     once that check has failed, the remaining runs are skipped
# After a hang the other runs are skipped (a healthy run takes seconds).
# SMPI_TIMING: smpirun's flags of tests/coll/CMakeLists.txt's DT_SMPI_TIMING — CM02
# (latency + size/bandwidth), no TCP cross-traffic, no time in MPI_Test, no detached sends —
# and SimGrid's notices left out.
SMPI_TIMING=(--cfg=smpi/simulate-computation:no --cfg=network/model:CM02
             --cfg=network/crosstraffic:0 --cfg=smpi/test:0 --cfg=smpi/send-is-detached-thresh:0
             --log=root.thres:warning --log=smpi_kernel.thres:error)

each_begin() {
  EACH_STATUS=0 EACH_HUNG="" EACH_STOPPED=""
  EACH_OUT=$(mktemp) EACH_ALL=$(mktemp)
  trap 'rm -f "$EACH_OUT" "$EACH_ALL" ${EACH_CLEAN:-}' EXIT
}

# A run that hangs, crashes or ends before its checks (no "# N of M checks passed" line:
# mpirun refused to start, say) becomes a FAIL line with a hint. (smpirun's own "Execution
# failed" lines, which repeat its command, are left out.)
each_run() {
  local label=$1; shift
  [ -n "$EACH_STOPPED" ] && return
  if [ -n "$EACH_HUNG" ]; then
    echo "FAIL $EACH_HANG_CHECK: $label not run:" \
         "$EACH_HUNG hung"
    return
  fi
  timeout -k 5 "$EACH_LIMIT" "$@" 2>&1 | grep -v -e '^Execution failed with code' -e '_smpi.so --cfg=' \
    | tee "$EACH_OUT"
  local rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "FAIL $EACH_HANG_CHECK: $label did not finish" \
         "in $EACH_LIMIT s: $EACH_HANG_HINT"
    EACH_HUNG=$label
  elif ! grep -Eq '^# [0-9]+ of [0-9]+ checks passed' "$EACH_OUT"; then
    echo "FAIL $EACH_CRASH_CHECK: $label ended (exit $rc)" \
         "before its checks did: see the messages above (mpirun could not start? dt_lane_op" \
         "before the first dt_lane_round asserts)"
  fi
  [ "$rc" -eq 0 ] || EACH_STATUS=1
  [ "${EACH_STOP:-0}" = 1 ] || return 0
  cat "$EACH_OUT" >> "$EACH_ALL"
  if [ -n "${LESSON_STOP_AT_FAIL:-}" ] && grep -q "^FAIL $LESSON_STOP_AT_FAIL\b" "$EACH_ALL"; then
    echo "# $LESSON_STOP_AT_FAIL failed: the remaining runs are skipped (LESSON_STOP_AT_FAIL)"
    EACH_STOPPED=1
  fi
}

each_end() { return "$EACH_STATUS"; }
