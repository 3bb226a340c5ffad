# cmake/dtlab_sanitize.cmake — `-DDT_SANITIZE=address,undefined` (any -fsanitize= list): every
# C file built with those sanitizers, errors fatal (-fno-sanitize-recover), frames kept for
# the reports. What the sanitized build covers and how CI runs it: tests/sanitize/README.md.
# Two parts are left out of such a build, with a message:
#  - the simulator (sim/, SMPI programs, the lessons' simulated checks): SMPI runs every rank
#    as a SimGrid actor on stacks it switches itself, which AddressSanitizer cannot follow;
#  - the cuda device: nvcc's objects are not instrumented, and without a GPU there is
#    nothing to run.
set(DT_SANITIZE "" CACHE STRING
    "build with these sanitizers, e.g. address,undefined (tests/sanitize/README.md)")
if(DT_SANITIZE)
  add_compile_options(-fsanitize=${DT_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${DT_SANITIZE})
  message(STATUS "dtlab: DT_SANITIZE=${DT_SANITIZE}")
  if(DT_HAVE_SMPI)
    set(DT_HAVE_SMPI OFF)
    message(STATUS "dtlab: DT_SANITIZE — skipping the simulator (SimGrid switches the ranks' "
                   "stacks itself, which the sanitizers cannot follow)")
  endif()
  # What a test preloads into MPI ranks next to its own library (LD_PRELOAD replaces the
  # environment's): the sanitizer's runtime, which must come first in the process's library
  # list, and tests/sanitize/keep_dl.c (libdt_keep_dl.so, built by tests/CMakeLists.txt),
  # which .ci/sanitize preloads everywhere else.
  set(DT_SANITIZE_PRELOAD "")
  if(DT_SANITIZE MATCHES "address")
    execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                    OUTPUT_VARIABLE _asan_rt OUTPUT_STRIP_TRAILING_WHITESPACE)
    set(DT_SANITIZE_PRELOAD "${_asan_rt}:$<TARGET_FILE:dt_keep_dl>:")
  endif()
  if(DT_HAVE_CUDA)
    set(DT_HAVE_CUDA OFF)
    message(STATUS "dtlab: DT_SANITIZE — skipping the cuda device (nvcc objects are not "
                   "instrumented)")
  endif()
endif()

# `CC=clang cmake -DDT_FUZZ=ON`: tests/fuzz's libFuzzer harnesses too (clang and
# libclang-rt-14-dev), with every library instrumented for the fuzzer's coverage.
option(DT_FUZZ "build the libFuzzer harnesses of tests/fuzz (needs CC=clang)" OFF)
if(DT_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "DT_FUZZ needs clang as the C compiler: CC=clang cmake -S . -B "
                        "build-fuzz -DDT_FUZZ=ON (apt-get install clang libclang-rt-14-dev)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
