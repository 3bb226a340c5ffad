#!/bin/sh
# handout_instructor_check.sh LESSONS_DIR — CI: a fresh handout holds no instructor cases,
# and `lessons/grade NN --instructor` in it refuses with exit 2 and a line saying that the
# instructor cases are not in a handout, for every lesson NN that has instructor/grade.sh
# in this checkout (before it builds anything: a second or so in all).
set -u
lessons=${1:?usage: handout_instructor_check.sh LESSONS_DIR}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$lessons/handout" "$out/h" >/dev/null || exit 1
if find "$out/h/lessons" -name instructor | grep .; then
  echo "FAIL: the handout holds instructor cases (above)"
  exit 1
fi
n=0
for g in "$lessons"/[0-9][0-9]-*/instructor/grade.sh; do
  [ -f "$g" ] || continue
  num=$(basename "$(dirname "$(dirname "$g")")" | cut -c1-2)
  msg=$("$out/h/lessons/grade" "$num" --instructor 2>&1)
  rc=$?
  if [ "$rc" -ne 2 ] || ! echo "$msg" | grep -q "instructor cases are not in a handout"; then
    echo "FAIL: lessons/grade $num --instructor in a handout: exit $rc, said: $msg"
    exit 1
  fi
  echo "PASS lesson $num: $msg (exit 2)"
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "FAIL: no lesson has instructor/grade.sh"; exit 1; }
