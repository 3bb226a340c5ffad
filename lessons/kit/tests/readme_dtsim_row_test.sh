#!/usr/bin/env bash
# readme_dtsim_row_test.sh README DTSIM ALGO ARGS... — the dtsim table row a lesson's README
# shows (the line after its "GPUs batch algo ..." header that follows the command "dtsim
# --algo ALGO ARGS...") is what DTSIM --algo ALGO ARGS... prints, every figure but the wall
# time (lesson 04: the README's "to the last digit" figures of --algo student, run with the
# solution's ring). Prints both rows when they differ; exit 1 then.
set -u
readme=${1:?usage: readme_dtsim_row_test.sh README DTSIM ALGO ARGS...}
dtsim=${2:?dtsim} algo=${3:?algo}
shift 3
row() { awk '/GPUs +batch +algo/ { getline; print; exit }' | awk '{ NF = NF - 1; print }'; }
want=$(awk -v cmd="dtsim --algo $algo $*" 'index($0, cmd) { on = 1 } on' "$readme" | row)
got=$("$dtsim" --algo "$algo" "$@" 2>&1 | row)
if [ -z "$want" ]; then
  echo "no row after 'dtsim --algo $algo $*' in $readme"
  exit 1
fi
if [ "$want" != "$got" ]; then
  echo "$readme shows:"; echo "  $want"
  echo "the command prints:"; echo "  $got"
  exit 1
fi
echo "the row of $readme is the command's: $got"
