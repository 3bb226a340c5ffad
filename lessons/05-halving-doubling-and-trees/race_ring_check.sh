#!/usr/bin/env bash
# race_ring_check.sh — CI: lesson 05's race runs on the student's own lesson-04 ring
# (your_ring.h, race_ring.c) once it is a ring, and on dtlab's until then:
#   - the reference solution's build (whose subject holds lesson 04's reference ring.c) says
#     "the ring: yours", and its ring's simulated times are dtlab's ring's to the last digit
#     (the same messages; at 32 ranks the rounds are coarsened by 2, so the keys count too);
#   - the student build (lesson 04's skeleton ring.c: no rounds) says why it races dtlab's.
# Run from the repository root with BUILD set (race.sh's own variable).
set -u
race=lessons/05-halving-doubling-and-trees/race.sh
fails=0
ring_times() { awk '/^ +[0-9]+ /{ print $1, $2 }'; }
sol=$(VARIANT=solution "$race" --ranks 32 64K,1M 2>&1)
stu=$(VARIANT=student "$race" --ranks 32 64K,1M 2>&1)
if echo "$sol" | grep -q "^# the ring: yours, lesson 04's"; then
  echo "PASS the reference build races lesson 04's ring"
else
  echo "$sol" | tail -5; echo "FAIL the reference build does not race lesson 04's ring"; fails=1
fi
if echo "$stu" | grep -q "^# the ring: dtlab's, as yours .* is not a ring yet: rank 0 of 32 has 0 rounds"; then
  echo "PASS the skeleton's build races dtlab's ring and says why"
else
  echo "$stu" | tail -5; echo "FAIL the skeleton's build does not say it races dtlab's ring"; fails=1
fi
a=$(echo "$sol" | ring_times) b=$(echo "$stu" | ring_times)
if [ -n "$a" ] && [ "$a" = "$b" ] && [ "$(echo "$a" | wc -l)" = 2 ]; then
  echo "PASS lesson 04's reference ring simulates in dtlab's ring's time: $(echo $a)"
else
  echo "lesson 04's: $a"; echo "dtlab's: $b"
  echo "FAIL lesson 04's reference ring does not simulate in dtlab's ring's time"; fails=1
fi
exit "$fails"
