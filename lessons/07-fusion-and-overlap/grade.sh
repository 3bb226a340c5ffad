#!/usr/bin/env bash
# grade.sh — lesson 07's driver (run by lessons/kit/run_grader.sh, which sets LESSON_GRADER
# and MPIRUN): the grader under mpirun for P = 1, 2 and 3, one seed for all three
# (DT_LESSON_SEED replays). A run that crashes or hangs (cut at LESSON_RUN_TIMEOUT seconds)
# becomes a FAIL line with a hint. Exit 0 only when every run passed.
set -u
export DT_LESSON_SEED=${DT_LESSON_SEED:-$(date +%s)$((RANDOM % 1000))}
limit=${LESSON_RUN_TIMEOUT:-60}
status=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for np in 1 2 3; do
  timeout -k 5 "$limit" "$MPIRUN" --quiet -np "$np" --oversubscribe "$LESSON_GRADER" 2>&1 | tee "$out"
  rc=${PIPESTATUS[0]}
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "FAIL overlap_result_bit_identical_without_overlap: mpirun -np $np did not finish in" \
         "$limit s: an allreduce started on some ranks and not others (the same buckets, in" \
         "the same order, on every rank), or one never waited for"
    status=1
    break
  elif ! grep -Eq '^# [0-9]+ of [0-9]+ checks passed' "$out"; then
    echo "FAIL overlap_no_bucket_starts_before_its_last_gradient: mpirun -np $np ended (exit" \
         "$rc) before its checks did: see the messages above (a crash in student_fusion.c?" \
         "writing past out[]?)"
  fi
  [ "$rc" -eq 0 ] || status=1
done
exit $status
