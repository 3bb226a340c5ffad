#!/bin/sh
# run.sh FUZZER CORPUS SECONDS — one fuzzing run of a tests/fuzz harness: libFuzzer starts
# from a copy of the committed corpus (new inputs go to the copy, never into the source tree)
# and runs for SECONDS under the sanitizers the harness was built with; a crash, a leak, a
# timeout (10 s for one input) or an allocation over 1 GiB is a finding: its input is kept
# as crash-* beside the fuzzer and printed, to be added to CORPUS once fixed.
set -u
fuzzer=$1 corpus=$2 seconds=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/dtfuzz-run-XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cp "$corpus"/* "$work"/ 2>/dev/null
art="$(dirname "$fuzzer")/$(basename "$fuzzer")-"
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
  -print_final_stats=1 -artifact_prefix="$art" "$work" >"$work.log" 2>&1
rc=$?
grep -E "^#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::peak_rss_mb|cov:" "$work.log" | tail -4
if [ $rc -ne 0 ]; then
  tail -60 "$work.log"
  echo "FAIL fuzz: $(basename "$fuzzer") found an input (exit $rc); saved as ${art}crash-*/leak-*/oom-*/timeout-*"
  rm -f "$work.log"
  exit 1
fi
rm -f "$work.log"
echo "PASS fuzz $(basename "$fuzzer"): $seconds s, corpus of $(ls "$corpus" | wc -l) seeds"
