#!/bin/sh
# zero_cases.sh CASE — dtrain --shard gradients|parameters (ZeRO stages 2 and 3,
# nn/train_zero.c) under mpirun against plain data parallelism (tests/mpi/CMakeLists.txt).
# Environment: DTRAIN, ST_COMPARE (tests/mpi/st_compare.c), MPIRUN, PMPI_COUNT (the PMPI byte
# counter, tests/mpi/pmpi_count.c). Fresh random seeds (printed), synthetic data, resnet8.
#   bit_identical   SGD with momentum: the weights after 4 steps are the plain run's bits at
#                   np 2, 3 (ring) and 4 (stage 2 rhd, stage 3 ring), where the sums are the
#                   same: stage 2 against the plain run with the same --fusion buckets,
#                   stage 3 against a bucket per layer (--fusion none); --shard optimizer too
#   lars_matches    LARS: |w| and |g| summed from the pieces in float64: within 1e-6
#   memory_formulas the bytes per rank dtrain reports (--json mem_*) against ZeRO's closed
#                   forms (Rajbhandari et al. 2020 §5, fp32 here: 4 bytes an element, Ψ
#                   trainable, S running statistics, P ranks, U units): plain 4(Ψ+S), 4Ψ,
#                   4Ψ; stage 1 optimizer 4Ψ/P; stage 2 + gradients 4Ψ/P; stage 3 +
#                   parameters 4Ψ/P + 4S; within the units' padding (4U); at the peak of
#                   a step at most two units' buffers beyond that (the current and the next)
#   comm_volume     the bytes sent per step, summed over the ranks (PMPI counter; the
#                   difference of a 3-step and a 1-step run), exactly the ring's closed form:
#                   plain and stage 2 8(P-1)(Ψ+S), stage 3 4(P-1)(3Ψ+2S) — for the
#                   parameters, 1.5x the allreduce's
#   adam_bit_identical  gpt2-tiny on a random text, AdamW and LAMB (clipped to norm 0.5), 3
#                   steps at np 2 and 3: every stage's weights are the plain run's bits
#                   (stage 1 against one bucket, stage 2 the same --fusion, stage 3 a bucket
#                   per layer): each rank keeps the moments of its pieces, and clipping's
#                   and LAMB's norms come from per-segment sums that the plain run adds in
#                   the same order (nn/optim_norms.c); the check can tell (no clipping, and
#                   another lr, give other weights)
#   adam_memory_formulas  the optimizer state per rank of AdamW and LAMB at each stage (np 3):
#                   ZeRO's K Psi / P with K = 8 in fp32 for AdamW (two moments; the fp32
#                   parameters are the master copy, where mixed precision has K = 12) and
#                   K = 12 for LAMB (its direction r as well); the gradients 4 Psi / P from
#                   stage 2 on, the parameters 4 Psi / P at stage 3; within the padding
#   adam_resume     checkpoints with the moments (gpt2-tiny, np 2): LAMB at stage 3, 2 steps,
#                   then 2 more resumed, at stage 3 and also plain (the file is the whole
#                   state, gathered), and AdamW plain, resumed at stage 1: the weights of 4
#                   uninterrupted steps, bit for bit (the check can tell: the resumed run
#                   moved the weights from the checkpoint's); a checkpoint of another
#                   optimizer, or of LAMB without its second moments, is refused with exit
#                   2 and left as it was
#   accumulate      --accumulate 2 at stages 2 and 3 (each micro-batch reduce-scattered, the
#                   pieces summed) against the plain run's accumulation (summed whole, one
#                   allreduce) on the same buckets, np 3: within 1e-3 (the sums' order
#                   differs: ranks then micro-batches); the check can tell (no accumulation
#                   gives other weights)
#   half_fp16, half_bf16  mixed precision (--precision fp16 with dynamic loss scaling, bf16)
#                   at stages 2 and 3, SGD with momentum and AdamW, np 2 and 3: each rank
#                   steps the fp32 master of its pieces, rounds them to half and gathers
#                   them; the weights (the fp32 master, gathered at the end) are the plain
#                   mixed-precision run's bits on the same buckets; bf16 adds stage 1 with
#                   AdamW; the check can tell (the fp32 run's weights differ)
#   half_memory     bf16, np 3: the parameters per rank with the half copy counted
#                   (mem_half_copy_bytes H, the fp32-stored rounded copy and, where the
#                   convolutions run on half storage, its 2 bytes an element): plain and
#                   stage 1 4(Ψ+S) + H, stage 2 4Ψ/P + H, stage 3 4Ψ/P + 4S and H = 0
#                   (each layer's copy gathered, at the peak)
#   bad_input       one rank, an unknown stage, --fusion auto: exit 2, a message naming the
#                   option, nothing written
set -u
CASE=$1
W=$(mktemp -d "${TMPDIR:-/tmp}/zero_${CASE}_XXXXXX")
trap 'rm -rf "$W"' EXIT
SEED=${DT_TEST_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "# seed $SEED (replay with DT_TEST_SEED=$SEED)"
A="--data synthetic --image-size 16 --classes 4 --synthetic-examples 240 --model resnet8 --batch 12 --epochs 1 --max-steps 4 --eval-every 0 --lr 0.2"
run() { np=$1; shift; "$MPIRUN" -np "$np" --oversubscribe "$DTRAIN" --quiet --threads 1 --seed "$SEED" $A "$@"; }
fail() { echo "FAIL: $*"; exit 1; }
json() { grep '^{' "$1" | tail -1 | sed -n "s/.*\"$2\": \"*\([^,\"}]*\).*/\1/p"; }
# save NAME NP ARGS...: a run whose weights go to $W/NAME.st, its output to $W/NAME.log
save() {
  name=$1 np=$2; shift 2
  run "$np" "$@" --json --save-weights "$W/$name.st" > "$W/$name.log" 2>&1 || { cat "$W/$name.log"; fail "$name: the run failed"; }
  grep -q '"replicas_identical": true' "$W/$name.log" || fail "$name: the replicas differ"
}
same() { "$ST_COMPARE" "$W/$1.st" "$W/$2.st" "$3" ${4:-} || fail "$1 is not $2 (tolerance $3 ${4:-})"; }

case "$CASE" in
bit_identical)
  for np in 2 3 4; do
    a2=ring; [ "$np" = 4 ] && a2=rhd
    save p$np.bucket $np --algo $a2 --fusion 100KB
    save s2.$np $np --algo $a2 --fusion 100KB --shard gradients
    same s2.$np p$np.bucket 0
    save p$np.layer $np --algo ring --fusion none
    save s3.$np $np --algo ring --shard parameters
    same s3.$np p$np.layer 0
  done
  save p2.one 2 --algo ring
  save s1.2 2 --algo ring --shard optimizer
  same s1.2 p2.one 0
  # the check can tell: another learning rate moves the weights
  save other 2 --algo ring --fusion none --lr 0.21
  if "$ST_COMPARE" "$W/other.st" "$W/p2.layer.st" 0 > /dev/null; then fail "lr 0.21 gives lr 0.2's weights: the comparison cannot tell"; fi
  echo "PASS bit_identical" ;;
