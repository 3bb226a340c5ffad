#!/usr/bin/env bash
# runs_report_test.sh — lessons/kit/runs.sh on crafted runs (no grader, no MPI: each "run" is
# this script printing what a grader under mpirun printed), a second or so:
#   1. a run that MPI stopped (MPI_ERR_COUNT in MPI_Sendrecv) shows MPI's own error, the
#      call and the error class, not Open MPI's "N more processes have sent help message";
#   2. a check that passed at P=1 while the runs of its kind at P=2..4 crashed before
#      printing it is a FAIL "not reached at raw-P=2,3,4", counted (status 3, no PASS line),
#      while a run of another kind (P=64) that never prints it is not blamed;
#   3. a check a hung run never printed says so ("the run hung").
# usage: runs_report_test.sh KIT_DIR        exit 0: all as expected
set -u
kit=${1:?usage: runs_report_test.sh KIT_DIR}
. "$kit/runs.sh"
runs_begin
fails=0
expect() {  # expect WHAT REGEX FILE / expect_not WHAT REGEX FILE
  grep -Eq -- "$2" "$3" || { echo "FAILED: $1: no line matches /$2/ in:"; sed 's/^/  | /' "$3"; fails=$((fails + 1)); }
}
expect_not() {
  ! grep -Eq -- "$2" "$3" || { echo "FAILED: $1: a line matches /$2/ in:"; sed 's/^/  | /' "$3"; fails=$((fails + 1)); }
}

# A fake grader: "fake.sh -np P --raw 3" prints what lesson 04's part 1 printed at P, from
# the case named by $CASE: P=1 passes both checks, P>1 MPI aborts after the first one.
fake=$RUNS_W/fake.sh
cat >"$fake" <<'FAKE'
P=$2
case "$CASE:$P" in
  mpi_abort:1|hang:1)
    echo "PASS mpi_ring_sends_2p_minus_2_messages_of_n_over_p 0 messages"
    echo "PASS mpi_ring_equals_mpi_allreduce 7 counts"
    echo "# 2 of 2 checks passed" ;;
  mpi_abort:*)
    echo "PASS mpi_ring_sends_2p_minus_2_messages_of_n_over_p $((2 * P - 2)) messages"
    cat <<'OMPI'
[vm:16598] *** An error occurred in MPI_Sendrecv
[vm:16598] *** reported by process [741081089,1]
[vm:16598] *** on communicator MPI_COMM_WORLD
[vm:16598] *** MPI_ERR_COUNT: invalid count argument
[vm:16598] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,
[vm:16598] ***    and potentially your MPI job)
[vm:16594] 2 more processes have sent help message help-mpi-errors.txt / mpi_errors_are_fatal
[vm:16594] Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error messages
OMPI
    exit 2 ;;
  hang:*)
    echo "PASS mpi_ring_sends_2p_minus_2_messages_of_n_over_p $((2 * P - 2)) messages"
    sleep 30 ;;
  timing:*)  # another kind of run: prints its own check only
    echo "PASS simulated_time_within_5pc 1.00 ms"
    echo "# 1 of 1 checks passed" ;;
esac
FAKE

# 1 and 2: MPI aborts at P = 2..4; a timing run of another kind passes
export CASE=mpi_abort
labels=()
for P in 1 2 3 4; do
  run_launch "raw-P=$P" 10 bash "$fake" -np "$P" --raw 3
  labels+=("raw-P=$P")
done
CASE=timing run_launch "P=64" 10 bash "$fake" -np 64 --timing 1048572
labels+=("P=64")
out=$RUNS_W/report1
runs_report "${labels[@]}" >"$out"
rc=$?
expect "the MPI error is shown" '^#   MPI_Sendrecv failed: MPI_ERR_COUNT: invalid count argument' "$out"
expect_not "Open MPI's help-message aggregation is left out" 'help message|help_aggregate' "$out"
expect "a check the crashed runs never printed fails there" \
  '^FAIL mpi_ring_equals_mpi_allreduce: not reached at raw-P=2,3,4 \(the runs crashed; passed at raw-P=1\)$' "$out"
expect_not "no PASS for a check the crashed runs never reached" '^PASS mpi_ring_equals_mpi_allreduce' "$out"
expect "a check every run printed still passes" '^PASS mpi_ring_sends_2p_minus_2_messages_of_n_over_p \[raw-P=1,2,3,4\]' "$out"
expect "a run of another kind is not blamed" '^PASS simulated_time_within_5pc \[P=64\]' "$out"
[ "$rc" -eq 3 ] || { echo "FAILED: runs_report's status is $rc, not 3 (a run crashed)"; fails=$((fails + 1)); }

# 3: P=2 hangs (stopped after 1 s)
CASE=hang
run_launch "raw-P=1" 10 bash "$fake" -np 1 --raw 3
run_launch "raw-P=2" 1 bash "$fake" -np 2 --raw 3
out=$RUNS_W/report3
runs_report "raw-P=1" "raw-P=2" >"$out"
rc=$?
expect "a hung run's missing check" \
  '^FAIL mpi_ring_equals_mpi_allreduce: not reached at raw-P=2 \(the run hung; passed at raw-P=1\)$' "$out"
[ "$rc" -eq 124 ] || { echo "FAILED: runs_report's status is $rc, not 124 (a run hung)"; fails=$((fails + 1)); }

if [ "$fails" -eq 0 ]; then
  echo "runs_report_test: all as expected"
  exit 0
fi
echo "runs_report_test: $fails failed"
exit 1
