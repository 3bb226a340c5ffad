#!/usr/bin/env bash
# subject_test.sh JUDGE SUBJECT — the split grader (kit/subject.h) against a submission that
# wants its grade (kit/subject_test.c): one line per case, PASS or FAIL; exit 0 when all
# passed. As root, the subject must run as nobody (uid 65534); as another user the case
# that kills its parent is skipped, visibly (a user's own process may signal its parent).
set -u
judge=${1:?judge} subject=${2:?subject}
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
chmod 755 "$w"
cp "$subject" "$w/subject"
export LESSON_SUBJECT="$w/subject" LESSON_SUBJECT_LOG="$w/log" LESSON_SUBJECT_TIMEOUT=2
export DT_LESSON_SEED=12345 LESSON_CANARY=grader-secret
bad=0
check() {  # name, condition's status, what it shows on failure
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1: $3"; bad=1; fi
}
run() { : >"$w/log"; "$judge" "$1" >"$w/out" 2>&1; echo $?; }

rc=$(run see)
! grep -Eq '^env (LESSON_|DT_|OMPI_)' "$w/out"
check environment_scrubbed $? "the subject saw the grader's variables: $(grep -E '^env (LESSON_|DT_|OMPI_)' "$w/out" | head -3 | tr '\n' ' ')"
[ "$rc" -eq 0 ] && [ "$(grep -c '^fd ' "$w/out")" -eq 5 ] && grep -q '^fd 4$' "$w/out"
check only_descriptors_0_to_4 $? "exit $rc; $(grep '^fd ' "$w/out" | tr '\n' ' ')"
grep -q '^stdout own$' "$w/out"
check output_not_the_graders $? "$(grep '^stdout' "$w/out")"
if [ "$(id -u)" = 0 ]; then
  grep -q '^uid 65534$' "$w/out"
  check runs_as_nobody_under_root $? "$(grep '^uid' "$w/out")"
fi

if [ "$(id -u)" = 0 ]; then
  rc=$(run forge)
  [ "$rc" -eq 0 ] && grep -q '^judge: still here' "$w/out" && ! grep -q '^PASS' "$w/out" &&
    grep -q 'PASS forged_check' "$w/log"
  check forged_lines_stay_in_the_log_and_parent_lives $? "exit $rc: $(head -c 300 "$w/out")"
else
  echo "# SKIPPED forged_lines_stay_in_the_log_and_parent_lives: not root (the subject runs as this user and may signal its parent)"
fi

rc=$(run exit0)
[ "$rc" -eq 3 ] && grep -q 'exited with status 0 during exit0' "$w/out" &&
  grep -q '^submission| PASS forged_check before exiting' "$w/out" && ! grep -q '^PASS' "$w/out"
check exit_zero_is_a_crash_named $? "exit $rc: $(tail -c 300 "$w/out")"

rc=$(run hang)
[ "$rc" -eq 124 ] && grep -q '^# hang: hang did not return within 2 s' "$w/out"
check no_reply_is_a_hang $? "exit $rc: $(tail -c 300 "$w/out")"

rc=$(run bad)
[ "$rc" -eq 3 ] && grep -q 'malformed reply' "$w/out"
check forged_frame_is_refused $? "exit $rc: $(tail -c 300 "$w/out")"
rc=$(run callback)
[ "$rc" -eq 0 ] && grep -q '^callbacks gave 12$' "$w/out"
check callbacks_answered_by_the_judge $? "exit $rc: $(tail -c 300 "$w/out")"
rc=$(run escape)
if grep -q '^landlock abi [1-9]' "$w/out"; then
  [ "$rc" -eq 0 ] && grep -q '^create /tmp: refused' "$w/out" && grep -q '^create /: refused' "$w/out"
  check files_read_only_to_the_subject $? "exit $rc: $(grep -E '^(landlock|create)' "$w/out" | tr '\n' ' ')"
else
  echo "# SKIPPED files_read_only_to_the_subject: this kernel has no Landlock ($(grep '^landlock' "$w/out"))"
fi
[ "$rc" -eq 0 ] && grep -q '^ptrace judge: refused' "$w/out" && grep -q '^read judge environ: refused' "$w/out"
check judge_closed_to_the_subject $? "exit $rc: $(grep -E '^(ptrace|read)' "$w/out" | tr '\n' ' ')"
exit $bad