lars_matches)
  save lp 3 --algo ring --fusion none --optimizer lars
  save l2 3 --algo ring --fusion none --optimizer lars --shard gradients
  save l3 3 --algo ring --optimizer lars --shard parameters
  same l2 lp 1e-6
  same l3 lp 1e-6
  echo "PASS lars_matches" ;;
memory_formulas)
  within() {  # within WHAT GOT WANT SLACK
    d=$(( $2 - $3 )); [ $d -lt 0 ] && d=$(( -d ))
    [ $d -le "$4" ] || fail "np $np $st: $1 $2 B, the closed form $3 B (slack $4 B)"
  }
  for np in 2 4; do
    for st in none optimizer gradients parameters; do
      flag="--shard $st"; [ $st = none ] && flag=""
      run "$np" --algo ring --fusion 50KB --json $flag > "$W/m.$st" 2>&1 || { cat "$W/m.$st"; fail "np $np $st"; }
      grep -q "^dtrain: memory per rank" "$W/m.$st" || fail "np $np $st: no memory line"
      psi=$(json "$W/m.$st" trainable_elements); S=$(json "$W/m.$st" buffer_elements)
      U=$(json "$W/m.$st" shard_units); [ "$U" = 0 ] && U=1
      pb=$(json "$W/m.$st" mem_params_bytes); gb=$(json "$W/m.$st" mem_grads_bytes)
      ob=$(json "$W/m.$st" mem_optim_bytes); ab=$(json "$W/m.$st" mem_activation_bytes)
      pk=$(json "$W/m.$st" mem_params_peak_bytes); gk=$(json "$W/m.$st" mem_grads_peak_bytes)
      um=$(json "$W/m.$st" mem_unit_max_bytes)
      [ -n "$psi" ] && [ -n "$ob" ] && [ -n "$gk" ] || fail "np $np $st: no mem_* in --json"
      full=$(( 4 * psi )); part=$(( 4 * psi / np )); slack=$(( 4 * (U + 1) ))
      case $st in
      none)       within params "$pb" $(( full + 4 * S )) 0; within grads "$gb" $full 0
                  within optim "$ob" $full 0; act=$ab ;;
      optimizer)  within params "$pb" $(( full + 4 * S )) 0; within grads "$gb" $full 0
                  within optim "$ob" $part 4 ;;
      gradients)  within params "$pb" $(( full + 4 * S )) 0; within grads "$gb" $part $slack
                  within optim "$ob" $part $slack
                  [ $(( gk - gb )) -le $(( 2 * um )) ] || fail "np $np: stage 2 held $(( gk - gb )) B of gradient buckets at once, more than two of $um B" ;;
      parameters) within params "$pb" $(( part + 4 * S )) $slack; within grads "$gb" $part $slack
                  within optim "$ob" $part $slack
                  [ $(( pk - pb )) -le $(( 2 * um )) ] || fail "np $np: stage 3 held $(( pk - pb )) B of gathered parameters at once, more than two layers of $um B"
                  [ $(( gk - gb )) -le $(( 2 * um )) ] || fail "np $np: stage 3 held $(( gk - gb )) B of gradient buckets at once, more than two of $um B" ;;
      esac
      [ "$ab" = "$act" ] || fail "np $np $st: activations $ab B, plain $act B"
      echo "np $np $st: parameters $pb B (peak $pk), gradients $gb B (peak $gk), optimizer $ob B; Ψ = $psi, U = $U"
    done
  done
  echo "PASS memory_formulas" ;;
