#!/usr/bin/env bash
# race.sh — lesson 05's experiment: your halving-doubling allreduce (student_rhd) against
# your lesson-04 ring (lessons/04-ring-allreduce/ring.c; dtlab's ring while yours is not one
# yet: the first line says which, race_ring.c) on P simulated ranks, one allreduce per
# message size, timed by SimGrid and priced by the α-β model; prints where the winner changes.
#   lessons/05-halving-doubling-and-trees/race.sh [--ranks P] [--per-node K] [SIZES]
#     --ranks P      simulated ranks (default 1024)
#     --per-node K   ranks per host, sharing its one link (default 1: every rank has its own)
#     --coarsen K    merge K of the ring's rounds into one message (coll_coarsen.c; default
#                    ⌈P/16⌉ above 16 ranks, as dtsim does; 1: every round simulated)
#     SIZES          bytes per rank, comma-separated, K/M suffixes (default 64K,256K,1M,4M,16M)
# The platform is tests/coll/flat1024.xml (1024 hosts, 10 Gb/s and 1 µs per link, one
# switch: α = 2 µs, β = 0.8 ns/B between hosts; 0.1 µs and 100 GB/s inside one), timed as
# tests/coll/CMakeLists.txt's DT_SMPI_TIMING does. Runs the grader that `lessons/grade 05`
# built from your student_rhd.c (VARIANT=solution for the reference; BUILD=dir for another
# build directory). The grader asks for your schedules a process of its own that runs your
# student_rhd.c (the variant's `subject`, lessons/kit/subject.h), as `lessons/grade 05` does.
set -eu
self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"  # (for --help, after the cd below)
cd "$(dirname "$0")/../.."
P=1024 K=1 SIZES=64K,256K,1M,4M,16M coarsen=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) P=$2; shift 2 ;;
    --per-node) K=$2; shift 2 ;;
    --coarsen) coarsen=(--coarsen "$2"); shift 2 ;;
    -h|--help) sed -n '2,17p' "$self"; exit 0 ;;
    *) SIZES=$1; shift ;;
  esac
done
build=${BUILD:-build}
so="$build/lessons/05/${VARIANT:-student}/grader_smpi.so"
if [ ! -f "$so" ]; then
  echo "race.sh: $so is not built: run lessons/grade 05 first" >&2
  exit 2
fi
if [ $((P % K)) -ne 0 ] || [ $((P / K)) -gt 1024 ]; then
  echo "race.sh: $P ranks do not fill whole hosts of $K on the 1024 hosts" >&2
  exit 2
fi
subject="$build/lessons/05/${VARIANT:-student}/subject"
if [ ! -x "$subject" ]; then
  echo "race.sh: $subject is not built: run lessons/grade 05 first" >&2
  exit 2
fi
SMPIRUN=smpirun
[ -f "$build/lessons/kit.env" ] && . "$build/lessons/kit.env"
# the subject copied into a folder any user can read (as run_grader.sh does): run as root,
# the grader starts it as nobody; its output goes to a log, shown if it crashes
work=$(mktemp -d)
trap '{ set +x; } 2>/dev/null; rm -rf "$work"' EXIT
chmod 755 "$work"
cp "$subject" "$work/subject"
export LESSON_SUBJECT="$work/subject" LESSON_SUBJECT_LOG="$work/subject.log"
hosts="$work/hosts"
for h in $(seq 0 $((P / K - 1))); do
  for _ in $(seq "$K"); do echo "node-$h"; done
done > "$hosts"
shape=""
[ "$K" -gt 1 ] && shape="--group $K --share $K"
set -x
"$SMPIRUN" -platform tests/coll/flat1024.xml -hostfile "$hosts" -no-privatize \
  --cfg=smpi/simulate-computation:no --cfg=network/model:CM02 --cfg=network/crosstraffic:0 \
  --cfg=smpi/test:0 --cfg=smpi/send-is-detached-thresh:0 --log=root.thres:warning \
  -np "$P" "$so" --race "$SIZES" $shape ${coarsen[@]+"${coarsen[@]}"} --alpha 2e-6 --beta 8e-10 --alpha-intra 1e-7 \
  --beta-intra 1e-11
