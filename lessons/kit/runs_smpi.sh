# runs_smpi.sh — sourced after runs.sh by the drivers of lessons 05 and 06 (and their
# instructor cases), which run a grader many times, some of them long 1024-rank simulations:
#   SMPI_TIMING                      smpirun's flags of tests/coll/CMakeLists.txt's
#                                    DT_SMPI_TIMING — CM02 (latency + size/bandwidth), no TCP
#                                    cross-traffic, no time in MPI_Test, no detached sends —
#                                    with SimGrid's notices left out
#   runs_next LABEL LIMIT CMD...     run_launch, unless an earlier run hung (a healthy run
#                                    takes seconds; more hung runs only add minutes) or
#                                    failed the check LESSON_STOP_AT_FAIL names
#                                    (runs_stop_at_fail, runs.sh); the labels of the runs made
#                                    are in RUNS_LABELS, for runs_report
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
  runs_stop_at_fail || true
}