comm_volume)
  [ -f "${PMPI_COUNT##*:}" ] || { echo "SKIPPED: no PMPI counter library"; exit 77; }
  np=3
  bytes() {  # bytes STEPS ARGS...: what the ranks sent in a run of STEPS steps
    s=$1; shift
    "$MPIRUN" -np $np --oversubscribe -x LD_PRELOAD="$PMPI_COUNT" "$DTRAIN" --quiet --threads 1 --seed "$SEED" $A --max-steps "$s" --algo ring --json "$@" > "$W/c.log" 2>&1 || { cat "$W/c.log"; fail "run $*"; }
    sed -n 's/^pmpi_count: \([0-9]*\) bytes sent.*/\1/p' "$W/c.log"
  }
  for st in none gradients parameters; do
    flag="--shard $st"; [ $st = none ] && flag=""
    b1=$(bytes 1 --fusion none $flag); b3=$(bytes 3 --fusion none $flag)
    [ -n "$b1" ] && [ -n "$b3" ] || fail "$st: the PMPI counter printed nothing"
    psi=$(json "$W/c.log" trainable_elements); S=$(json "$W/c.log" buffer_elements)
    per=$(( (b3 - b1) / 2 ))
    case $st in
    parameters) want=$(( 4 * (np - 1) * (3 * psi + 2 * S) )) ;;
    *)          want=$(( 8 * (np - 1) * (psi + S) )) ;;
    esac
    [ "$per" = "$want" ] || fail "$st: $per bytes per step, the closed form $want"
    eval "v_$st=$per"
    echo "$st: $per bytes per step over $np ranks (closed form $want)"
  done
  # the parameters' share: stage 3 moves 3(P-1)Ψ elements, the allreduce 2(P-1)Ψ
  g3=$(( v_parameters - 8 * (np - 1) * S )); g0=$(( v_none - 8 * (np - 1) * S ))
  [ $(( 2 * g3 )) = $(( 3 * g0 )) ] || fail "stage 3 moves $g3 B of model state, plain $g0 B: not 1.5x"
  echo "stage 3 / allreduce (model state): $g3 / $g0 = 1.5"
  echo "PASS comm_volume" ;;
