# split.sh — sourced by the grade.sh of a lesson whose grader is split (lessons/kit/subject.h):
# the student's code runs in a subject process that returns data, and the grader that judges
# it and prints the verdicts is another process, which never holds the student's code.
#   split_record LABEL LIMIT NP ARGS...   a recording run: $LESSON_SUBJECT_MPI (the student's
#       MPI code and the lesson's harness) under mpirun -np NP with ARGS, as another user
#       when the grade runs as root (nobody: it can write nothing of the tree, signal
#       nothing of the grader's), with an empty environment but for what MPI needs, under
#       `timeout LIMIT`; its records go to $RUNS_W/<label>.rec/, its output to
#       <label>.sublog, its status to <label>.subrc. Then SPLIT_ENV holds what the judge's
#       run needs, for its environment (not its command line: runs.sh tells the runs of one
#       kind by their commands): (export "${SPLIT_ENV[@]}"; run_launch LABEL LIMIT ...).
#   split_log LABEL   the subject's log for a judge that starts its own server subject
#       (LESSON_SUBJECT): LESSON_SUBJECT_LOG=$(split_log L) run_launch L LIMIT ...
# Needs runs.sh (runs_begin, runs_key) sourced first.

split_log() { printf '%s/%s.sublog' "$RUNS_W" "$(runs_key "$1")"; }

split_record() {
  local label=$1 limit=$2 np=$3 key dir drop=() envs=()
  shift 3
  key=$(runs_key "$label")
  dir="$RUNS_W/$key.rec"
  mkdir -p "$dir/home"
  cp "$LESSON_SUBJECT_MPI" "$dir/home/subject"
  if [ "$(id -u)" = 0 ]; then
    chmod 755 "$RUNS_W"
    chown -R 65534:65534 "$dir"
    drop=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  fi
  envs=(PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$dir/home" TMPDIR="$dir/home"
        OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 LESSON_RECORDS="$dir")
  [ -n "${OPENBLAS_CORETYPE+x}" ] && envs+=(OPENBLAS_CORETYPE="$OPENBLAS_CORETYPE")
  [ -n "${OPENBLAS_L2_SIZE+x}" ] && envs+=(OPENBLAS_L2_SIZE="$OPENBLAS_L2_SIZE")
  (cd "$dir/home" && timeout -k 5 "$limit" "${drop[@]}" env -i "${envs[@]}" \
      "$MPIRUN" -np "$np" --oversubscribe "$dir/home/subject" "$@" \
      </dev/null >"$RUNS_W/$key.sublog" 2>&1)
  echo $? >"$RUNS_W/$key.subrc"
  SPLIT_ENV=(LESSON_RECORDS="$dir" LESSON_SUBJECT_RC="$(cat "$RUNS_W/$key.subrc")"
             LESSON_SUBJECT_LOG="$RUNS_W/$key.sublog")
}
