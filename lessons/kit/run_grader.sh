#!/usr/bin/env bash
# run_grader.sh — runs one built variant of a lesson's grader and counts its checks.
#   run_grader.sh NN VARIANT BUILD_DIR [--expect-fail [CHECK [REGEX]] | --expect-crash REGEX]
# VARIANT: student (the lesson's own files: the skeleton or the student's work), solution,
# or mutant_CHECK. First the check no_library_answer (kit/no_library_answer.py: the
# student's objects call nothing of dtlab's library beyond the lesson's calls.txt); then
# the lesson's grade.sh, if it has one, drives the grader (several mpirun or smpirun runs),
# else the grader runs alone. Every check prints one line, "PASS name ..." or
# "FAIL name: hint". Exit 0 only when every check passed (and at least one ran); 1
# otherwise, with the score. A crash or a hang (over LESSON_TIMEOUT seconds, 240 by
# default) is reported as such, fails too, and counts in the score as a failed check.
# --expect-fail (CI): exit 0 when the variant fails cleanly — FAIL lines, no crash, no
# hang — and, with CHECK, when the check named CHECK is among the failed ones, its line
# matching REGEX when given (the hint names the bug) (CHECK
# no_library_answer: the cheat; once refused, the grader is not run).
# --expect-instructor-fail [REGEX] (CI, with LESSON_INSTRUCTOR=1): exit 0 when every public
# check passed and an instructor check failed cleanly (a bug only the instructor's cases
# catch), its FAIL line matching REGEX when given.
# A lesson with an answer sheet (answers_form.txt): after the grade, the sheet (kit/answers.py),
# one check per answer against instructor/answers_key.sh; in a handout (no key) only the
# sheet's form, whose numbers never count as passed; LESSON_ANSWERS_ONLY=1 (CI, a mutant of
# the sheet) grades the sheet alone.
# LESSON_INSTRUCTOR=1 (lessons/grade NN --instructor): after the public grade, the lesson's
# instructor-only cases (instructor/grade.sh), checks named instructor.<check>;
# LESSON_SKIP_PUBLIC=1 with it (CI) runs those alone.
# --expect-crash REGEX (CI): exit 0 when the variant crashed or hung, the score says so,
# and its output matches REGEX (the reason shown: a failed assertion, not only the
# launcher's notice).
set -u
num=${1:?usage: run_grader.sh NN VARIANT BUILD_DIR [--expect-fail [CHECK]]}
variant=${2:?variant}
build=${3:?build dir}
expect=${4:-}
want=${5:-}
say=${6:-}
env_file="$build/lessons/kit.env"
if [ ! -f "$env_file" ]; then
  echo "run_grader: $env_file is missing: configure the build first (cmake -S . -B $build)" >&2
  exit 2
fi
. "$env_file"
# the interpreter configure found, unless this user cannot run it (a build configured by
# another user, whose python3 sits in a private folder): then the one on PATH
[ -x "${PYTHON:-}" ] || PYTHON=python3
dir=$(ls -d "$DT_SOURCE"/lessons/"$num"-*/ 2>/dev/null | head -n 1)
if [ -z "$dir" ]; then
  echo "run_grader: no lesson $num under $DT_SOURCE/lessons" >&2
  exit 2
fi
export LESSON_DIR=${dir%/} LESSON_GRADER="$build/lessons/$num/$variant/grader"
export LESSON_GRADER_SMPI="$build/lessons/$num/$variant/grader_smpi.so"
export MPIRUN SMPIRUN DT_BUILD DT_SOURCE
# mpirun refuses root unless told (containers and CI run as root); harmless otherwise
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# LESSON_ANSWERS_ONLY=1 (CI, a mutant of the answer sheet): the sheet alone, no grader
answers_only=${LESSON_ANSWERS_ONLY:-0}
if [ "$answers_only" != 1 ] && [ ! -x "$LESSON_GRADER" ]; then
  echo "run_grader: $LESSON_GRADER is not built (cmake --build $build --target lesson${num}_$variant)" >&2
  exit 2
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# A split grader (kit/subject.h: the student's code in programs of its own, beside the
# grader): the grader starts LESSON_SUBJECT itself, grade.sh runs LESSON_SUBJECT_MPI
# (kit/split.sh). Copies in a folder any user can read, so that the subject runs as
# nobody when the grade runs as root.
if [ -x "$build/lessons/$num/$variant/subject" ] || [ -x "$build/lessons/$num/$variant/subject_mpi" ]; then
  subjects=$(mktemp -d)
  trap 'rm -f "$out"; rm -rf "$subjects"' EXIT
  chmod 755 "$subjects"
  for s in subject subject_mpi; do
    [ -x "$build/lessons/$num/$variant/$s" ] && cp "$build/lessons/$num/$variant/$s" "$subjects/"
  done
  export LESSON_SUBJECT="$subjects/subject" LESSON_SUBJECT_MPI="$subjects/subject_mpi"
  # what the subject prints (shown indented when it crashes; grade.sh may give each run its own)
  export LESSON_SUBJECT_LOG=${LESSON_SUBJECT_LOG:-$subjects/subject.log}
