#!/usr/bin/env bash
# readme_commands.sh LESSON_DIR BUILD_DIR [VARIANT] — runs every command of a lesson's
# README.md and HINTS.md (the lines of their ```sh blocks) as written, from a scratch folder
# that looks like the repository's root: `build` is BUILD_DIR, the rest links to the source
# tree. With VARIANT (CI: solution), build/lessons/NN/student is that variant's folder, so
# that a command comparing the student's program with the library's sees a finished one.
# `lessons/grade NN` lines are left out (the grade has its own tests). A command that fails
# fails the test, naming the file, its line and its exit status. Run it as root without
# OMPI_ALLOW_RUN_AS_ROOT: an mpirun line runs as root only when it carries
# --allow-run-as-root itself. Prints "PASS readme_commands: N commands" on success.
set -u
dir=${1:?usage: readme_commands.sh LESSON_DIR BUILD_DIR}
build=${2:?build dir}
variant=${3:-}
src=$(cd "$dir/../.." && pwd)
w=$(mktemp -d "${TMPDIR:-/tmp}/lesson_readme_XXXXXX")
trap 'rm -rf "$w"' EXIT
for f in "$src"/* "$src"/.[!.]*; do
  [ -e "$f" ] || continue
  [ "$(basename "$f")" = build ] || ln -s "$f" "$w/"
done
build=$(cd "$build" && pwd)
if [ -z "$variant" ]; then
  ln -s "$build" "$w/build"
else  # build/ and build/lessons/NN/ as folders of links, student/ the variant's
  num=$(basename "$dir" | cut -c1-2)
  mkdir -p "$w/build/lessons/$num"
  for f in "$build"/* "$build"/.[!.]*; do
    [ -e "$f" ] && [ "$(basename "$f")" != lessons ] && ln -s "$f" "$w/build/"
  done
  for f in "$build"/lessons/*; do
    [ "$(basename "$f")" != "$num" ] && ln -s "$f" "$w/build/lessons/"
  done
  for f in "$build/lessons/$num"/*; do
    [ "$(basename "$f")" != student ] && ln -s "$f" "$w/build/lessons/$num/"
  done
  ln -s "$build/lessons/$num/$variant" "$w/build/lessons/$num/student"
fi
unset OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
n=0 bad=0
for doc in README.md HINTS.md; do
  [ -f "$dir/$doc" ] || continue
  # "line<TAB>command" for each line of a ```sh block
  cmds=$(awk '/^[[:space:]]*```sh[[:space:]]*$/ { on = 1; next }
              /^[[:space:]]*```/ { on = 0; next }
              on && $0 !~ /^[[:space:]]*(#|$)/ { sub(/^[[:space:]]+/, ""); print NR "\t" $0 }' "$dir/$doc")
  while IFS=$'\t' read -r line cmd; do
    [ -n "$cmd" ] || continue
    case "$cmd" in lessons/grade\ *) continue ;; esac
    n=$((n + 1))
    (cd "$w" && timeout 300 bash -c "$cmd") </dev/null >"$w/.out" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
      echo "FAIL readme_commands: $(basename "$dir")/$doc:$line exits with status $rc: $cmd"
      tail -n 8 "$w/.out" | sed 's/^/#   /'
      bad=1
    fi
  done <<<"$cmds"
done
[ "$bad" -eq 0 ] || exit 1
echo "PASS readme_commands: $n commands of $(basename "$dir")'s README.md and HINTS.md ran as written"
