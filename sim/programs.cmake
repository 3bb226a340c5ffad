# sim/programs.cmake — dtsim's rank program (nn/ + coll + the model device compiled with
# SMPI's flags into dtsim_rank.so, which SimGrid runs once per simulated GPU) and the dtsim
# launcher (native). Needs SimGrid; without it dtsim is skipped with a message.
if(NOT DT_HAVE_SMPI)
  message(STATUS "dtlab: SimGrid SMPI not found — skipping dtsim (apt-get install libsimgrid-dev simgrid)")
  return()
endif()
set(S ${CMAKE_CURRENT_SOURCE_DIR})
set(R ${PROJECT_SOURCE_DIR}/real)   # --device cpu: dtrain's synthetic data and its shards
# rank_opts.c and rank_result.c, what the launcher and the rank program say to each other,
# are compiled into both (the launcher has them from dtsim_core)
dt_add_smpi_program(dtsim_rank SOURCES ${S}/rank.c ${S}/rank_opts.c ${S}/rank_result.c
                    ${S}/rank_trace.c ${S}/device_model.c ${S}/device_model_nn.c
                    ${S}/gpu_profiles.c ${S}/atomic_file.c
                    ${R}/data_synthetic.c ${R}/data_dataset.c ${R}/data_shard.c)
target_include_directories(dtsim_rank PRIVATE ${S} ${R})
set_target_properties(dtsim_rank PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
# preloaded into SimGrid by dtsim: SMPI's CPU-time readings, unused here, cost ~20 % (the file)
add_library(dtsim_cputime MODULE ${S}/cputime_shim.c)
target_link_libraries(dtsim_cputime PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(dtsim_cputime PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR} PREFIX "")
add_executable(dtsim ${S}/dtsim.c ${S}/dtsim_run.c ${S}/dtsim_report.c)
target_link_libraries(dtsim PRIVATE dtsim_core)
target_compile_definitions(dtsim PRIVATE DT_SMPIRUN="${SMPIRUN_EXECUTABLE}"
                           DT_RANK_SO="${CMAKE_BINARY_DIR}/dtsim_rank.so"
                           DT_CPUTIME_SO="${CMAKE_BINARY_DIR}/dtsim_cputime.so")
set_target_properties(dtsim PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_dependencies(dtsim dtsim_rank dtsim_cputime)
