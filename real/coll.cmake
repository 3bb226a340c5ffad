# real/coll.cmake — libdtcoll_mpi.so (real/dtcoll_mpi*.c): dtlab's
# allreduce algorithms under any MPI program through the MPI profiling interface (mpirun -x
# LD_PRELOAD=...). Built from nn/coll's sources compiled again, position-independent and with
# hidden visibility, so the library exports only its MPI_* functions and needs no libdtnn (no
# OpenBLAS, no OpenMP: the local sums are host loops, dev = NULL). Included from
# real/CMakeLists.txt.
if(DT_HAVE_MPI)
  file(GLOB DTCOLL_MPI_CORE CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/nn/coll/coll*.c)
  # a student handout: the lessons' components of nn/coll compiled for this library
  # (nn/reference/dtcoll, cmake/dtlab_reference.cmake) in place of their sources
  dt_reference_objects(dtcoll DTCOLL_MPI_REFERENCE)
  set(DTCOLL_MPI_FUSION ${PROJECT_SOURCE_DIR}/nn/coll/fusion.c)
  if(NOT EXISTS ${DTCOLL_MPI_FUSION})
    set(DTCOLL_MPI_FUSION "")
  endif()
  find_package(Threads REQUIRED)  # the library's lock (MPI_THREAD_MULTIPLE)
  add_library(dtcoll_mpi SHARED ${CMAKE_CURRENT_LIST_DIR}/dtcoll_mpi.c
                                ${CMAKE_CURRENT_LIST_DIR}/dtcoll_mpi_wait.c
                                ${CMAKE_CURRENT_LIST_DIR}/dtcoll_mpi_block.c
                                ${CMAKE_CURRENT_LIST_DIR}/dtcoll_mpi_rsag.c ${DTCOLL_MPI_CORE}
                                ${DTCOLL_MPI_REFERENCE}
                                ${PROJECT_SOURCE_DIR}/nn/dt.c
                                # the allreduce options' table (coll_cli.c: DTCOLL_ALGO, ...)
                                ${PROJECT_SOURCE_DIR}/nn/opt_table.c
                                ${DTCOLL_MPI_FUSION})
  target_include_directories(dtcoll_mpi PRIVATE ${PROJECT_SOURCE_DIR}/nn)
  target_link_libraries(dtcoll_mpi PRIVATE MPI::MPI_C Threads::Threads m)
  target_link_options(dtcoll_mpi PRIVATE -Wl,--no-undefined)
  set_target_properties(dtcoll_mpi PROPERTIES C_VISIBILITY_PRESET hidden
                        POSITION_INDEPENDENT_CODE ON
                        LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})
else()
  message(STATUS "dtlab: skipping libdtcoll_mpi (needs MPI)")
endif()
