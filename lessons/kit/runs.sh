# runs.sh — sourced by a lesson's grade.sh that runs its grader several times (mpirun for
# several P, smpirun): one convention for every lesson, one line per CHECK over all runs,
# so that a lesson's score counts its checks, not its checks times its runs.
#   runs_begin                       a work folder ($RUNS_W), removed on exit
#   run_launch LABEL LIMIT CMD...    one run under `timeout LIMIT` (foreground; put it in
#                                    the background with & to run several at once)
#   runs_report LABEL...             after the runs (and `wait`): what each crashed or hung
#                                    run printed that says why, then one line per check,
#                                    in the order the checks first appear:
#       PASS name [P=1,2,3] <the details of the last run it passed in>
#       FAIL name: <the first failure's hint> [fails at P=2,3]
#       FAIL name: not reached at P=2,3 (the runs crashed; passed at P=1)
#     (a check that a crashed or hung run never printed, where a run of its kind did — the
#     same command but for its numbers — is not a PASS: it did not pass in that run)
#   Its status: 0 every check passed; 1 a check failed; 124 a run hung; 3 a run crashed (or
#   ended before its last check line); lessons/kit/run_grader.sh reports the last two as
#   such, and counts them in the score.
#   runs_stop_at_fail                status 0 when LESSON_STOP_AT_FAIL (run_grader.sh sets it
#                                    for CI's mutants: the check a mutant must fail) names a
#                                    check that has failed in a run so far (with it set to
#                                    "instructor", any check), or when LESSON_STOP_AT_CRASH is
#                                    set (CI's crashing mutant) and a run so far crashed or
#                                    hung; the runs after it are then left out, with a line
#                                    saying so: a mutant is caught once one run shows it
#   runs_stopping                    status 0 when either of those is set (a driver that runs
#                                    some runs side by side runs them one after the other then)
# RUNS_HANG_HINT (optional): the lesson's guess at why a run hangs, shown after HANG.
# A run that knows why it hung (its own watchdog: lesson 04's part 1) prints "# hang: ..."
# lines and exits 124; they are shown under its HANG line instead.
# A run's lines are the grader's "PASS name ..." / "FAIL name: ..."; it ends with the
# grader's "# N of M checks passed".

runs_begin() {
  RUNS_W=$(mktemp -d "${TMPDIR:-/tmp}/lesson_runs_XXXXXX")
  trap 'rm -rf "$RUNS_W"' EXIT
}

# the file name of a label ("P=2", "smpirun -np 64")
runs_key() { printf '%s' "$1" | tr -c 'A-Za-z0-9=_-' '_'; }

run_launch() {
  local label=$1 limit=$2 key
  shift 2
  key=$(runs_key "$label")
  # the run's kind (runs_kind), for runs_report: the runs of one kind report the same checks
  runs_kind "$@" >"$RUNS_W/$key.kind"
  timeout -k 5 "$limit" "$@" >"$RUNS_W/$key.out" 2>&1
  echo $? >"$RUNS_W/$key.rc"
}

# A run's kind: its command with every number left out ("mpirun -np N --oversubscribe grader
# --raw N"): part 1's raw-P=1..4 are one kind, part 2's mpirun P=1..7 another, the smpirun
# timing runs a third. Runs of one kind print the same checks, so a check that one of them
# printed and a crashed run of its kind did not was not reached there.
runs_kind() {
  printf '%s\n' "$@" | awk '{ printf "%s ", ($0 ~ /^[0-9]+$/ ? "N" : $0) } END { print "" }'
}

