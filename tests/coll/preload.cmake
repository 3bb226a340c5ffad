# tests/coll/preload.cmake — libdtcoll_mpi.so's requests, threads and communicators
# (real/dtcoll_mpi.c, real/dtcoll_mpi_wait.c) under MPI programs that know nothing of dtlab,
# every algorithm in one test per program and np (preload_run.sh: one mpirun per algorithm,
# each must say it used our library):
#  - one regression test per defect found with an outside client (preload_defects.c):
#    MPI_Wait on requests in flight oldest first (it crashed), MPI_Request_get_status polling
#    (it never completed), MPI_THREAD_MULTIPLE with threads on their own communicators (the
#    library passed everything through), an application's attribute copy callback (the
#    library's communicators ran it);
#  - every completion call over several requests in each order, mixed with the program's own
#    requests, MPI_Request_free, MPI_Cancel, a communicator freed and MPI_Finalize with
#    requests in flight, np 2-4 and at MPI_THREAD_MULTIPLE (preload_requests.c), sums against
#    PMPI_Allreduce's;
#  - mpi4py's own test suite through the library (preload_mpi4py.sh).
# Included from plain.cmake (which sets _preload). Labels "coll;mpi;preload".
set(_algos "mpi ps ring rhd dbtree hier torus2d")
set(_run sh ${CMAKE_CURRENT_LIST_DIR}/preload_run.sh ${MPIRUN_EXECUTABLE} ${_preload})
find_package(Threads REQUIRED)
add_executable(preload_defects ${CMAKE_CURRENT_LIST_DIR}/preload_defects.c)
target_link_libraries(preload_defects PRIVATE MPI::MPI_C Threads::Threads)
add_executable(preload_requests ${CMAKE_CURRENT_LIST_DIR}/preload_requests.c)
target_link_libraries(preload_requests PRIVATE MPI::MPI_C)
set(_pre_tests "")
macro(_preload_test name np algos min_lines)
  add_test(NAME coll.preload_np${np}_${name}
           COMMAND ${_run} ${np} "${algos}" ${min_lines} ${ARGN})
  list(APPEND _pre_tests coll.preload_np${np}_${name})
endmacro()
_preload_test(defect_wait_oldest_first_every_algorithm 2 "${_algos}" 1
              $<TARGET_FILE:preload_defects> wait_oldest)
_preload_test(defect_get_status_polling_completes 1 "ring" 1
              $<TARGET_FILE:preload_defects> get_status)
_preload_test(defect_get_status_polling_completes_every_algorithm 3 "${_algos}" 1
              $<TARGET_FILE:preload_defects> get_status)
# three threads, three communicators: three lines per run
_preload_test(defect_thread_multiple_taken_over_every_algorithm 3 "${_algos}" 3
              $<TARGET_FILE:preload_defects> threads)
# np 4: hier and torus2d make the most communicators there
_preload_test(defect_no_attribute_copied_every_algorithm 4 "${_algos}" 1
              $<TARGET_FILE:preload_defects> attributes)
foreach(np 2 3 4)
  _preload_test(requests_every_call_and_order_every_algorithm ${np} "${_algos}" 1
                $<TARGET_FILE:preload_requests>)
endforeach()
# MPI_Reduce_scatter_block, MPI_Reduce_scatter and MPI_Allgather on the library's halves
# (real/dtcoll_mpi_rsag.c), exact sums against each rank's own, np 1, 3, 5
add_executable(preload_rsag ${CMAKE_CURRENT_LIST_DIR}/preload_rsag.c)
target_link_libraries(preload_rsag PRIVATE MPI::MPI_C)
foreach(np 1 3 5)
  _preload_test(reduce_scatter_allgather_every_algorithm ${np} "${_algos}" 1
                $<TARGET_FILE:preload_rsag>)
endforeach()
# the same at MPI_THREAD_MULTIPLE (one thread), where every wait polls
_preload_test(requests_thread_multiple_every_algorithm 3 "${_algos}" 1
              $<TARGET_FILE:preload_requests> 3 multiple)
# PROCESSORS 2: their ranks poll without pause (a test beside them slows both)
set_tests_properties(${_pre_tests} PROPERTIES LABELS "coll;mpi;preload"
                     ENVIRONMENT "${DT_COLL_ENV}" TIMEOUT 600 SKIP_RETURN_CODE 77 PROCESSORS 2)

# mpi4py's suite (not in the sanitized build: the interpreter is not built with the sanitizer).
# About 40 s on two cores; skips when mpi4py or its source distribution is missing.
if(NOT DT_SANITIZE)
  set(t coll.preload_mpi4py_suite_np2_np3_same_outcomes_every_algorithm)
  add_test(NAME ${t} COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/preload_mpi4py.sh ${MPIRUN_EXECUTABLE}
                             $<TARGET_FILE:dtcoll_mpi> "${_algos}" "2 3")
  set_tests_properties(${t} PROPERTIES LABELS "preload;preload_mpi4py;slow"
                       ENVIRONMENT "${DT_COLL_ENV}" TIMEOUT 900 SKIP_RETURN_CODE 77
                       PROCESSORS 2)
