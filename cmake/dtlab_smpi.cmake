# dtlab_smpi.cmake — how a program is built for the simulated world: the way `smpicc` builds
# it (smpicc -show: -include smpi/smpi_helpers.h -I.../smpi -fPIC, linked -shared -lsimgrid -lm
# -Wl,-z,defs), i.e. a shared object that smpirun (smpimain) loads and runs once per rank,
# all ranks in one process. nn/ has no mutable globals, so it runs with -no-privatize.
# Not here: platform files, launching (tests/smpi, sim/).
#
#   dt_add_smpi_program(<name> SOURCES <src>... [LIBS <lib>...] [NO_DTNN])
#
# builds <name>.so from the sources plus the objects of dtnn_smpi (nn/ compiled with SMPI's
# flags; linking the OBJECT library brings its objects and its usage requirements: SMPI's
# mpi.h first on the include path, the force-included helpers, DT_SMPI=1, OpenBLAS, OpenMP,
# simgrid, m). NO_DTNN builds a plain SMPI program without nn/ (the plumbing checks).
# -Wl,-z,defs makes any unresolved symbol a link error here, not a dlopen error at run time.
function(dt_add_smpi_program name)
  cmake_parse_arguments(PARSE_ARGV 1 A "NO_DTNN" "" "SOURCES;LIBS")
  if(NOT DT_HAVE_SMPI)
    message(FATAL_ERROR "dt_add_smpi_program(${name}): SimGrid SMPI was not found")
  endif()
  if(NOT A_SOURCES)
    message(FATAL_ERROR "dt_add_smpi_program(${name}): no SOURCES given")
  endif()
  add_library(${name} SHARED ${A_SOURCES})
  set_target_properties(${name} PROPERTIES PREFIX "" SUFFIX ".so"
                        POSITION_INDEPENDENT_CODE ON)
  if(A_NO_DTNN)
    target_include_directories(${name} BEFORE PRIVATE ${SMPI_INCLUDE_DIR}/smpi)
    target_compile_options(${name} PRIVATE
                           "SHELL:-include ${SMPI_INCLUDE_DIR}/smpi/smpi_helpers.h")
    target_compile_definitions(${name} PRIVATE DT_SMPI=1)
    target_link_libraries(${name} PRIVATE ${SIMGRID_LIBRARY} m)
  else()
    target_link_libraries(${name} PRIVATE dtnn_smpi)
  endif()
  target_link_libraries(${name} PRIVATE ${A_LIBS})
  target_link_options(${name} PRIVATE -Wl,-z,defs)
endfunction()