fi
# no_library_answer: the student's files call no implementation of dtlab's that the lesson
# grades (their objects' undefined symbols against the lesson's calls.txt)
librc=0
[ "$answers_only" = 1 ] || "${PYTHON:-python3}" "$DT_SOURCE/lessons/kit/no_library_answer.py" "$LESSON_DIR" \
    "$LESSON_GRADER" "$build/lessons/$num/$variant/student_files.txt" >"$out" 2>&1 || librc=$?
cat "$out"
if [ "$librc" -gt 1 ]; then
  echo "run_grader: the check no_library_answer could not run (see above)" >&2
  exit 2
fi
if [ "$librc" -eq 1 ] && [ "$expect" = "--expect-fail" ] && [ "$want" = no_library_answer ]; then
  echo "score: 0/1 checks passed (lesson $num, $variant: refused before grading)"
  exit 0
fi
# CI's mutants only need their own check to fail: a grade.sh may skip its remaining runs once
# the check named here has failed, a crashing one once a run crashed (kit/runs.sh's
# runs_stop_at_fail, after each run of lessons 03 to 06 and 11)
[ "$expect" = "--expect-fail" ] && [ -n "$want" ] && export LESSON_STOP_AT_FAIL="$want"
[ "$expect" = "--expect-instructor-fail" ] && export LESSON_STOP_AT_FAIL=instructor
[ "$expect" = "--expect-crash" ] && export LESSON_STOP_AT_CRASH=1
limit=${LESSON_TIMEOUT:-240}
rc=0
if [ "$answers_only" = 1 ]; then
  echo "# the answer sheet alone (LESSON_ANSWERS_ONLY)"
elif [ "${LESSON_SKIP_PUBLIC:-0}" = 1 ] && [ "${LESSON_INSTRUCTOR:-0}" = 1 ]; then
  echo "# the public runs left out (LESSON_SKIP_PUBLIC: CI's solution_passes ran them)"
elif [ -f "$LESSON_DIR/grade.sh" ]; then
  timeout -k 5 "$limit" bash "$LESSON_DIR/grade.sh" 2>&1 | tee -a "$out"
  rc=${PIPESTATUS[0]}
else
  timeout -k 5 "$limit" "$LESSON_GRADER" 2>&1 | tee -a "$out"
  rc=${PIPESTATUS[0]}
fi
# The answer sheet (a lesson with answers_form.txt, or its key): the variant's answers.txt
# against the key instructor/answers_key.sh computes with dtlab's tools (kit/answers.py),
# one check per answer, in the same score. Keys computed with the student's own code use
# the variant's programs (a mutant's: the solution's). In a handout, which has no key, the
# sheet's form alone: an answer that is not a number fails, a number is left to the
# instructor (never a PASS).
# CI's mutants of the code (--expect-fail CHECK, --expect-crash, --expect-instructor-fail)
# carry the solution's sheet and need only their own check: their sheet is not graded.
sheet_too=1
case "$expect" in
  --expect-fail) [ -n "$want" ] && [ "${want#answer_}" = "$want" ] && sheet_too=0 ;;
  --expect-crash|--expect-instructor-fail) sheet_too=0 ;;
esac
if { [ -f "$LESSON_DIR/answers_form.txt" ] || [ -f "$LESSON_DIR/instructor/answers_key.sh" ]; } &&
   [ "${LESSON_SKIP_PUBLIC:-0}" != 1 ] && [ "$sheet_too" = 1 ]; then
  case "$variant" in
    student) sheet="$LESSON_DIR/answers.txt" ;;
    solution) sheet="$LESSON_DIR/solution/answers.txt" ;;
    *) sheet="$build/lessons/$num/$variant/answers.txt" ;;
  esac
  programs="$build/lessons/$num/$variant"
  case "$variant" in mutant_*) programs="$build/lessons/$num/solution" ;; esac
  "${PYTHON:-python3}" "$DT_SOURCE/lessons/kit/answers.py" "$LESSON_DIR" "$sheet" "$programs" 2>&1 | tee -a "$out"
  arc=${PIPESTATUS[0]}
  if [ "$arc" -ge 2 ]; then
    [ "$rc" -lt 2 ] && rc=2  # the key itself could not be run: counted as a crash
  elif [ "$arc" -eq 1 ] && [ "$rc" -eq 0 ]; then
    rc=1
  fi