endif()

# DTCOLL_CHECK=1 (a blocking check inside each call) at MPI_THREAD_MULTIPLE: refused, exit 2
set(t coll.preload_np2_check_refused_at_thread_multiple_exit_2)
add_test(NAME ${t}
         COMMAND sh -c "out=$(\"$0\" -np 2 --oversubscribe -x LD_PRELOAD=\"$1\" -x DTCOLL_CHECK=1 \"$2\" threads 2>&1); rc=$?; echo \"$out\"; test $rc -eq 2 && echo \"$out\" | grep -q '^dtcoll: DTCOLL_CHECK=1 .*not at MPI_THREAD_MULTIPLE'"
                 ${MPIRUN_EXECUTABLE} ${_preload} $<TARGET_FILE:preload_defects>)
set_tests_properties(${t} PROPERTIES LABELS "coll;mpi;preload" ENVIRONMENT "${DT_COLL_ENV}"
                     TIMEOUT 60)

# A rank blocked in point-to-point (MPI_Recv, MPI_Probe, MPI_Mprobe, MPI_Sendrecv(_replace),
# MPI_Ssend, a rendezvous MPI_Send) while its MPI_Iallreduce is in flight, for a peer that
# sends only after its own wait (preload_blocking.c), np 2 and 3; at MPI_THREAD_MULTIPLE also
# blocked in MPI_Barrier and MPI_Bcast (the library's progress thread). Each hung before.
add_executable(preload_blocking ${CMAKE_CURRENT_LIST_DIR}/preload_blocking.c)
target_link_libraries(preload_blocking PRIVATE MPI::MPI_C)
set(_pre_tests "")
foreach(np 2 3)
  _preload_test(blocked_in_point_to_point_progresses_every_algorithm ${np} "${_algos}" 1
                $<TARGET_FILE:preload_blocking>)
  _preload_test(blocked_in_p2p_and_collectives_thread_multiple_every_algorithm ${np}
                "${_algos}" 1 $<TARGET_FILE:preload_blocking> multiple)
endforeach()
set_tests_properties(${_pre_tests} PROPERTIES LABELS "coll;mpi;preload"
                     ENVIRONMENT "${DT_COLL_ENV}" TIMEOUT 900 SKIP_RETURN_CODE 77 PROCESSORS 2)

# Communicators until the MPI library runs out (preload_comms.c), np 3: every rank's
# MPI_Comm_dup fails at the same one, after at least 32,000 (the library makes one
# communicator per communicator of the program, the same on every rank: real/dtcoll_mpi.c,
# nn/coll one_comm). hier: it made the most communicators, some on the leaders only, and hung
# (one rank in ompi_comm_nextcid); the others reach the same count by the same path (docs/
# allreduce.md). About 90 s here (the MPI library's own communicator ids slow down as they
# fill): a hang is 600 s.
# Not in the sanitized build: Open MPI 4.1's own failing MPI_Comm_dup reads a request it has
# freed (ompi_comm_request_return, then libnbc's progress), which AddressSanitizer reports
# with or without the library preloaded.
if(NOT DT_SANITIZE)
  add_executable(preload_comms ${CMAKE_CURRENT_LIST_DIR}/preload_comms.c)
  target_link_libraries(preload_comms PRIVATE MPI::MPI_C)
  set(_pre_tests "")
  _preload_test(communicators_run_out_on_every_rank_hier 3 "hier" 1
                $<TARGET_FILE:preload_comms> 32000)
  set_tests_properties(${_pre_tests} PROPERTIES LABELS "coll;mpi;preload;slow"
                       ENVIRONMENT "${DT_COLL_ENV};PRELOAD_TIMEOUT=600" TIMEOUT 1200
                       SKIP_RETURN_CODE 77 PROCESSORS 2)
endif()

# float and double sums through the library the way MPICH's allreduce tests drive an MPI
# library (preload_shapes.c): 10 counts from 1 to 300,000, six communicator shapes (world, a
# duplicate, even/odd, reversed, halves, all but the last), in place or not, blocking or
# not, exact against PMPI_Allreduce; at least 4 communicators taken over per run
add_executable(preload_shapes ${CMAKE_CURRENT_LIST_DIR}/preload_shapes.c)
target_link_libraries(preload_shapes PRIVATE MPI::MPI_C)
set(_pre_tests "")
foreach(np 3 4)
  _preload_test(float_double_sums_many_counts_and_shapes_every_algorithm ${np} "${_algos}" 4
                $<TARGET_FILE:preload_shapes>)
endforeach()
set_tests_properties(${_pre_tests} PROPERTIES LABELS "coll;mpi;preload"
                     ENVIRONMENT "${DT_COLL_ENV}" TIMEOUT 900 SKIP_RETURN_CODE 77 PROCESSORS 2)
