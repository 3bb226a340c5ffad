#!/usr/bin/env bash
# grade.sh — lesson 06's driver (run by lessons/kit/run_grader.sh, which sets
# LESSON_GRADER, LESSON_GRADER_SMPI, MPIRUN, SMPIRUN, LESSON_DIR, DT_SOURCE): the grader
# under mpirun for P = 1..8 (groups of 2, 3 and 4: uneven wherever P is not a multiple;
# every torus shape X×Y = P), then under smpirun: hier timed at P = 1024 on the flat
# platform of tests/coll with 8 ranks per host, and P = 256 on the fat tree of
# fattree128.xml, 32 nodes of 8 GPUs under two leaf switches (hier in groups of 8, the
# 16×16 torus). One seed for every run
# (DT_LESSON_SEED replays them all). One line per check over all runs (lessons/kit/runs.sh):
# PASS with the runs it passed in, or the first FAIL with the runs it failed in. A run that
# crashes or hangs (cut at LESSON_RUN_TIMEOUT seconds) is reported as such, with what it
# printed, and the score says so; after a hang the other runs are left out. Exit 0: every
# check passed; 1: some failed; 3 or 124: a run crashed or hung.
# The grader is split (lessons/kit/subject.h): each run's grader starts its own subject
# (LESSON_SUBJECT: student_hier.c in a process of its own), whose output goes to the run's
# log (kit/split.sh's split_log), shown only when the subject crashes or hangs.
set -u
: "${LESSON_GRADER:?}" "${LESSON_GRADER_SMPI:?}" "${MPIRUN:?}" "${SMPIRUN:?}" "${DT_SOURCE:?}"
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(date +%s)$((RANDOM % 1000))}
. "$LESSON_DIR/../kit/runs.sh"      # run_launch, runs_report
. "$LESSON_DIR/../kit/runs_smpi.sh"  # SMPI_TIMING; runs_next: no run after a hang, or after
                                     # the check CI's mutant must fail (LESSON_STOP_AT_FAIL)
. "$LESSON_DIR/../kit/split.sh"     # split_log: the student's code in a process of its own
# split_next LABEL LIMIT CMD...: runs_next with the run's own subject log in its environment
# rather than on its command line, so that the runs of one kind keep one command (runs.sh's
# runs_kind: a check that a crashed run never reached, where a run of its kind did, is no PASS)
split_next() { LESSON_SUBJECT_LOG=$(split_log "$1") runs_next "$@"; }
runs_begin
RUNS_HANG_HINT="an endless loop in student_hier.c, or ranks waiting for each other"
limit=${LESSON_RUN_TIMEOUT:-90}
hosts=$RUNS_W/hosts

for np in 1 2 3 4 5 6 7 8; do
  split_next "P=$np" "$limit" "$MPIRUN" --quiet -np "$np" --oversubscribe "$LESSON_GRADER" \
      --large 100003
done

# 8 ranks on each of the first 128 hosts: 8 GPUs per node (the fat tree's run takes the
# first 256 lines: 32 nodes, 16 under each of two leaf switches)
for h in $(seq 0 127); do for _ in 1 2 3 4 5 6 7 8; do echo "node-$h"; done; done > "$hosts"
# SMPI_TIMING (kit/runs_smpi.sh): tests/coll/CMakeLists.txt's DT_SMPI_TIMING
# The timing first (2 s; the fat tree's data run takes 5), so that a mutant only the timing
# catches stops there (LESSON_STOP_AT_FAIL); with it the performance target: hier's speedup
# over the flat ring against the model's. The flat ring's time on this platform, 1024 ranks,
# 4 MiB, is FLAT_RING_TIME: simulated once (the same on every machine; 1024 ranks round
# by round take ~40 s), and simulated again by the instructor's cases, which check it.
FLAT_RING_TIME=0.01082253159999933
# flat1024.xml: α = 2 µs and β = 0.8 ns/B
# between hosts, α' = 0.1 µs and β' = 10 ps/B inside
split_next "P=1024" "$limit" "$SMPIRUN" -platform "$DT_SOURCE/tests/coll/flat1024.xml" \
    -hostfile "$hosts" -no-privatize "${SMPI_TIMING[@]}" -np 1024 "$LESSON_GRADER_SMPI" \
    --no-data --timing 4194304 --group 8 --alpha 2e-6 --beta 8e-10 --alpha-intra 1e-7 \
    --beta-intra 1e-11 --flat-ring-time "$FLAT_RING_TIME"
# The data at scale: every element exact, on a platform whose links are shared (the timing
# run above is the 1024-rank one; the data at 1024 ranks adds no path that 256 lack and
# costs 20 s of CPU more)
split_next "P=256-fat-tree" "$limit" "$SMPIRUN" -platform "$LESSON_DIR/fattree128.xml" \
    -hostfile "$hosts" -no-privatize "${SMPI_TIMING[@]}" -np 256 "$LESSON_GRADER_SMPI" \
    --groups 8 --tori 16x16 --large 10007 --few
runs_report "${RUNS_LABELS[@]}"
