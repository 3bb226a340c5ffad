#!/bin/sh
# registry_lists.sh COLL_CHECK RUN NAMES — what cmake/dtlab_algos.cmake read from the registry's
# source (RUN: the --algos list of the algorithms tests run; NAMES: every name, ", " between)
# against what the compiled registry says (COLL_CHECK --list-algos: "name flag..." a line).
set -u
listing=$("$1" --list-algos) || { echo "FAIL: $1 --list-algos"; exit 1; }
run=$(echo "$listing" | grep -v -e DT_ALGO_EXTERNAL -e DT_ALGO_CHOOSES | cut -d' ' -f1 | paste -sd, -)
names=$(echo "$listing" | cut -d' ' -f1 | paste -sd, - | sed 's/,/, /g')
fail=0
[ "$run" = "$2" ] || { echo "FAIL: the tests run '$2'; the registry has schedules for '$run'"; fail=1; }
[ "$names" = "$3" ] || { echo "FAIL: the tests expect the names '$3'; the registry has '$names'"; fail=1; }
[ $fail = 0 ] && echo "PASS registry_lists: $run"
exit $fail
