#!/usr/bin/env bash
# run_grader.sh — runs one built variant of a lesson's grader and counts its checks.
#   run_grader.sh NN VARIANT BUILD_DIR [--expect-fail [CHECK]]
# VARIANT: student (the lesson's own files: the skeleton or the student's work), solution,
# or mutant_CHECK. The lesson's grade.sh, if it has one, drives the grader (several mpirun
# or smpirun runs); else the grader runs alone. Every check prints one line,
# "PASS name ..." or "FAIL name: hint". Exit 0 only when every check passed (and at least
# one ran); 1 otherwise, with the score. A crash or a hang (over LESSON_TIMEOUT seconds,
# 240 by default) is reported as such and fails too.
# --expect-fail (CI): exit 0 when the variant fails cleanly — FAIL lines, no crash, no
# hang — and, with CHECK, when the check named CHECK is among the failed ones.
set -u
num=${1:?usage: run_grader.sh NN VARIANT BUILD_DIR [--expect-fail [CHECK]]}
variant=${2:?variant}
build=${3:?build dir}
expect=${4:-}
want=${5:-}
env_file="$build/lessons/kit.env"
if [ ! -f "$env_file" ]; then
  echo "run_grader: $env_file is missing: configure the build first (cmake -S . -B $build)" >&2
  exit 2
fi
. "$env_file"
dir=$(ls -d "$DT_SOURCE"/lessons/"$num"-*/ 2>/dev/null | head -n 1)
if [ -z "$dir" ]; then
  echo "run_grader: no lesson $num under $DT_SOURCE/lessons" >&2
  exit 2
fi
export LESSON_DIR=${dir%/} LESSON_GRADER="$build/lessons/$num/$variant/grader"
export LESSON_GRADER_SMPI="$build/lessons/$num/$variant/grader_smpi.so"
export MPIRUN SMPIRUN DT_BUILD DT_SOURCE
if [ ! -x "$LESSON_GRADER" ]; then
  echo "run_grader: $LESSON_GRADER is not built (cmake --build $build --target lesson${num}_$variant)" >&2
  exit 2
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# CI's mutants only need their own check to fail: a grade.sh may skip its remaining runs once
# the check named here has failed (lesson 06's does; its 1024-rank runs take half a minute)
[ "$expect" = "--expect-fail" ] && [ -n "$want" ] && export LESSON_STOP_AT_FAIL="$want"
limit=${LESSON_TIMEOUT:-240}
if [ -f "$LESSON_DIR/grade.sh" ]; then
  timeout -k 5 "$limit" bash "$LESSON_DIR/grade.sh" 2>&1 | tee "$out"
else
  timeout -k 5 "$limit" "$LESSON_GRADER" 2>&1 | tee "$out"
fi
rc=${PIPESTATUS[0]}
passed=$(grep -c '^PASS ' "$out")
failed=$(grep -c '^FAIL ' "$out")
crashed=0
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "HANG: the grader ran past ${limit} s and was stopped"
  crashed=1
elif [ "$rc" -gt 1 ]; then
  echo "CRASH: the grader exited with status $rc (a signal or an error before its checks)"
  crashed=1
fi
echo "score: $passed/$((passed + failed)) checks passed (lesson $num, $variant)"
if [ "$expect" = "--expect-fail" ]; then
  if [ "$crashed" -eq 1 ] || [ "$failed" -eq 0 ] || [ "$rc" -eq 0 ]; then
    echo "EXPECTED a clean failure (FAIL lines, exit 1), got exit $rc with $failed FAIL lines"
    exit 1
  fi
  if [ -n "$want" ] && ! grep -q "^FAIL $want\b" "$out"; then
    echo "EXPECTED check $want to fail; the failed ones:"; grep '^FAIL ' "$out" | cut -d' ' -f2 | sort -u
    exit 1
  fi
  exit 0
fi
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ] && [ "$passed" -gt 0 ] && [ "$crashed" -eq 0 ]
