#!/bin/sh
# leak_canary.sh MPIRUN CANARY — under .ci/sanitize's environment, LeakSanitizer reports the
# one block leak_canary.c leaks on each of 2 ranks, its first frame canary_leak (the
# ranks' reports interleave, so lines are counted), and no other leak
# (Open MPI's are suppressed by tests/sanitize/lsan.supp once attributed to their library).
# (Open MPI's default wait for the other ranks once one exits non-zero, 1 s: the tests' 0,
# DT_MPIRUN_ENV, kills the second rank before LeakSanitizer has written its report)
out=$(OMPI_MCA_odls_base_sigkill_timeout=1 "$1" -np 2 --oversubscribe "$2" 2>&1)
echo "$out"
n=$(echo "$out" | grep -c "^Direct leak of 1234 byte(s) in 1 object(s)")
ours=$(echo "$out" | grep -c "#1 .* in canary_leak ")
all=$(echo "$out" | grep -c "^\(Direct\|Indirect\) leak")
[ "$n" = 2 ] && [ "$ours" = 2 ] || { echo "FAIL: expected canary_leak's 1234 bytes reported on both ranks, named by the function (found $n, $ours named)"; exit 1; }
[ "$all" = 2 ] || { echo "FAIL: $all leaks reported, only the canary's 2 expected (a library's leak not suppressed: lsan.supp, keep_dl.c)"; exit 1; }
echo "PASS leak_canary"
