#!/bin/sh
# dtsim_jobs.sh CASE — independent simulations run in parallel and on a cluster
# (sim/dtsim_jobs.c, sim/dtsim_slurm.c). DTSIM = the program; PY = a Python 3.
#   sweep_j  `dtsim sweep -j 2` against -j 1: the same JSON and CSV bytes, the same table
#            (but its wall-time column), a progress line per point
#   plan_j   `dtsim plan -j 2 --confirm 3` against -j 1: the same table, CSV and JSON bytes
#   slurm    `dtsim sweep --slurm DIR`: a job array of 3 tasks; each task run here as Slurm
#            would (SLURM_ARRAY_TASK_ID=K sh DIR/dtsim.sbatch); --gather DIR prints the bytes
#            of the one-machine run; a missing slice (exit 1) and another command's results
#            (exit 2) are named; `dtsim plan --slurm` through its srun script with a stand-in
#            srun (SLURM_PROCID per task) gathers to the one-machine plan; sbatch --submit
#            only where Slurm is installed (else SKIPPED, said)
set -u
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/dtsim_jobs_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
same() { cmp "$1" "$2" >/dev/null || { diff "$1" "$2" | head -20; fail "$3: $1 and $2 differ"; }; echo "ok: $3"; }
# the text report without its last column (the real seconds each simulation took)
nowall() { sed -E 's/ +[0-9.]+$//' "$1" >"$1.nowall"; }
SWEEP="sweep --model resnet20 --sweep-gpus 8,16,32 --sweep-algos ring,hier --iters 1"
PLAN="plan --price v100=2,a100=3.5 --gpus 8,16,32 --algos ring,hier --per-gpu-batch 64 --epochs 1 --fail-rate 1e-4 --confirm 3"

case "$CASE" in
sweep_j)
  for j in 1 2; do
    "$DTSIM" $SWEEP -j $j --csv "$W/s$j.csv" >"$W/s$j.txt" 2>"$W/s$j.err" || { cat "$W/s$j.err"; fail "sweep -j $j"; }
    "$DTSIM" $SWEEP -j $j --json --quiet >"$W/s$j.json" || fail "sweep -j $j --json"
    nowall "$W/s$j.txt"
  done
  same "$W/s1.json" "$W/s2.json" "-j 2's JSON is -j 1's"
  same "$W/s1.csv" "$W/s2.csv" "-j 2's CSV is -j 1's"
  same "$W/s1.txt.nowall" "$W/s2.txt.nowall" "-j 2's table is -j 1's (but the wall seconds)"
  [ "$(grep -c '^\[dtsim\] sweep [1-6]/6' "$W/s2.err")" -eq 6 ] || fail "a progress line per point"
  [ "$(grep -c '^ *[0-9]* *[0-9]* *\(ring\|hier\) ' "$W/s2.txt")" -eq 6 ] || fail "6 rows"
  out=$("$DTSIM" $SWEEP -j 0 2>&1); [ $? -eq 2 ] && echo "$out" | grep -q "option -j" || fail "-j 0: $out"
  out=$("$DTSIM" -j 2 --gpus 8 2>&1); [ $? -eq 2 ] && echo "$out" | grep -q "dtsim sweep" || fail "-j on one run: $out"
  echo "PASS sweep_j" ;;
plan_j)
  for j in 1 2; do
    "$DTSIM" $PLAN -j $j --csv "$W/p$j.csv" >"$W/p$j.txt" 2>"$W/p$j.err" || { cat "$W/p$j.err"; fail "plan -j $j"; }
    "$DTSIM" $PLAN -j $j --json --quiet >"$W/p$j.json" || fail "plan -j $j --json"
  done
  cat "$W/p2.err"
  same "$W/p1.txt" "$W/p2.txt" "plan -j 2's table is -j 1's"
  same "$W/p1.csv" "$W/p2.csv" "plan -j 2's CSV is -j 1's"
  same "$W/p1.json" "$W/p2.json" "plan -j 2's JSON is -j 1's"
  [ "$(grep -c 'simulated [0-9.]* h' "$W/p2.txt")" -ge 1 ] || fail "an answer"
  [ "$(grep -c '^\[dtsim plan\] [1-3]/3 simulated' "$W/p2.err")" -eq 3 ] || fail "a progress line per confirmation done"
  echo "PASS plan_j" ;;
