# runs_smpi.sh — sourced after runs.sh by the drivers of lessons 05 and 06 (and their
# instructor cases), which run a grader many times, some of them long 1024-rank simulations:
#   SMPI_TIMING                      smpirun's flags of tests/coll/CMakeLists.txt's
#                                    DT_SMPI_TIMING — CM02 (latency + size/bandwidth), no TCP
#                                    cross-traffic, no time in MPI_Test, no detached sends —
#                                    with SimGrid's notices left out
#   runs_next LABEL LIMIT CMD...     run_launch, unless an earlier run hung or
#                                    runs_stop_at_fail said stop (a healthy run takes seconds;
#                                    more hung runs only add minutes); the labels of the runs
#                                    made are in RUNS_LABELS, for runs_report
#   runs_stop_at_fail                status 0 when LESSON_STOP_AT_FAIL (run_grader.sh sets it
#                                    for CI's mutants: the check a mutant must fail) names a
#                                    check that has failed in a run so far; the runs after it
#                                    are then left out, with a line saying so
SMPI_TIMING=(--cfg=smpi/simulate-computation:no --cfg=network/model:CM02
             --cfg=network/crosstraffic:0 --cfg=smpi/test:0 --cfg=smpi/send-is-detached-thresh:0
             --log=root.thres:warning --log=smpi_kernel.thres:error)
RUNS_LABELS=() RUNS_HUNG="" RUNS_STOPPED=""

runs_next() {
  [ -z "$RUNS_HUNG$RUNS_STOPPED" ] || return 0
  run_launch "$@"
  RUNS_LABELS+=("$1")
  case "$(cat "$RUNS_W/$(runs_key "$1").rc")" in
    124|137) RUNS_HUNG=$1; echo "# $1 hung: the runs after it are left out" ;;
  esac
}

runs_stop_at_fail() {
  [ -n "${LESSON_STOP_AT_FAIL:-}" ] || return 1
  [ -z "$RUNS_STOPPED" ] || return 0
  local f
  for f in "$RUNS_W"/*.out; do
    [ -f "$f" ] || continue
    if grep -q "^FAIL $LESSON_STOP_AT_FAIL\b" "$f" ||
       { [ "$LESSON_STOP_AT_FAIL" = instructor ] && grep -q '^FAIL ' "$f"; }; then
      echo "# $LESSON_STOP_AT_FAIL failed: the runs after it are left out (LESSON_STOP_AT_FAIL)"
      RUNS_STOPPED=1
      return 0
    fi
  done
  return 1
}
