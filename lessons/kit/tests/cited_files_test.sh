#!/usr/bin/env bash
# cited_files_test.sh SOURCE_DIR — every file of the repository that a lesson's README.md,
# HINTS.md, headers, sources or calls.txt cites by its path (nn/train_comm.c,
# docs/formulas.md, tests/coll/flat1024.xml, ...) exists: a student sent to read dtlab's
# own code finds it. Prints each missing one with where it is cited; exit 1 if any. In a
# student handout (nn/reference/ present) a file of lessons/components.txt is shipped
# compiled, not as source: cited, it counts as there.
set -u
root=${1:?usage: cited_files_test.sh SOURCE_DIR}
cd "$root" || exit 2
missing=0
for f in lessons/README.md lessons/*/README.md lessons/*/HINTS.md lessons/*/*.h lessons/*/*.c \
         lessons/*/calls.txt lessons/*/solution/*.c lessons/*/instructor/*.sh; do
  [ -f "$f" ] || continue
  while IFS=: read -r line path; do
    if [ ! -e "$path" ] && ! { [ -d nn/reference ] && grep -qE "^[0-9][0-9] (.* )?$path( |\$)" lessons/components.txt; }; then
      echo "MISSING $path (cited at $f:$line)"
      missing=$((missing + 1))
    fi
  done < <(grep -noE '\b(nn|real|sim|tests|docs|bench)/[A-Za-z0-9_./-]+\.(c|h|md|cu|cuh|py|sh|xml|cmake)\b' "$f" | sort -u)
done
[ "$missing" -eq 0 ] && echo "cited_files_test: every cited file exists"
[ "$missing" -eq 0 ]
