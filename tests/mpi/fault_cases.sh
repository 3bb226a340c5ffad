#!/bin/sh
# fault_cases.sh CASE — dtrain under mpirun when things go wrong (tests/mpi/CMakeLists.txt):
#   rank_sigkill       rank 1 killed with SIGKILL mid-training: every process gone within 30 s,
#                      exit non-zero, Open MPI's message names rank 1
#   checkpoint_killed  rank 0 killed by the kernel half-way through writing a checkpoint (the
#                      file-size limit at half the checkpoint, SIGXFSZ: a kill at a byte we
#                      choose): the previous checkpoint byte-identical, the next run removes
#                      the dead run's temporary file, and --resume from it ends bit-identical
#                      to a run never interrupted
#   disk_full          writes fail (the same limit with SIGXFSZ ignored: EFBIG, the path of
#                      ENOSPC) for a checkpoint, a --trace and a --log: a message naming the
#                      file, exit non-zero, the previous file intact, no temporary left, the
#                      log holding only whole rows
#   sigterm_saves      SIGTERM to mpirun: the ranks stop together after a step, save it, and
#                      --resume starts from exactly that step
# Environment: DTRAIN, ST_COMPARE (tests/mpi/st_compare.c), MPIRUN. Fresh seeds, printed.
set -u
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dtfault_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"
fail() { echo "FAIL: $*"; exit 1; }
SYN="--data synthetic --image-size 16 --classes 4"
DT="--quiet --threads 1 --seed $SEED"
run() { np=$1; shift; "$MPIRUN" -np "$np" --oversubscribe "$DTRAIN" $DT "$@"; }
# run_limited NP BLOCKS SIGXFSZ(default|ignore) ARGS: every rank under `ulimit -f BLOCKS`
# (512-byte blocks); with "ignore" a write past the limit fails with EFBIG instead of a kill.
# Open MPI's shared-memory files would meet the limit first, so these runs use TCP between
# the ranks and PMIx's hash store (no shared-memory segments).
run_limited() {
  np=$1 blocks=$2 sig=$3; shift 3
  trapcmd=""; [ "$sig" = ignore ] && trapcmd="trap '' XFSZ;"
  "$MPIRUN" -np "$np" --oversubscribe --mca btl self,tcp -x PMIX_MCA_gds=hash \
    sh -c "$trapcmd ulimit -c 0; ulimit -f $blocks; exec \"\$0\" \"\$@\"" "$DTRAIN" $DT "$@"
}
# the pid of world rank $1 among this test's dtrain processes (their command line names $W)
rank_pid() {
  for p in $(pgrep -x dtrain); do
    tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "$W" || continue
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$1" && { echo "$p"; return; }
  done
}
only_checkpoint() {  # the directory holds the checkpoint and nothing else
  left=$(ls "$1" | grep -v '^checkpoint.safetensors$')
  [ -z "$left" ] || fail "left in $1: $left"
}
B="$SYN --synthetic-examples 192 --model resnet8 --batch 16 --eval-every 0 --epochs 3"  # 12 steps/epoch

case "$CASE" in
rank_sigkill)
  "$MPIRUN" -np 2 --oversubscribe "$DTRAIN" $DT $SYN --synthetic-examples 480 --model smallcnn --batch 16 --epochs 1000 --eval-every 0 --log "$W/log.csv" >"$W/out" 2>&1 &
  mp=$!
  i=0; while [ "$(wc -l <"$W/log.csv" 2>/dev/null || echo 0)" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  pid=$(rank_pid 1)
  [ -n "$pid" ] || { kill -9 $mp; cat "$W/out"; fail "rank 1 not found (training did not start in 60 s?)"; }
  start=$(date +%s); kill -9 "$pid"
  i=0; while kill -0 $mp 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  if kill -0 $mp 2>/dev/null; then kill -9 $mp; cat "$W/out"; fail "mpirun still running 30 s after rank 1 was killed"; fi
  wait $mp; rc=$?; took=$(( $(date +%s) - start ))
  [ -z "$(rank_pid 0)" ] || fail "rank 0 still running after mpirun exited"
  [ $rc -ne 0 ] || { cat "$W/out"; fail "exit 0 after a rank was killed"; }
  grep -q "rank 1 .*signal 9" "$W/out" || { cat "$W/out"; fail "no message naming rank 1 and the signal"; }
  grep "rank 1" "$W/out"
  echo "PASS rank_sigkill: every rank gone ${took}s after SIGKILL of rank 1 (bound 30 s), exit $rc" ;;
checkpoint_killed)
  run 2 $B --save-weights "$W/ref.safetensors" >"$W/ref.out" 2>&1 || { cat "$W/ref.out"; fail "reference run"; }
  run 2 $B --checkpoint-dir "$W/ck" --max-steps 14 >"$W/1.out" 2>&1 || { cat "$W/1.out"; fail "first part"; }
  cp "$W/ck/checkpoint.safetensors" "$W/before"
  half=$(( $(wc -c <"$W/before") / 1024 ))  # blocks of 512 bytes: half the checkpoint
  run_limited 2 $half default $B --checkpoint-dir "$W/ck" --resume >"$W/2.out" 2>&1; rc=$?
  [ $rc -ne 0 ] || { cat "$W/2.out"; fail "the limited run exited 0"; }
  grep -q "signal 25" "$W/2.out" || { cat "$W/2.out"; fail "rank 0 was not killed by SIGXFSZ"; }
  ls "$W/ck" | grep -q '\.tmp\.' || fail "no half-written temporary: the kill did not happen while writing"
  cmp "$W/before" "$W/ck/checkpoint.safetensors" || fail "the previous checkpoint changed"
  echo "# killed mid-write at $((half * 512)) bytes; the previous checkpoint is intact"
  run 2 $B --checkpoint-dir "$W/ck" --resume --save-weights "$W/res.safetensors" >"$W/3.out" 2>&1 || { cat "$W/3.out"; fail "resume"; }
  grep -q "removed .*checkpoint.safetensors.tmp" "$W/3.out" || { cat "$W/3.out"; fail "the dead run's temporary was not removed"; }
  only_checkpoint "$W/ck"
  "$ST_COMPARE" "$W/res.safetensors" "$W/ref.safetensors" 0 || fail "resumed run differs from the uninterrupted one"
  echo "PASS checkpoint_killed" ;;
