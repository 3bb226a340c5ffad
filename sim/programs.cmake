# sim/programs.cmake — dtsim's rank program (nn/ + coll + the model device compiled with
# SMPI's flags into dtsim_rank.so, which SimGrid runs once per simulated GPU) and the dtsim
# launcher (native). Needs SimGrid; without it dtsim is skipped with a message.
if(NOT DT_HAVE_SMPI)
  message(STATUS "dtlab: SimGrid SMPI not found — skipping dtsim (apt-get install libsimgrid-dev simgrid)")
  return()
endif()
set(S ${CMAKE_CURRENT_SOURCE_DIR})
# preloaded into SimGrid by dtsim: SMPI's CPU-time readings, unused here, cost ~20 % (the file)
add_library(dtsim_cputime MODULE ${S}/cputime_shim.c)
target_link_libraries(dtsim_cputime PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(dtsim_cputime PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR} PREFIX "")

# dt_add_dtsim(<target> OUTPUT_DIR <dir> [SOURCES <src>...] [INCLUDES <dir>...])
# The launcher <dir>/dtsim (target <target>) and its rank program <dir>/dtsim_rank.so (target
# <target>_rank), both with SOURCES added: e.g. a registry of allreduce algorithms with more
# entries (lessons/04-ring-allreduce: --algo student), which the launcher parses and the rank
# program runs. rank_run.c and rank_result.c, what the launcher and the rank program say to
# each other, are compiled into both (the launcher has them from dtsim_core).
# The rank program's own sources, one list for dtsim and for lesson 07's rank programs
# (lessons/07-fusion-and-overlap/lesson.cmake)
set(_rank rank.c rank_run.c rank_result.c device_model.c device_model_nn.c
    device_model_gpt.c gpu_profiles.c gpu_calib.c straggler.c rank_zero.c zero.c)
list(TRANSFORM _rank PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
set_property(GLOBAL PROPERTY DT_RANK_SOURCES ${_rank})

function(dt_add_dtsim name)
  cmake_parse_arguments(PARSE_ARGV 1 A "" "OUTPUT_DIR" "SOURCES;INCLUDES")
  set(S ${PROJECT_SOURCE_DIR}/sim)
  # (--device cpu trains on nn/dataset.h's synthetic data and shards, in dtnn_smpi)
  get_property(rank GLOBAL PROPERTY DT_RANK_SOURCES)
  dt_add_smpi_program(${name}_rank SOURCES ${rank} ${A_SOURCES})
  target_include_directories(${name}_rank PRIVATE ${S} ${A_INCLUDES})
  set_target_properties(${name}_rank PROPERTIES OUTPUT_NAME dtsim_rank
                        LIBRARY_OUTPUT_DIRECTORY ${A_OUTPUT_DIR})
  add_executable(${name} ${S}/dtsim.c ${S}/dtsim_opts.c ${S}/dtsim_opts_values.c ${S}/dtsim_cluster.c ${S}/dtsim_faults.c ${S}/dtsim_analytic.c ${S}/dtsim_run.c ${S}/dtsim_onegpu.c
                 ${S}/dtsim_auto.c ${S}/dtsim_report.c ${S}/dtsim_calibrate.c ${S}/dtsim_calib.c ${S}/dtsim_offers.c ${S}/dtsim_simgrid.c
                 ${S}/dtsim_walltime.c
                 ${S}/dtsim_plan.c ${S}/dtsim_plan_out.c ${S}/dtsim_plan_plot.c
                 ${S}/dtsim_jobs.c ${S}/dtsim_slurm.c ${S}/dtsim_sweep.c ${S}/dtsim_gpt.c
                 ${S}/dtsim_3d.c ${S}/dtsim_3d_report.c ${S}/dtsim_layouts.c ${A_SOURCES})
  target_link_libraries(${name} PRIVATE dtsim_core)
  if(A_INCLUDES)
    target_include_directories(${name} PRIVATE ${A_INCLUDES})
  endif()
  target_compile_definitions(${name} PRIVATE DT_SMPIRUN="${SMPIRUN_EXECUTABLE}"
                             DT_RANK_SO="${A_OUTPUT_DIR}/dtsim_rank.so"
                             DT_CPUTIME_SO="${CMAKE_BINARY_DIR}/dtsim_cputime.so")
  if(DT_JEMALLOC_LIBRARY)  # cmake/dtlab_deps.cmake
    target_compile_definitions(${name} PRIVATE DT_MALLOC_SO="${DT_JEMALLOC_LIBRARY}")
  endif()
  set_target_properties(${name} PROPERTIES OUTPUT_NAME dtsim RUNTIME_OUTPUT_DIRECTORY ${A_OUTPUT_DIR})
  add_dependencies(${name} ${name}_rank dtsim_cputime)
endfunction()
dt_add_dtsim(dtsim OUTPUT_DIR ${CMAKE_BINARY_DIR})
