# real/programs.cmake — the programs of real runs: dtrain (mpirun -np P dtrain). Included from
# real/CMakeLists.txt after libdtdata is defined.
if(TARGET dtdata AND DT_HAVE_MPI)
  add_library(dtreal STATIC ${CMAKE_CURRENT_LIST_DIR}/checkpoint.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_opts.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_eval.c
                            ${CMAKE_CURRENT_LIST_DIR}/dtrain_device.c)
  target_include_directories(dtreal PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(dtreal PUBLIC dtdata dtnn MPI::MPI_C)
  if(TARGET dtcuda)
    target_link_libraries(dtreal PUBLIC dtcuda)   # --device cuda (and --algo nccl)
  endif()
  add_executable(dtrain ${CMAKE_CURRENT_LIST_DIR}/dtrain.c ${CMAKE_CURRENT_LIST_DIR}/dtrain_loop.c)
  target_link_libraries(dtrain PRIVATE dtreal)
  set_target_properties(dtrain PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
else()
  message(STATUS "dtlab: skipping dtrain (needs MPI and zlib)")
endif()