disk_full)
  run 2 $B --checkpoint-dir "$W/ck" --max-steps 14 >"$W/1.out" 2>&1 || { cat "$W/1.out"; fail "first part"; }
  cp "$W/ck/checkpoint.safetensors" "$W/before"
  half=$(( $(wc -c <"$W/before") / 1024 ))
  run_limited 2 $half ignore $B --checkpoint-dir "$W/ck" --resume >"$W/2.out" 2>&1; rc=$?
  [ $rc -ne 0 ] || { cat "$W/2.out"; fail "checkpoint: exit 0"; }
  grep -q "checkpoint.safetensors: write failed: File too large" "$W/2.out" || { cat "$W/2.out"; fail "checkpoint: no message naming the file"; }
  cmp "$W/before" "$W/ck/checkpoint.safetensors" || fail "checkpoint: the previous one changed"
  only_checkpoint "$W/ck"
  echo "# checkpoint: $(grep 'write failed' "$W/2.out")"
  # --trace: an earlier trace in place; the new one is larger than 1 KiB
  echo '{"traceEvents": []}' >"$W/t.json"; cp "$W/t.json" "$W/t.before"
  run_limited 2 2 ignore $B --max-steps 4 --trace "$W/t.json" >"$W/3.out" 2>&1; rc=$?
  [ $rc -ne 0 ] || { cat "$W/3.out"; fail "trace: exit 0"; }
  grep -q -- "--trace .*t.json" "$W/3.out" || { cat "$W/3.out"; fail "trace: no message naming the file"; }
  cmp "$W/t.before" "$W/t.json" || fail "trace: the previous file changed"
  ls "$W" | grep -q 't.json.' && fail "trace: temporary or part files left: $(ls "$W" | grep 't.json.')"
  echo "# trace: $(grep -- '--trace' "$W/3.out")"
  # --log: rows appended each epoch until the 1 KiB limit; the file keeps whole rows only
  run_limited 2 2 ignore $SYN --synthetic-examples 64 --model smallcnn --batch 16 --eval-every 0 --epochs 40 --log "$W/log.csv" >"$W/4.out" 2>&1; rc=$?
  [ $rc -ne 0 ] || { cat "$W/4.out"; fail "log: exit 0"; }
  grep -q -- "--log .*log.csv: write failed: File too large" "$W/4.out" || { cat "$W/4.out"; fail "log: no message naming the file"; }
  rows=$(wc -l <"$W/log.csv")
  [ "$rows" -ge 2 ] || fail "log: not even one row kept"
  awk -F, 'NF != 11 { exit 1 }' "$W/log.csv" || fail "log: a partial row was left"
  [ "$(tail -c 1 "$W/log.csv" | od -An -c | tr -d ' ')" = '\n' ] || fail "log: does not end with a whole line"
  echo "# log: $((rows - 1)) whole rows kept, $(wc -c <"$W/log.csv") bytes"
  echo "PASS disk_full" ;;
sigterm_saves)
  # mpirun forwards SIGTERM and gives the ranks odls_base_sigkill_timeout to save before its
  # SIGKILL: Open MPI's default (1 s), which the test environment sets to 0 for refusals
  OMPI_MCA_odls_base_sigkill_timeout=1 "$MPIRUN" -np 2 --oversubscribe "$DTRAIN" $DT $SYN --synthetic-examples 480 --model resnet8 --batch 16 --epochs 1000 --eval-every 0 --checkpoint-dir "$W/ck" >"$W/out" 2>&1 &
  mp=$!
  i=0; while [ ! -e "$W/ck/checkpoint.safetensors" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
  [ -e "$W/ck/checkpoint.safetensors" ] || { kill -9 $mp; cat "$W/out"; fail "no checkpoint after 60 s"; }
  sleep 0.5; kill -TERM $mp
  i=0; while kill -0 $mp 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
  if kill -0 $mp 2>/dev/null; then kill -9 $mp; cat "$W/out"; fail "still running 30 s after SIGTERM"; fi
  wait $mp; rc=$?
  [ $rc -ne 0 ] || fail "interrupted run exited 0"
  step=$(sed -n 's/.*interrupted at step \([0-9]*\); saved that step in .*/\1/p' "$W/out")
  [ -n "$step" ] || { cat "$W/out"; fail "no 'interrupted at step N; saved that step' line"; }
  only_checkpoint "$W/ck"
  run 2 $SYN --synthetic-examples 480 --model resnet8 --batch 16 --epochs 1000 --eval-every 0 --checkpoint-dir "$W/ck" --resume --max-steps 1 >"$W/out2" 2>&1 || { cat "$W/out" "$W/out2"; fail "not resumable"; }
  got=$(sed -n 's/.*resuming from .* step \([0-9]*\)$/\1/p' "$W/out2")
  [ "$got" = "$step" ] || { cat "$W/out2"; fail "resumed at step '$got', stopped at $step"; }
  echo "PASS sigterm_saves: stopped and saved at step $step, resumed there (exit $rc)" ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
