# real/programs.cmake — the programs of real runs: dtrain (mpirun -np P dtrain), and dttok
# (the gpt models' BPE tokenizer: learn, prepare token shards, encode, decode). Included from
# real/CMakeLists.txt after libdtdata is defined.
add_executable(dttok ${CMAKE_CURRENT_LIST_DIR}/dttok.c)
target_link_libraries(dttok PRIVATE dtnn)
set_target_properties(dttok PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
if(TARGET dtdata AND DT_HAVE_MPI)
  add_library(dtreal STATIC ${CMAKE_CURRENT_LIST_DIR}/checkpoint.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_opts.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_eval.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_device.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_profile.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_slow.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_text.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_generate.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_steps.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_pipe.c)
  target_include_directories(dtreal PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(dtreal PUBLIC dtdata dtnn MPI::MPI_C)
  if(TARGET dtcuda)
    target_link_libraries(dtreal PUBLIC dtcuda)   # --device cuda (and --algo nccl)
  endif()
  # dt_add_dtrain(<target> OUTPUT_DIR <dir> [SOURCES <src>...] [INCLUDES <dir>...])
  # dtrain from its own sources plus SOURCES, as <dir>/dtrain: e.g. a registry of allreduce
  # algorithms with more entries (lessons/04-ring-allreduce: --algo student).
  function(dt_add_dtrain name)
    cmake_parse_arguments(PARSE_ARGV 1 A "" "OUTPUT_DIR" "SOURCES;INCLUDES")
    add_executable(${name} ${PROJECT_SOURCE_DIR}/real/dtrain.c
                           ${PROJECT_SOURCE_DIR}/real/dtrain_loop.c ${A_SOURCES})
    target_link_libraries(${name} PRIVATE dtreal)
    if(A_INCLUDES)
      target_include_directories(${name} PRIVATE ${A_INCLUDES})
    endif()
    set_target_properties(${name} PROPERTIES OUTPUT_NAME dtrain
                          RUNTIME_OUTPUT_DIRECTORY ${A_OUTPUT_DIR})
  endfunction()
  dt_add_dtrain(dtrain OUTPUT_DIR ${PROJECT_BINARY_DIR})
else()
  message(STATUS "dtlab: skipping dtrain (needs MPI and zlib)")
endif()