# Why a run crashed, from what it printed: MPI's own error first (the call and the MPI_ERR_
# class Open MPI names, once for all the ranks that report it), then the failed assertion or
# the signal (Open MPI's and SimGrid's own notices, which repeat for every rank, and Open
# MPI's "N more processes have sent help message" aggregation left out), then a hint for the
# assertions of the schedule builder that a student's code reaches.
runs_story() {
  local f=$1 mpi
  mpi=$(runs_mpi_errors "$f")
  [ -z "$mpi" ] || printf '%s\n' "$mpi"
  grep -v -E '^\[[^]]*\] (\[ *[0-9]+\]|\*\*\*|Signal code|Associated errno|Failing at)|^(PASS|FAIL|#) |^-{20,}|^\s*$|Primary job|prterun|mpirun has exited|^(This|Per user-direction|the job to be terminated|process returned|a non-zero exit|job\. The first process|  Process name|  Exit code|  Node|  PID|  Local host|  Signal)|^Execution failed|_smpi.so --cfg=|more process(es)? ha(s|ve) sent help message|orte_base_help_aggregate|base_help_aggregate' "$f" |
    awk -v n0="$(printf '%s' "$mpi" | grep -c .)" \
        '/Assertion|assert|Segmentation|Aborted|signal|SIGSEGV|SIGABRT|Floating point|double free|corrupted|stack smashing|Deadlock|error/ { hot[++h] = $0; next }
         { cold[++c] = $0 }
         END { n = n0
               for (i = 1; i <= h && n < 4; i++) { print "#   " hot[i]; n++ }
               for (i = (c > 4 - n ? c - (4 - n) + 1 : 1); i <= c && n < 4; i++) { print "#   " cold[i]; n++ } }' |
    awk '!seen[$0]++'
  if grep -q 'n_rounds > 0' "$f"; then
    echo "#   (dt_lane_op was called before the lane's first dt_lane_round: open a round first)"
  fi
}