slurm)
  cd "$W" || exit 1
  "$DTSIM" $SWEEP --csv one.csv --json --quiet >one.json || fail "the one-machine sweep"
  "$DTSIM" $SWEEP --csv all.csv --json --slurm jobs --slurm-tasks 3 -j 2 >slurm.out || fail "--slurm"
  cat slurm.out
  grep -q '^#SBATCH --array=0-2$' jobs/dtsim.sbatch || fail "no 3-task array"
  grep -q -- "--slice" jobs/dtsim.sbatch && ! grep -q -- "'-j'" jobs/dtsim.sbatch || fail "the tasks' command"
  # Slurm's part, here: each array task with its SLURM_ARRAY_TASK_ID (one missing first)
  for k in 0 1; do SLURM_ARRAY_TASK_ID=$k sh jobs/dtsim.sbatch 2>>tasks.err || fail "task $k"; done
  out=$("$DTSIM" $SWEEP --csv all.csv --json --gather jobs 2>&1 >/dev/null); rc=$?
  [ $rc -eq 1 ] && echo "$out" | grep -q "2 of 6 results missing" || { echo "$out"; fail "a missing slice: exit $rc"; }
  [ -e all.csv ] && fail "a CSV written with results missing"
  echo "ok: a missing slice -> $out"
  SLURM_ARRAY_TASK_ID=2 sh jobs/dtsim.sbatch 2>>tasks.err || fail "task 2"
  [ "$(ls jobs/sweep-*.res | wc -l)" -eq 6 ] || fail "6 results"
  gather=$(sed -n 's/^gather: *//p' slurm.out)
  eval "$gather" >all.json 2>gather.err || { cat gather.err; fail "gather"; }
  same one.json all.json "the gathered JSON is the one-machine run's"
  same one.csv all.csv "the gathered CSV is the one-machine run's"
  out=$("$DTSIM" sweep --model resnet20 --sweep-gpus 8,16,64 --sweep-algos ring,hier --iters 1 --gather jobs 2>&1); rc=$?
  [ $rc -eq 2 ] && echo "$out" | grep -q "not run 2 of 6" || { echo "$out"; fail "another command's results: exit $rc"; }
  echo "ok: another command's results -> $(echo "$out" | head -c 160)"
  # plan's confirmations as srun tasks, with a stand-in srun (task K of N: SLURM_PROCID=K)
  mkdir bin && cat >bin/srun <<'EOF'
#!/bin/sh
n=1
while [ $# -gt 0 ]; do case $1 in --ntasks=*) n=${1#--ntasks=}; shift ;; --*) shift ;; *) break ;; esac; done
k=0; while [ $k -lt $n ]; do SLURM_PROCID=$k "$@" || exit 1; k=$((k + 1)); done
EOF
  chmod +x bin/srun
  "$DTSIM" $PLAN --csv plan1.csv >plan1.txt 2>/dev/null || fail "the one-machine plan"
  "$DTSIM" $PLAN --slurm pj --slurm-tasks 2 >pslurm.out || fail "plan --slurm"
  PATH="$W/bin:$PATH" sh pj/dtsim-srun.sh 2>>tasks.err || { cat tasks.err; fail "plan's srun tasks"; }
  [ "$(ls pj/plan-*.res | wc -l)" -eq 3 ] || fail "3 confirmations saved"
  "$DTSIM" $PLAN --csv plan2.csv --gather pj >plan2.txt 2>gather.err || { cat gather.err; fail "plan --gather"; }
  same plan1.txt plan2.txt "the gathered plan's table is the one-machine plan's"
  same plan1.csv plan2.csv "the gathered plan's CSV is the one-machine plan's"
  if command -v sbatch >/dev/null 2>&1; then
    "$DTSIM" $SWEEP --slurm sub --submit || fail "--submit"
  else
    out=$(PATH=/nonexistent "$DTSIM" $SWEEP --slurm sub --submit 2>&1); rc=$?
    [ $rc -eq 1 ] && echo "$out" | grep -q "sbatch is not on PATH" || { echo "$out"; fail "--submit without sbatch: exit $rc"; }
    echo "SKIPPED sbatch --submit: Slurm is not installed here (the array's tasks ran above as sbatch would run them; without sbatch --submit says so and exits 1)"
  fi
  echo "PASS slurm" ;;
*) fail "unknown case $CASE" ;;
esac
