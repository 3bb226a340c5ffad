# tests/coll/plain.cmake — libdtcoll_mpi.so (real/dtcoll_mpi.c) under an MPI program that
# knows nothing of dtlab (plain_allreduce.c): for every algorithm, on 3 and 4 ranks, its
# results with LD_PRELOAD must match Open MPI's own within the rounding of a different
# summation order, and the run must say it used our algorithm (plain_check.sh); fp16 on the
# wire; an unknown DTCOLL_ALGO ends the job with exit code 2 and the list of valid names.
# Included from tests/coll/CMakeLists.txt when MPI is found. Labels "coll;mpi".
if(NOT TARGET dtcoll_mpi)
  return()
endif()
# The library to preload. Under -DDT_SANITIZE=address the sanitizer's runtime must come first
# in the process's library list, so it is preloaded in front of ours (DT_SANITIZE_PRELOAD,
# cmake/dtlab_sanitize.cmake).
set(_preload "${DT_SANITIZE_PRELOAD}$<TARGET_FILE:dtcoll_mpi>")
add_executable(plain_allreduce ${CMAKE_CURRENT_LIST_DIR}/plain_allreduce.c)
target_link_libraries(plain_allreduce PRIVATE MPI::MPI_C m)
set(_plain_check sh ${CMAKE_CURRENT_LIST_DIR}/plain_check.sh ${MPIRUN_EXECUTABLE})
set(_plain_tests "")
dt_algos(_plain_algos WITHOUT DT_ALGO_EXTERNAL)  # every entry but nccl (cmake/dtlab_algos.cmake)
foreach(np 3 4)
  foreach(algo ${_plain_algos})
    set(t coll.preload_np${np}_${algo}_matches_open_mpi_allreduce)
    add_test(NAME ${t} COMMAND ${_plain_check} ${np} $<TARGET_FILE:plain_allreduce>
                                ${_preload} ${algo})
    list(APPEND _plain_tests ${t})
  endforeach()
endforeach()
add_test(NAME coll.preload_np4_ring_fp16_wire_matches_open_mpi_allreduce
         COMMAND ${_plain_check} 4 $<TARGET_FILE:plain_allreduce> ${_preload} ring 1)
list(APPEND _plain_tests coll.preload_np4_ring_fp16_wire_matches_open_mpi_allreduce)
set_tests_properties(${_plain_tests} PROPERTIES LABELS "coll;mpi" ENVIRONMENT "${DT_COLL_ENV}"
                     TIMEOUT 120 PASS_REGULAR_EXPRESSION "PASS plain_allreduce")
add_test(NAME coll.preload_unknown_algorithm_lists_the_valid_ones_exit_2
         COMMAND sh -c "out=$(\"$0\" -np 2 --oversubscribe -x LD_PRELOAD=\"$1\" -x DTCOLL_ALGO=bogus \"$2\" 2>&1); rc=$?; echo \"$out\"; test $rc -eq 2 && echo \"$out\" | grep -qF \"dtcoll: DTCOLL_ALGO: 'bogus' is not an allreduce algorithm (valid: ${DT_ALGOS_NAMES})\""
                 ${MPIRUN_EXECUTABLE} ${_preload} $<TARGET_FILE:plain_allreduce>)
set_tests_properties(coll.preload_unknown_algorithm_lists_the_valid_ones_exit_2 PROPERTIES
  LABELS "coll;mpi" ENVIRONMENT "${DT_COLL_ENV}" TIMEOUT 60)

# Under load (preload_stress.c): 10^5 allreduces of mixed sizes and types, blocking and up to
# 4 nonblocking in flight, on communicators dup'ed, split and freed every 100 calls; every
# result exact against its closed form, and the heap in use (mallinfo2) may not grow more than 0.25 MiB after warm-up.
# (DTCOLL_VERBOSE prints a line per communicator: counted, not listed.)
add_executable(preload_stress ${CMAKE_CURRENT_LIST_DIR}/preload_stress.c)
target_link_libraries(preload_stress PRIVATE MPI::MPI_C)
# (2*10^4 calls in a sanitized build, where each call costs ten times as much.)
set(_stress_calls 100000)
if(DT_SANITIZE)
  set(_stress_calls 20000)
endif()
foreach(algo ring auto)
  set(t coll.preload_np3_${algo}_under_load_exact_without_heap_growth)
  add_test(NAME ${t}
           COMMAND sh -c "out=$(\"$0\" -np 3 --oversubscribe -x LD_PRELOAD=\"$1\" -x DTCOLL_ALGO=${algo} -x DTCOLL_VERBOSE=1 \"$2\" ${_stress_calls} 0.25 2>&1); echo \"$out\" | grep -v '^dtcoll:'; echo \"$out\" | grep '^dtcoll:' | sort | uniq -c; echo \"$out\" | grep -q '^dtcoll: MPI_Allreduce via ${algo}' || echo 'FAIL: the library was not used'"
                   ${MPIRUN_EXECUTABLE} ${_preload} $<TARGET_FILE:preload_stress>)
  # PROCESSORS 3: its three ranks poll without pause, so beside another test on CI's two
  # cores each slows the other (5 s alone, 110 s beside a simulator run: ctest -j2 now runs
  # it alone)
  set_tests_properties(${t} PROPERTIES LABELS "coll;mpi;fault" ENVIRONMENT "${DT_COLL_ENV}"
                       PROCESSORS 3 TIMEOUT 300 PASS_REGULAR_EXPRESSION "PASS preload_stress"
                       FAIL_REGULAR_EXPRESSION "FAIL")
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/preload.cmake)  # requests, threads, attributes, mpi4py