# Open MPI's report of an MPI call that failed (MPI_ERRORS_ARE_FATAL), every rank's
#   [host:pid] *** An error occurred in MPI_Sendrecv
#   [host:pid] *** reported by process [741081089,1]
#   [host:pid] *** MPI_ERR_COUNT: invalid count argument
# as one line per call and error: "#   MPI_Sendrecv failed: MPI_ERR_COUNT: invalid count
# argument (rank 1)" (at most two).
runs_mpi_errors() {
  awk '/\*\*\* An error occurred in / { call = $NF; rank = ""; next }
       /\*\*\* reported by process \[/ { r = $NF; gsub(/^\[[^,]*,|\]$/, "", r); rank = r; next }
       /\*\*\* MPI_ERR_[A-Z_]+/ {
         e = $0; sub(/^.*\*\*\* /, "", e)
         k = (call == "" ? "an MPI call" : call) " failed: " e
         if (!(k in ranks)) { order[++n] = k; ranks[k] = rank; many[k] = 0 }
         else if (rank != "") { ranks[k] = ranks[k] ", " rank; many[k] = 1 }
         call = ""; rank = "" }
       END { for (i = 1; i <= n && i <= 2; i++) {
               k = order[i]
               print "#   " k (ranks[k] == "" ? "" : (many[k] ? " (ranks " : " (rank ") ranks[k] ")") } }' "$1"
}

runs_report() {
  local label key rc state status=0
  : >"$RUNS_W/all"
  : >"$RUNS_W/runs"
  for label in "$@"; do
    key=$(runs_key "$label")
    rc=$(cat "$RUNS_W/$key.rc" 2>/dev/null || echo 2)
    sed -n "s/^\(PASS\|FAIL\) /$key \1 /p" "$RUNS_W/$key.out" >>"$RUNS_W/all"
    state=ok
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
      if grep -q '^# hang: ' "$RUNS_W/$key.out"; then
        echo "HANG $label: no result in time, the run was stopped:"
        grep '^# hang: ' "$RUNS_W/$key.out" | sed 's/^# hang: /#   /'
      else
        echo "HANG $label: no result in time, the run was stopped${RUNS_HANG_HINT:+ ($RUNS_HANG_HINT)}"
      fi
      status=124 state=hung
    elif grep -q 'Deadlock detected' "$RUNS_W/$key.out"; then
      echo "HANG $label: SimGrid found every rank waiting for a message no rank will send${RUNS_HANG_HINT:+ ($RUNS_HANG_HINT)}"
      status=124 state=hung
    elif [ "$rc" -gt 1 ] || ! grep -Eq '^# [0-9]+ of [0-9]+ checks passed' "$RUNS_W/$key.out"; then
      echo "CRASH $label: the run ended (exit $rc) before its last check; what it printed:"
      runs_story "$RUNS_W/$key.out"
      [ "$status" -eq 124 ] || status=3
      state=crashed
    fi
    echo "$key $state $(cat "$RUNS_W/$key.kind" 2>/dev/null)" >>"$RUNS_W/runs"
  done
  if [ ! -s "$RUNS_W/all" ]; then
    echo "# no check ran"
    [ "$status" -ne 0 ] || status=3
    return "$status"
  fi
  runs_verdicts "$RUNS_W/runs" "$RUNS_W/all"
  local bad=$?
  [ "$status" -ne 0 ] && return "$status"
  return $bad
}

# runs_verdicts RUNS ALL: one line per check, from RUNS ("key state kind...", one run a
# line, state ok, crashed or hung) and ALL ("key PASS|FAIL name ...", every run's check
# lines). A check fails when it failed in a run, or when a run that crashed or hung never
# printed it although another run of its kind did (it was not reached there): its line says
# where, e.g. "FAIL name: not reached at P=2,3,4 (the runs crashed; passed at P=1)". Status
# 1 when a check failed.
runs_verdicts() {
  awk 'FNR == NR { st[$1] = $2; k = $0; sub(/^[^ ]+ [^ ]+ ?/, "", k); kind[$1] = k
                   run[++nr] = $1; next }
       { label = $1; verdict = $2; name = $3; sub(/:$/, "", name)
         if (!(name in seen)) { seen[name] = 1; order[++n] = name }
         printed[label, name] = 1; kind_has[kind[label], name] = 1
         if (verdict == "FAIL") {
           if (!(name in fail)) { line = $0; sub(/^[^ ]+ /, "", line); fail[name] = line }
           failed_in[name] = failed_in[name] (nf[name]++ ? "," : "") label
         } else {
           passed_in[name] = passed_in[name] (np[name]++ ? "," : "") label
           line = $0; sub(/^[^ ]+ [^ ]+ [^ ]+ /, "", line); last[name] = line
         } }
       END { bad = 0
         for (i = 1; i <= n; i++) {
           k = order[i]; miss = ""; nm = 0; why = ""
           for (j = 1; j <= nr; j++) {
             r = run[j]
             if (st[r] == "ok" || (r, k) in printed || !((kind[r], k) in kind_has)) continue
             miss = miss (nm++ ? "," : "") r
             why = (why == "" || why == st[r]) ? st[r] : "crashed or hung"
           }
           if (nm) {
             bad = 1
             gone = "not reached at " runs(miss) " (the run" (nm > 1 ? "s " : " ") why
             if (k in fail) print fail[k] " [fails at " runs(failed_in[k]) "; " gone ")]"
             else print "FAIL " k ": " gone (np[k] ? "; passed at " runs(passed_in[k]) : "") ")"
           }
           else if (k in fail) { bad = 1; print fail[k] (nf[k] + np[k] > 1 ? " [fails at " runs(failed_in[k]) "]" : "") }
           else print "PASS " k " [" runs(passed_in[k]) "] " last[k]
         }
         exit bad }
       # "P=1,P=2,P=64" -> "P=1,2,64"
       function runs(s,   a, k, out, pre, p, i2) {
         k = split(s, a, ",")
         for (i2 = 1; i2 <= k; i2++) {
           p = a[i2]; sub(/=.*/, "=", p)
           if (p == pre) { sub(/^[^=]*=/, "", a[i2]) }
           pre = p
           out = out (i2 > 1 ? "," : "") a[i2]
         }
         return out }' "$1" "$2"
}

runs_stopping() { [ -n "${LESSON_STOP_AT_FAIL:-}${LESSON_STOP_AT_CRASH:-}" ]; }

