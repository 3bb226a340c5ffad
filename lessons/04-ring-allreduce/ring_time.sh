#!/usr/bin/env bash
# ring_time.sh — lesson 04's experiment: the simulated time of one allreduce by your ring,
# against its two terms, for one rank count and several sizes.
#   lessons/04-ring-allreduce/ring_time.sh [--solution] P BYTES...
# Runs the grader's timing mode (build/lessons/04/<variant>/grader_smpi.so, built by
# lessons/grade 04) under smpirun on P ranks of tests/coll/flat1024.xml, with the flags and
# the α = 2 µs, β = 0.8 ns/B of grade.sh, and prints one row per size: the simulated time,
# the latency term 2(P-1)α, the bandwidth term 2(P-1)/P·nβ, and the latency's share.
set -u
cd "$(dirname "$0")/../.." || exit 2
variant=student
[ "${1:-}" = "--solution" ] && variant=solution && shift
P=${1:?usage: ring_time.sh [--solution] P BYTES...}
shift
[ $# -gt 0 ] || { echo "usage: ring_time.sh [--solution] P BYTES..." >&2; exit 2; }
for v in "$P" "$@"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "ring_time.sh: '$v' is not a whole number (usage: ring_time.sh [--solution] P BYTES..., P from 2 to 1024)" >&2; exit 2; }
done
[ "$P" -ge 2 ] && [ "$P" -le 1024 ] || { echo "ring_time.sh: P = $P: expected 2 to 1024 ranks (tests/coll/flat1024.xml)" >&2; exit 2; }
build=${BUILD:-build}
. "$build/lessons/kit.env" || exit 2
so="$build/lessons/04/$variant/grader_smpi.so"
flag=""
[ "$variant" = solution ] && flag=" --solution"
[ -f "$so" ] || { echo "ring_time.sh: $so is not built (lessons/grade 04$flag builds it)" >&2; exit 2; }
# the grader asks the student's ring of a subject program (lessons/kit/subject.h), copied
# into a folder any user can read, as run_grader.sh does (as root it runs as nobody)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cp "$build/lessons/04/$variant/subject" "$work/subject" || exit 2
export LESSON_SUBJECT="$work/subject" LESSON_SUBJECT_LOG="$work/subject.log"
hosts="$work/hosts"
for i in $(seq 0 $((P - 1))); do echo "node-$i"; done >"$hosts"
echo "# latency = 2(P-1)α, bandwidth = 2(P-1)/P·nβ (α = 2e-6 s, β = 8e-10 s/B), in seconds"
printf "%6s %10s %11s %11s %11s %8s\n" ranks bytes simulated latency bandwidth "latency%"
for bytes in "$@"; do
  line=$("$SMPIRUN" -platform tests/coll/flat1024.xml -hostfile "$hosts" -no-privatize \
      --cfg=smpi/simulate-computation:no --cfg=network/model:CM02 --cfg=network/crosstraffic:0 \
      --cfg=smpi/test:0 --cfg=smpi/send-is-detached-thresh:0 --log=root.thres:warning \
      -np "$P" "$so" --timing "$bytes" --alpha 2e-6 --beta 8e-10 2>/dev/null |
      grep " simulated_time_within")
  t=$(echo "$line" | sed -n 's/.*simulated \([0-9.e+-]*\) s.*/\1/p')
  a=$(echo "$line" | sed -n 's/.*α term \([0-9.e+-]*\),.*/\1/p')
  b=$(echo "$line" | sed -n 's/.*β term \([0-9.e+-]*\)).*/\1/p')
  case "$line" in
    PASS*|FAIL*"(slower"*) ;;  # a time, within 5 % of the closed form or above it
    *) echo "ring_time.sh: no timing for $bytes bytes (does lessons/grade 04 pass?) ${line#FAIL }"; exit 1 ;;
  esac
  awk -v p="$P" -v n="$bytes" -v t="$t" -v a="$a" -v b="$b" \
      'BEGIN { printf "%6d %10d %11.4e %11.4e %11.4e %7.0f%%\n", p, n, t, a, b, 100 * a / t }'
done