adam_resume)
  /usr/bin/python3 -c "import random,sys; r=random.Random($SEED); w=[''.join(r.choice('etaoinshr') for _ in range(r.randint(1,7))) for _ in range(40)]
sys.stdout.write(' '.join(r.choice(w) for _ in range(3000)))" > "$W/text" || fail "no corpus"
  A="--model gpt2-tiny --data text:$W/text --seq-len 32 --batch 12 --epochs 1 --eval-every 0 --clip 0.5 --warmup 0 --algo ring"
  # resume OPT NAME FIRST SECOND: 4 steps uninterrupted with FIRST, against 2 with FIRST, a
  # checkpoint, 2 resumed with SECOND
  resume() {
    opt=$1 nm=$2 first=$3 second=$4
    save $nm.u 2 --optimizer $opt $first --max-steps 4
    run 2 --optimizer $opt $first --max-steps 2 --checkpoint-dir "$W/$nm" > "$W/$nm.log" 2>&1 || { cat "$W/$nm.log"; fail "$nm: the first half"; }
    cp "$W/$nm/checkpoint.safetensors" "$W/$nm.half.st"
    save $nm.r 2 --optimizer $opt $second --max-steps 2 --checkpoint-dir "$W/$nm" --resume
    same $nm.r $nm.u 0
    if "$ST_COMPARE" "$W/$nm.r.st" "$W/$nm.half.st" 0 > /dev/null 2>&1; then fail "$nm: the resumed run did not move the weights"; fi
    echo "$opt: 2 steps ($first) + 2 resumed ($second) = 4 uninterrupted, bit for bit"
  }
  resume lamb lamb3 "--shard parameters" "--shard parameters"
  # the same checkpoint resumed by a plain run (a bucket per layer: stage 3's sums)
  mkdir "$W/lamb3p" && cp "$W/lamb3.half.st" "$W/lamb3p/checkpoint.safetensors"
  save lamb3p.r 2 --optimizer lamb --fusion none --max-steps 2 --checkpoint-dir "$W/lamb3p" --resume
  same lamb3p.r lamb3.u 0
  echo "lamb: stage 3's checkpoint resumed plain = 4 uninterrupted steps, bit for bit"
  resume adamw adamw0 "" "--shard optimizer"
  # refused: another optimizer; LAMB's checkpoint without its second moments (the tensors
  # dropped from the header: safetensors allows the holes, the data's CRC stays valid)
  refused() {  # refused NAME PATTERN ARGS...
    nm=$1 pat=$2; shift 2
    cp "$W/$nm/checkpoint.safetensors" "$W/before.st"
    run 2 --max-steps 2 --checkpoint-dir "$W/$nm" --resume "$@" > "$W/o" 2>&1; rc=$?
    [ $rc -eq 2 ] && grep -q -- "$pat" "$W/o" || { cat "$W/o"; fail "$nm $*: exit $rc, expected 2 and '$pat'"; }
    cmp -s "$W/before.st" "$W/$nm/checkpoint.safetensors" || fail "$nm: a refused resume changed the checkpoint"
  }
  refused lamb3 "holds the state of --optimizer lamb, this run uses adamw" --optimizer adamw --shard parameters
  refused adamw0 "holds the state of --optimizer adamw, this run uses sgd" --optimizer sgd
  /usr/bin/python3 - "$W/lamb3/checkpoint.safetensors" <<'PY' || fail "could not edit the checkpoint"
