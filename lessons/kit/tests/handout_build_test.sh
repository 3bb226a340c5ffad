#!/usr/bin/env bash
# handout_build_test.sh REPO BUILD — CI: a student handout ships the lessons' components
# compiled, not as source (lessons/components.txt, nn/reference/), and builds and runs on them:
#   1. none of the listed files is in the handout, and no file of it defines a function that
#      one of them defines (dt_sched_ring_rs, dt_fusion_plan, dt_optim_step_shard, ...) or
#      one of nn/kernels.h's that its "inline" lines name (dt_f32_to_f16, dt_sgd_elem, ...);
#   2. nn/reference/ holds an object of each file for each world it is compiled in;
#   3. the handout configures and builds dtsim, dtrain and libdtcoll_mpi.so (Debug: the
#      objects are Release, and a simulated figure may depend on neither);
#   4. its dtsim prints the repository's figures to the last digit, for the ring, rhd and
#      hier (the three are lessons 04-06's components), and its dtrain trains 2 ranks.
# Prints PASS/FAIL lines; exit 0 when all passed. Minutes (a build): labelled slow.
set -u
repo=${1:?usage: handout_build_test.sh REPO BUILD}
build=${2:?usage: handout_build_test.sh REPO BUILD}
fails=0
check() {  # check OK WHAT
  if [ "$1" = 1 ]; then echo "PASS $2"; else echo "FAIL $2"; fails=$((fails + 1)); fi
}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
h=$out/h
if ! DTLAB_BUILD=$build "$repo/lessons/handout" "$h" >"$out/handout.log" 2>&1; then
  cat "$out/handout.log"
  echo "FAIL lessons/handout"
  exit 1
fi
cd "$repo" || exit 2
files=$(sed -n 's/^[0-9][0-9] //p' lessons/components.txt | tr ' ' '\n' | sort -u)

# 1. the sources are not there, nor any definition of their functions
ok=1 defs=""
for f in $files; do
  [ -e "$h/$f" ] && { echo "  $f is in the handout"; ok=0; }
  # a definition: a line starting with a type, the name, "(", not ending with ";"
  defs="$defs $(grep -oE '^[a-z][a-z0-9_ *]* \**(dt_[a-z0-9_]+)\(' "$f" | grep -oE 'dt_[a-z0-9_]+\($' | tr -d '(')"
done
check "$ok" "the handout holds none of lessons/components.txt's files"
defs="$defs $(sed -n 's/^inline [0-9][0-9] //p' lessons/components.txt)"
n=$(echo "$defs" | wc -w)
# (in a .c or .cu file a line that opens no prototype ends without ";"; a header defines
# only with the body's "{" on the line: its prototypes run over lines)
found=$(cd "$h" && for d in $defs; do
  { grep -rlE --include='*.c' --include='*.cu' "^[a-z][a-z0-9_ *]* \**$d\([^;]*$" .
    grep -rlE --include='*.h' --include='*.cuh' "^[A-Za-z][A-Za-z0-9_ *]* \**$d\(.*\{" .
  } | sed "s|^\./|  $d defined in |"
done)
[ -n "$found" ] && echo "$found"
check "$([ -z "$found" ] && [ "$n" -gt 20 ] && echo 1 || echo 0)" \
      "no file of the handout defines one of their $n functions"

# 2. their objects, per world
ok=1
for f in $files; do
  rel=${f#nn/}
  for world in host smpi; do
    [ -f "$h/nn/reference/$world/${rel%.c}.o" ] || { echo "  no $world object of $f"; ok=0; }
  done
  case "$f" in nn/coll/*)
    [ -f "$h/nn/reference/dtcoll/${rel%.c}.o" ] || { echo "  no dtcoll object of $f"; ok=0; } ;;
  esac
done
for world in host smpi; do
  [ -f "$h/nn/reference/$world/kernels_ref.o" ] || { echo "  no $world kernels_ref.o"; ok=0; }
done
check "$ok" "nn/reference/ holds an object of each, for each world"

# 3. it builds
if cmake -S "$h" -B "$h/build" -DCMAKE_BUILD_TYPE=Debug >"$out/cfg.log" 2>&1 &&
   cmake --build "$h/build" -j2 --target dtsim dtrain dtcoll_mpi >"$out/build.log" 2>&1; then
  check 1 "the handout builds dtsim, dtrain and libdtcoll_mpi.so on the compiled components"
else
  tail -20 "$out/cfg.log" "$out/build.log"
  check 0 "the handout builds dtsim, dtrain and libdtcoll_mpi.so on the compiled components"
  exit 1
fi

# 4. the same figures (the last column, the simulation's own wall time, left out)
for algo in ring rhd hier; do
  a=$("$build/dtsim" --gpus 64 --algo "$algo" 2>&1 | sed -E 's/ +[0-9.]+$//')
  b=$("$h/build/dtsim" --gpus 64 --algo "$algo" 2>&1 | sed -E 's/ +[0-9.]+$//')
  [ "$a" = "$b" ] || diff <(echo "$a") <(echo "$b") | head -5
  check "$([ "$a" = "$b" ] && [ -n "$a" ] && echo 1 || echo 0)" \
        "dtsim --gpus 64 --algo $algo in the handout: the repository's figures"
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$(timeout 300 mpirun -np 2 --oversubscribe "$h/build/dtrain" --data synthetic --max-steps 8 \
      --batch 16 --quiet --log "$out/l.csv" 2>&1)
rc=$?
[ "$rc" = 0 ] || echo "$log" | tail -5
check "$([ "$rc" = 0 ] && echo 1 || echo 0)" "dtrain trains 2 ranks in the handout"
[ "$fails" = 0 ]