runs_stop_at_fail() {
  runs_stopping || return 1
  [ -z "${RUNS_STOPPED:-}" ] || return 0
  local f
  if [ -n "${LESSON_STOP_AT_CRASH:-}" ]; then
    for f in "$RUNS_W"/*.rc; do
      [ -f "$f" ] || continue
      case "$(cat "$f")" in
        0|1) ;;
        *) echo "# a run crashed or hung: the runs after it are left out (LESSON_STOP_AT_CRASH)"
           RUNS_STOPPED=1
           return 0 ;;
      esac
    done
    return 1
  fi
  for f in "$RUNS_W"/*.out; do
    [ -f "$f" ] || continue
    if grep -q "^FAIL $LESSON_STOP_AT_FAIL\b" "$f" ||
       { [ "$LESSON_STOP_AT_FAIL" = instructor ] && grep -q '^FAIL ' "$f"; }; then
      echo "# $LESSON_STOP_AT_FAIL failed: the runs after it are left out (LESSON_STOP_AT_FAIL)"
      RUNS_STOPPED=1
      return 0
    fi
  done
  return 1
}

# runs_mpi_smpi "P..." SMPI_P SMPI_CHECK [SMPIRUN_FLAG...] — the whole driver of a lesson
# whose grader runs under mpirun, then under SMPI (lessons 03 and 11, and their instructor
# cases): $LESSON_GRADER under mpirun at each P of the list, one after the other, then
# $LESSON_GRADER_SMPI under smpirun -no-privatize at SMPI_P ranks (0: none) in one process,
# one host each of tests/coll/flat1024.xml, computation not simulated, with the flags given
# (a timing check's network model); every run with one seed (DT_LESSON_SEED, drawn here if
# unset) and under `timeout ${LESSON_RUN_TIMEOUT:-40}`. Prints the first run's seed line,
# then runs_report's (one line per check over the runs). Without the SMPI grader or
# smpirun, SMPI_CHECK fails, naming what is missing. The status is runs_report's.
# RUNS_ARGS (optional): the grader's arguments in every run (an instructor's other cases).
# An item P:ARGS of the list (ARGS's words joined by commas: "6:--groups,2") runs the mpirun
# at P with those arguments too; its runs are labelled "P=6 groups 2" (shown P=6_groups_2).
runs_mpi_smpi() {
  local plist=$1 sp=$2 scheck=$3 P item extra label labels=() limit=${LESSON_RUN_TIMEOUT:-40} rc
  shift 3
  : "${LESSON_GRADER:?}" "${LESSON_GRADER_SMPI:?}" "${MPIRUN:?}" "${SMPIRUN:?}" "${DT_SOURCE:?}"
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
    run_launch "$label" "$limit" "$MPIRUN" -np "$P" --oversubscribe -x OMP_NUM_THREADS \
        -x OPENBLAS_NUM_THREADS -x DT_LESSON_SEED "$LESSON_GRADER" ${RUNS_ARGS:-} $extra
    labels+=("$label")
    runs_stop_at_fail && break
  done
  local missing=""
  if [ "$sp" -gt 0 ] && [ -z "${RUNS_STOPPED:-}" ]; then
    if [ -f "$LESSON_GRADER_SMPI" ] && [ -x "$SMPIRUN" ]; then
      seq 0 $((sp - 1)) | sed 's/^/node-/' >"$RUNS_W/hosts"
      run_launch "P=$sp" "$limit" "$SMPIRUN" -np "$sp" \
          -platform "$DT_SOURCE/tests/coll/flat1024.xml" -hostfile "$RUNS_W/hosts" \
          -no-privatize --cfg=smpi/simulate-computation:no "$@" --log=root.thres:warning \
          "$LESSON_GRADER_SMPI" ${RUNS_ARGS:-}
      labels+=("P=$sp")
    else
      missing="FAIL $scheck: the SMPI grader ($LESSON_GRADER_SMPI) or smpirun ($SMPIRUN) is missing"
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