import json, struct, sys
p = sys.argv[1]; b = open(p, 'rb').read(); n = struct.unpack('<Q', b[:8])[0]
h = json.loads(b[8:8 + n]); h = {k: v for k, v in h.items() if not k.startswith('optimizer.second.')}
j = json.dumps(h).encode(); j += b' ' * (-len(j) % 8)
open(p, 'wb').write(struct.pack('<Q', len(j)) + j + b[8 + n:])
PY
  refused lamb3 "optimizer.second.* is missing" --optimizer lamb --shard parameters
  echo "PASS adam_resume" ;;
adam_bit_identical|adam_memory_formulas)
  /usr/bin/python3 -c "import random,sys; r=random.Random($SEED); w=[''.join(r.choice('etaoinshr') for _ in range(r.randint(1,7))) for _ in range(40)]
sys.stdout.write(' '.join(r.choice(w) for _ in range(3000)))" > "$W/text" || fail "no corpus"
  A="--model gpt2-tiny --data text:$W/text --seq-len 32 --batch 12 --epochs 1 --max-steps 3 --eval-every 0 --clip 0.5 --warmup 0"
  if [ "$CASE" = adam_memory_formulas ]; then
    np=3
    for opt in adamw lamb; do
      K=8; [ $opt = lamb ] && K=12
      for st in optimizer gradients parameters; do
        run $np --optimizer $opt --algo ring --shard $st --json > "$W/m.log" 2>&1 || { cat "$W/m.log"; fail "$opt $st"; }
        psi=$(json "$W/m.log" trainable_elements); U=$(json "$W/m.log" shard_units); [ "$U" = 0 ] && U=1
        ob=$(json "$W/m.log" mem_optim_bytes); gb=$(json "$W/m.log" mem_grads_bytes); pb=$(json "$W/m.log" mem_params_bytes)
        [ -n "$psi" ] && [ -n "$ob" ] || fail "$opt $st: no mem_* in --json"
        want=$(( K * psi / np )); d=$(( ob - want )); [ $d -lt 0 ] && d=$(( -d ))
        [ $d -le $(( K * (U + 1) )) ] || fail "$opt $st: optimizer state $ob B per rank, ZeRO's K Psi / P = $K x $psi / $np = $want B"
        g=$(( 4 * psi )); [ $st != optimizer ] && g=$(( 4 * psi / np ))
        p=$(( 4 * psi )); [ $st = parameters ] && p=$(( 4 * psi / np ))
        d=$(( gb - g )); [ $d -lt 0 ] && d=$(( -d )); [ $d -le $(( 4 * (U + 1) )) ] || fail "$opt $st: gradients $gb B, the closed form $g B"
        d=$(( pb - p )); [ $d -lt 0 ] && d=$(( -d )); [ $d -le $(( 4 * (U + 1) )) ] || fail "$opt $st: parameters $pb B, the closed form $p B"
        echo "$opt $st np $np: optimizer state $ob B = $K Psi / P ($want B), gradients $gb B, parameters $pb B; Psi = $psi, U = $U"
      done
    done
    echo "PASS adam_memory_formulas"; exit 0
  fi
  for opt in adamw lamb; do
    for np in 2 3; do
      save $opt.p1.$np $np --optimizer $opt --algo ring
      save $opt.s1.$np $np --optimizer $opt --algo ring --shard optimizer
      same $opt.s1.$np $opt.p1.$np 0
      save $opt.p2.$np $np --optimizer $opt --algo ring --fusion 20KB
      save $opt.s2.$np $np --optimizer $opt --algo ring --fusion 20KB --shard gradients
      same $opt.s2.$np $opt.p2.$np 0
      save $opt.p3.$np $np --optimizer $opt --algo ring --fusion none
      save $opt.s3.$np $np --optimizer $opt --algo ring --shard parameters
      same $opt.s3.$np $opt.p3.$np 0
      echo "$opt np $np: stages 1, 2, 3 give the plain run's bits"
    done
  done
  # the check can tell: without clipping, or with another lr, the weights differ
  save noclip 3 --optimizer lamb --algo ring --shard parameters --clip off
  if "$ST_COMPARE" "$W/noclip.st" "$W/lamb.s3.3.st" 0 > /dev/null; then fail "--clip off gives --clip 0.5's weights: nothing was clipped"; fi
  save otherlr 3 --optimizer adamw --algo ring --shard parameters --lr 0.0031
  if "$ST_COMPARE" "$W/otherlr.st" "$W/adamw.s3.3.st" 0 > /dev/null; then fail "lr 0.0031 gives lr 0.003's weights: the comparison cannot tell"; fi
  echo "PASS adam_bit_identical" ;;
