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
# mpi.h first on the include path, the force-included helpers, DT_SMPI=1, OpenMP, simgrid,
# m) and OpenBLAS. NO_DTNN builds a plain SMPI program without nn/ (the plumbing checks).
# -Wl,-z,defs makes any unresolved symbol a link error here, not a dlopen error at run time.
#
# Why OpenBLAS is linked statically, its symbols hidden: libsimgrid depends on GSL's
# reference CBLAS (libgslcblas), and with -no-privatize smpimain dlopens the program without
# RTLD_DEEPBIND, so the program's cblas_sgemm would bind to GSL's (found first, in the global
# scope): right numbers, ~7x slower (measured on dp_smoke). Linked from libopenblas.a with
# --exclude-libs,ALL, the calls bind inside the shared object and nothing is left to the
# dynamic linker (tests/smpi checks: no undefined cblas_* symbol). Without libopenblas.a we
# fall back to the shared library, with a warning; LD_PRELOAD=libopenblas.so.0 then helps.
get_filename_component(_dt_openblas_dir "${OPENBLAS_LIBRARY}" DIRECTORY)
find_file(OPENBLAS_STATIC_LIBRARY libopenblas.a HINTS ${_dt_openblas_dir} NO_DEFAULT_PATH)
if(OPENBLAS_STATIC_LIBRARY)
  message(STATUS "dtlab: SMPI programs link OpenBLAS statically (${OPENBLAS_STATIC_LIBRARY})")
else()
  message(WARNING "dtlab: no libopenblas.a next to ${OPENBLAS_LIBRARY}: SMPI programs run "
                  "with -no-privatize will call SimGrid's reference CBLAS (slow) unless "
                  "LD_PRELOAD names libopenblas.so.0")
endif()

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
    if(OPENBLAS_STATIC_LIBRARY)
      target_link_libraries(${name} PRIVATE ${OPENBLAS_STATIC_LIBRARY})
      target_link_options(${name} PRIVATE -Wl,--exclude-libs,ALL)
    else()
      target_link_libraries(${name} PRIVATE ${OPENBLAS_LIBRARY})
    endif()
  endif()
  target_link_libraries(${name} PRIVATE ${A_LIBS})
  target_link_options(${name} PRIVATE -Wl,-z,defs)
endfunction()