fi
# --instructor (LESSON_INSTRUCTOR=1): then the lesson's instructor-only cases, a driver kept
# beside solution/ (instructor/grade.sh, left out of the handout, written like grade.sh),
# whose checks are named instructor.<check> in the same score. A crash or a hang there
# counts as in the public runs.
if [ "${LESSON_INSTRUCTOR:-0}" = 1 ]; then
  if [ ! -f "$LESSON_DIR/instructor/grade.sh" ]; then
    echo "run_grader: lesson $num has no instructor cases ($LESSON_DIR/instructor/grade.sh;" \
         "a handout has none)" >&2
    exit 2
  fi
  echo "# instructor-only cases ($LESSON_DIR/instructor/grade.sh)"
  timeout -k 5 "$limit" bash "$LESSON_DIR/instructor/grade.sh" 2>&1 |
    sed -u 's/^\(PASS\|FAIL\) /\1 instructor./' | tee -a "$out"
  irc=${PIPESTATUS[0]}
  # the worse of the two: a hang, then a crash, then a failed check
  for v in 124 137; do [ "$irc" -eq "$v" ] && rc=$irc; done
  if [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && [ "$irc" -gt "$rc" ]; then rc=$irc; fi
fi
passed=$(grep -c '^PASS ' "$out")
failed=$(grep -c '^FAIL ' "$out")
crashed=0 note=""
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  if [ "$SECONDS" -lt "$limit" ] && [ -f "$LESSON_DIR/grade.sh" ]; then
    echo "HANG: a run of the grader hung and was stopped (above: which, and why)"
  else
    echo "HANG: the grader ran past ${limit} s and was stopped"
  fi | tee -a "$out"
  crashed=1 note=": a run HUNG"
elif [ "$rc" -gt 1 ]; then
  if [ -f "$LESSON_DIR/grade.sh" ]; then
    echo "CRASH: a run of the grader crashed or hung (above: which, and what it printed)"
  else
    echo "CRASH: the grader exited with status $rc (a signal, a failed assertion, or an error before its checks)"
  fi | tee -a "$out"
  crashed=1 note=": a run CRASHED"
fi
# a crash or a hang is a failed check of its own: the checks it cut short never reported
[ "$crashed" -eq 0 ] || note="$note (counted as a failed check; the checks after it did not run)"
total=$((passed + failed + crashed))
scope=""
[ "${LESSON_INSTRUCTOR:-0}" = 1 ] && scope=", with the instructor's cases"
score="score: $passed/$total checks passed (lesson $num, $variant$scope)$note"
echo "$score"
if [ "$expect" = "--expect-crash" ]; then
  if [ "$crashed" -eq 0 ]; then
    echo "EXPECTED a crash or a hang, got exit $rc"
    exit 1
  fi
  if [ "$passed" -ge "$total" ] || ! echo "$score" | grep -Eq 'CRASHED|HUNG'; then
    echo "EXPECTED the score to show the crash or the hang"
    exit 1
  fi
  if ! grep -Eq -- "$want" "$out"; then
    echo "EXPECTED the grade to say why it crashed (to print /$want/)"
    exit 1
  fi
  exit 0
fi
if [ "$expect" = "--expect-instructor-fail" ]; then
  # (CI: a mutant only the instructor's cases catch) every public check passed, and an
  # instructor check failed cleanly, its line matching REGEX when given
  public_failed=$(grep '^FAIL ' "$out" | grep -vc '^FAIL instructor\.')
  if [ "$crashed" -eq 1 ] || [ "$public_failed" -ne 0 ] || ! grep -q '^FAIL instructor\.' "$out"; then
    echo "EXPECTED the public checks to pass and an instructor check to fail cleanly;" \
         "got exit $rc, $public_failed public FAIL lines"
    exit 1
  fi
  if [ -n "$want" ] && ! grep '^FAIL instructor\.' "$out" | grep -Eq -- "$want"; then
    echo "EXPECTED an instructor check's FAIL line to say /$want/"
    exit 1
  fi
  exit 0
fi
if [ "$expect" = "--expect-fail" ]; then
  if [ "$crashed" -eq 1 ] || [ "$failed" -eq 0 ] || [ "$rc" -eq 0 ]; then
    echo "EXPECTED a clean failure (FAIL lines, exit 1), got exit $rc with $failed FAIL lines"
    exit 1
  fi
  if [ -n "$want" ] && ! grep -q "^FAIL $want\b" "$out"; then
    echo "EXPECTED check $want to fail; the failed ones:"; grep '^FAIL ' "$out" | cut -d' ' -f2 | sort -u
    exit 1
  fi
  if [ -n "$say" ] && ! grep "^FAIL $want\b" "$out" | grep -Eq -- "$say"; then
    echo "EXPECTED the FAIL line of $want to say /$say/"
    exit 1
  fi
  exit 0
fi
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && [ "$crashed" -eq 0 ]
