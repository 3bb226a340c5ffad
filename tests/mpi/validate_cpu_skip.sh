#!/bin/sh
# bench/validate_cpu.sh on a machine with fewer cores than a straggler case's ranks: the case
# is skipped (an oversubscribed rank is not a straggler) with a SKIPPED line on stderr and in
# the report that names the ranks needed and the cores there are; nothing is run for it (the
# build directory given holds stubs that record any call); a case that fits still runs (its
# stub dtrain is called, fails, and the script exits 2 naming it). Bad input exits 2.
# usage: validate_cpu_skip.sh SOURCE_DIR   (MPIRUN or mpirun on PATH; about a second)
set -u
SRC=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/vskip_XXXXXX"); trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
for p in dtrain dtsim dtcoll-bench; do
  printf '#!/bin/sh\necho "%s $*" >>"%s/called"\nexit 1\n' "$p" "$W" >"$W/$p"; chmod +x "$W/$p"
done
N=$(getconf _NPROCESSORS_ONLN); NP=$((N + 1))
out=$(sh "$SRC/bench/validate_cpu.sh" --build "$W" --repeats 1 --cases "resnet8:32:$((16 * NP)):overlap:$NP:1:1.5" --out "$W/V.md" 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "exit $rc for a case of $NP ranks on $N cores, expected 0 (skipped)"
want="SKIPPED resnet8:32:$((16 * NP)):overlap:$NP:1:1.5 (rank 1 1.5x slower on $NP ranks): it needs $NP cores and this machine has $N"
echo "$out" | grep -q -F "$want" || fail "no line '$want'"
grep -q -F "$want" "$W/V.md" || { cat "$W/V.md"; fail "the report lacks the SKIPPED line"; }
grep -q -F "0 of 0 cases (1 skipped, below)" "$W/V.md" || { head -3 "$W/V.md"; fail "the report's count"; }
[ ! -e "$W/called" ] || { cat "$W/called"; fail "a skipped case ran something"; }
echo "ok: $NP ranks on $N cores skipped, nothing run"
# a straggler case that fits the cores is not skipped: the stub dtrain fails, and it says so
out=$(sh "$SRC/bench/validate_cpu.sh" --build "$W" --repeats 1 --cases "resnet8:32:32:overlap:2:1:1.5" --out "$W/V2.md" 2>&1); rc=$?
[ $rc -eq 2 ] && [ -s "$W/called" ] && ! echo "$out" | grep -q SKIPPED ||
  { echo "$out"; fail "a 2-rank straggler case: exit $rc, expected 2 from the stub dtrain, not skipped"; }
echo "ok: 2 ranks run (the stub was called)"
out=$(sh "$SRC/bench/validate_cpu.sh" --build "$W" --cases "resnet8:32:64:overlap:2:2:1.5" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "slow rank 2 is not one of the 2 ranks" || { echo "$out"; fail "slow rank 2 of 2: exit $rc"; }
echo "PASS validate_cpu_skip"
