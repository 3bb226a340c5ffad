# split03.sh — sourced after kit/runs.sh and kit/split.sh by lesson 03's grade.sh and
# instructor/grade.sh: kit/runs.sh's runs_mpi_smpi for a split grader (subject03.h). Every
# run is two: first the student's data_parallel.c in its recording program, as nobody when
# the grade runs as root, with an empty environment, its output in a log (under mpirun:
# kit/split.sh's split_record with $LESSON_SUBJECT_MPI; under smpirun: split03_record_smpi
# below, with the variant's subject_smpi.so), then the grader, which reads its records back
# and prints the verdicts.
#   split03_record_smpi LABEL LIMIT NP SMPIRUN_FLAG... -- ARGS...   split_record's twin
#       for smpirun (-no-privatize: NP ranks in one process, one host each of
#       tests/coll/flat1024.xml, computation not simulated): the recording in
#       $RUNS_W/<label>.rec/, its output in <label>.sublog, its status in <label>.subrc
#       (124 when SimGrid found a deadlock: every rank waiting for a message no rank will
#       send, a hang), then SPLIT_ENV as split_record's
#   split03_judge LABEL LIMIT CMD...   run_launch with SPLIT_ENV in the run's environment
#       rather than on its command line, so that the runs of one kind keep one command
#       (runs.sh's runs_kind: a check a crashed run never reached, where a run of its kind
#       did, is no PASS)
#   split03_runs "P..." SMPI_P SMPI_CHECK [SMPIRUN_FLAG...]   runs_mpi_smpi's driver, the
#       same runs, labels, seed, limits and report, each run recorded, then judged
# Env (run_grader.sh): LESSON_GRADER, LESSON_GRADER_SMPI, LESSON_SUBJECT_MPI, MPIRUN,
# SMPIRUN, DT_SOURCE.

split03_record_smpi() {
  local label=$1 limit=$2 np=$3 key dir rc flags=() drop=() envs=() i
  shift 3
  while [ $# -gt 0 ] && [ "$1" != -- ]; do flags+=("$1"); shift; done
  [ $# -eq 0 ] || shift
  key=$(runs_key "$label")
  dir="$RUNS_W/$key.rec"
  mkdir -p "$dir/home"
  # the program, the platform and the hosts where the other user can read them
  cp "$(dirname "$LESSON_GRADER_SMPI")/subject_smpi.so" "$dir/home/subject_smpi.so"
  cp "$DT_SOURCE/tests/coll/flat1024.xml" "$dir/home/platform.xml"
  for ((i = 0; i < np; i++)); do echo "node-$i"; done >"$dir/home/hosts"
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
      "$SMPIRUN" -np "$np" -platform "$dir/home/platform.xml" -hostfile "$dir/home/hosts" \
      -no-privatize --cfg=smpi/simulate-computation:no "${flags[@]}" \
      --log=root.thres:warning "$dir/home/subject_smpi.so" "$@" \
      </dev/null >"$RUNS_W/$key.sublog" 2>&1)
  rc=$?
  if grep -q 'Deadlock detected' "$RUNS_W/$key.sublog"; then
    echo "# hang: SimGrid found every rank of the submission's run waiting for a message no" \
         "rank will send${RUNS_HANG_HINT:+ ($RUNS_HANG_HINT)}" >>"$RUNS_W/$key.sublog"
    rc=124
  fi
  echo "$rc" >"$RUNS_W/$key.subrc"
  SPLIT_ENV=(LESSON_RECORDS="$dir" LESSON_SUBJECT_RC="$rc"
             LESSON_SUBJECT_LOG="$RUNS_W/$key.sublog")
}

split03_judge() { (export "${SPLIT_ENV[@]}" && run_launch "$@"); }

split03_runs() {
  local plist=$1 sp=$2 scheck=$3 P item extra label labels=() limit=${LESSON_RUN_TIMEOUT:-40} rc
  shift 3
  : "${LESSON_GRADER:?}" "${LESSON_GRADER_SMPI:?}" "${LESSON_SUBJECT_MPI:?}" "${MPIRUN:?}" \
    "${SMPIRUN:?}" "${DT_SOURCE:?}"
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
  export DT_LESSON_SEED=${DT_LESSON_SEED:-$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')}
  RUNS_HANG_HINT=${RUNS_HANG_HINT:-a collective that not every rank called?}
  runs_begin
  for item in $plist; do
    P=${item%%:*} extra="" label="P=$P"
    if [ "$item" != "$P" ]; then
      extra=$(printf '%s' "${item#*:}" | tr ',' ' ')
      label="P=$P $(printf '%s' "$extra" | sed 's/--//g')"
    fi
    # shellcheck disable=SC2086  # $extra: the grader's arguments, words
    split_record "$label" "$limit" "$P" --seed "$DT_LESSON_SEED" $extra
    # shellcheck disable=SC2086
    split03_judge "$label" "$limit" "$MPIRUN" -np "$P" --oversubscribe -x OMP_NUM_THREADS \
        -x OPENBLAS_NUM_THREADS -x DT_LESSON_SEED "$LESSON_GRADER" $extra
    labels+=("$label")
    runs_stop_at_fail && break
  done
  local missing=""
  if [ "$sp" -gt 0 ] && [ -z "${RUNS_STOPPED:-}" ]; then
    if [ -f "$LESSON_GRADER_SMPI" ] && [ -f "$(dirname "$LESSON_GRADER_SMPI")/subject_smpi.so" ] &&
       [ -x "$SMPIRUN" ]; then
      seq 0 $((sp - 1)) | sed 's/^/node-/' >"$RUNS_W/hosts"
      split03_record_smpi "P=$sp" "$limit" "$sp" "$@" -- --seed "$DT_LESSON_SEED"
      split03_judge "P=$sp" "$limit" "$SMPIRUN" -np "$sp" \
          -platform "$DT_SOURCE/tests/coll/flat1024.xml" -hostfile "$RUNS_W/hosts" \
          -no-privatize --cfg=smpi/simulate-computation:no "$@" --log=root.thres:warning \
          "$LESSON_GRADER_SMPI"
      labels+=("P=$sp")
    else
      missing="FAIL $scheck: the SMPI grader ($LESSON_GRADER_SMPI, and subject_smpi.so"
      missing+=" beside it) or smpirun ($SMPIRUN) is missing"
    fi
  fi
  grep -h '^# lesson .*seed' "$RUNS_W"/*.out 2>/dev/null | head -n 1
  runs_report "${labels[@]}"
  rc=$?
  if [ -n "$missing" ]; then
    echo "$missing"
    [ "$rc" -ne 0 ] || rc=1
  fi
  return "$rc"
}