accumulate)
  # the sharded stages reduce each micro-batch and add the reduced pieces, the plain step
  # adds the micro-batches and reduces once: the same sums in another order, so the model's
  # relative L2 difference (--global), not each tensor's, whose near-zero batch-norm biases
  # (|b| ~ 1e-7: seed 2472945482, layer3.0.bn1.bias) differ by 2 % of themselves in rounding.
  # Typically 1-2e-8; a rounding that moves a ReLU's input across 0 changes that gradient by
  # its whole size, and seed 1830764476 gave 2.0e-5. The bound, 1e-3, is 100 times below
  # what a lost micro-batch gives (no accumulation: 0.10, checked below).
  save ap2 3 --algo ring --fusion 100KB --accumulate 2
  save as2 3 --algo ring --fusion 100KB --accumulate 2 --shard gradients
  same as2 ap2 1e-3 --global
  save ap3 3 --algo ring --fusion none --accumulate 2
  save as3 3 --algo ring --accumulate 2 --shard parameters
  same as3 ap3 1e-3 --global
  save n3 3 --algo ring --shard parameters
  "$ST_COMPARE" "$W/n3.st" "$W/as3.st" 1e-3 --global | sed "s/^/no accumulation against it: /"
  if "$ST_COMPARE" "$W/n3.st" "$W/as3.st" 1e-3 --global > /dev/null; then fail "--accumulate 2 gives the weights of no accumulation: the check cannot tell"; fi
  echo "PASS accumulate" ;;
half_fp16|half_bf16)
  prec=${CASE#half_}
  for opt in sgd adamw; do
    for np in 2 3; do
      H="--precision $prec --optimizer $opt --algo ring"
      [ $opt = adamw ] && H="$H --lr 0.01"
      save $opt.p2.$np $np $H --fusion 100KB
      save $opt.s2.$np $np $H --fusion 100KB --shard gradients
      same $opt.s2.$np $opt.p2.$np 0
      save $opt.p3.$np $np $H --fusion none
      save $opt.s3.$np $np $H --shard parameters
      same $opt.s3.$np $opt.p3.$np 0
      if [ $prec = bf16 ] && [ $opt = adamw ]; then
        save $opt.p1.$np $np $H
        save $opt.s1.$np $np $H --shard optimizer
        same $opt.s1.$np $opt.p1.$np 0
      fi
      echo "$prec $opt np $np: the sharded stages give the plain mixed-precision run's bits"
    done
  done
  # the check can tell: the fp32 run's weights are not the half run's
  save f32 3 --optimizer sgd --algo ring --shard parameters
  if "$ST_COMPARE" "$W/f32.st" "$W/sgd.s3.3.st" 0 > /dev/null; then fail "fp32 gives $prec's weights: the comparison cannot tell"; fi
  echo "PASS $CASE" ;;
half_memory)
  np=3
  within() {  # within WHAT GOT WANT SLACK
    d=$(( $2 - $3 )); [ $d -lt 0 ] && d=$(( -d ))
    [ $d -le "$4" ] || fail "bf16 np $np $st: $1 $2 B, the closed form $3 B (slack $4 B)"
  }
  for st in none optimizer gradients parameters; do
    flag="--shard $st"; [ $st = none ] && flag=""
    run $np --algo ring --fusion 50KB --precision bf16 --json $flag > "$W/m.$st" 2>&1 || { cat "$W/m.$st"; fail "bf16 $st"; }
    psi=$(json "$W/m.$st" trainable_elements); S=$(json "$W/m.$st" buffer_elements)
    U=$(json "$W/m.$st" shard_units); [ "$U" = 0 ] && U=1
    pb=$(json "$W/m.$st" mem_params_bytes); pk=$(json "$W/m.$st" mem_params_peak_bytes)
    hb=$(json "$W/m.$st" mem_half_copy_bytes); um=$(json "$W/m.$st" mem_unit_max_bytes)
    [ -n "$psi" ] && [ -n "$hb" ] || fail "bf16 $st: no mem_half_copy_bytes in --json"
    grep -q "^dtrain: memory per rank.*of it the bf16 copy" "$W/m.$st" || fail "bf16 $st: the memory line does not give the half copy"
    n=$(( psi + S )); part=$(( 4 * psi / np )); slack=$(( 4 * (U + 1) ))
    case $st in
    parameters) within half "$hb" 0 0; within params "$pb" $(( part + 4 * S )) $slack
                # at the peak: two layers' gathered copies, fp32-stored and their half bits
                [ $(( pk - pb )) -le $(( 3 * um )) ] || fail "stage 3 held $(( pk - pb )) B of gathered parameters, more than two layers of $um B (+ their half bits)"
                [ $(( pk - pb )) -gt 0 ] || fail "stage 3's peak holds no gathered layer" ;;
    *)          [ "$hb" = $(( 4 * n )) ] || [ "$hb" = $(( 6 * n )) ] || fail "bf16 $st: the half copy $hb B, neither 4(Ψ+S) = $(( 4 * n )) nor 6(Ψ+S)"
                if [ $st = gradients ]; then within params "$pb" $(( part + hb )) $slack
                else within params "$pb" $(( 4 * n + hb )) 0; fi ;;
    esac
    echo "bf16 np $np $st: parameters $pb B (peak $pk), of it the half copy $hb B; Ψ = $psi, S = $S"
  done
  echo "PASS half_memory" ;;
bad_input)
  expect() {  # expect NP PATTERN ARGS...: exit 2 with PATTERN on stderr/stdout, nothing written
    np=$1 pat=$2; shift 2
    run "$np" "$@" --save-weights "$W/x.st" > "$W/o" 2>&1; rc=$?
    [ $rc -eq 2 ] && grep -q -- "$pat" "$W/o" || { cat "$W/o"; fail "$*: exit $rc, expected 2 and '$pat'"; }
    [ ! -e "$W/x.st" ] || fail "$*: a refused run wrote its weights"
  }
  expect 1 "--shard gradients needs 2 or more ranks" --shard gradients
  expect 1 "--shard parameters needs 2 or more ranks" --shard parameters
  expect 2 "option --shard: .everything. is not optimizer, gradients or parameters" --shard everything
  expect 1 "--shard gradients needs 2 or more ranks" --shard gradients --precision bf16
  expect 2 "--shard gradients and --fusion segments/auto" --shard gradients --fusion auto
  echo "PASS bad_input" ;;
*) echo "unknown case $CASE"; exit 2 ;;
esac
