# cmake/dtlab_reference.cmake — the lessons' components compiled, for a student handout.
#
# lessons/components.txt lists the files of nn/ that hold what each lesson asks the student
# to build. A handout (lessons/handout) ships them compiled instead of as source, so that the
# library, its tools and every later lesson still run on dtlab's own component while the
# answer is not there to read (issue: "a compiled reference without source"). Two modes:
#
# - the repository (every listed file present): target dt_reference, part of the default
#   build, copies each listed file's objects, as compiled for the library in each world, to
#   ${CMAKE_BINARY_DIR}/reference/<world>/<path under nn/>.o, with reference/manifest.txt
#   (a line per file: path and the SHA-256 of the source compiled). Worlds: host (libdtnn.a),
#   smpi (dtnn_smpi, the simulator's), dtcoll (libdtcoll_mpi.so: nn/coll's files only). A
#   cpu-device kernel file (DT_KERNEL_SOURCES, tuned with -march=native for this machine)
#   is compiled once more for the baseline x86-64-v2, so a handout runs on any student's
#   x86-64 CPU. lessons/handout copies these into the handout's nn/reference/.
# - a handout (nn/reference/ present, the listed sources absent): nn/CMakeLists.txt and
#   real/coll.cmake link the objects of nn/reference/<world>/ in place of the sources
#   (dt_reference_objects below).

# dt_reference_objects(<world> <out-var>): the handout's compiled components of one world
# (empty in the repository)
function(dt_reference_objects world out)
  file(GLOB_RECURSE objs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/nn/reference/${world}/*.o)
  set(${out} ${objs} PARENT_SCOPE)
endfunction()

# dt_components(<out-var>): the paths of lessons/components.txt (repository-relative, unique;
# its "inline" lines, nn/kernels.h's functions, are not paths)
function(dt_components out)
  file(STRINGS ${PROJECT_SOURCE_DIR}/lessons/components.txt lines REGEX "^[0-9][0-9] ")
  set(files "")
  foreach(l ${lines})
    string(REGEX REPLACE "^[0-9][0-9] +" "" l "${l}")
    separate_arguments(fs UNIX_COMMAND "${l}")
    list(APPEND files ${fs})
  endforeach()
  list(REMOVE_DUPLICATES files)
  set(${out} ${files} PARENT_SCOPE)
endfunction()

# dt_reference_target(): in the repository, the target that compiles and collects the
# components (called from the top-level CMakeLists.txt once nn/ and real/ are defined)
function(dt_reference_target)
  if(EXISTS ${PROJECT_SOURCE_DIR}/nn/reference)
    return()  # a handout: nothing to build, the objects are the source
  endif()
  if(NOT (TARGET dtnn AND TARGET dtnn_smpi AND TARGET dtcoll_mpi))
    message(STATUS "dtlab: the lessons' compiled components (dt_reference, for lessons/handout) "
                   "skipped: they need Open MPI and SimGrid (the handout ships every world)")
    return()
  endif()
  dt_components(files)
  set(out ${CMAKE_BINARY_DIR}/reference)
  set(kernel_host "")
  set(kernel_smpi "")
  foreach(f ${files})
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${f} OR NOT f MATCHES "^nn/.*\\.c$")
      message(FATAL_ERROR "lessons/components.txt: ${f} is not a source file of nn/")
    endif()
    list(FIND DT_KERNEL_SOURCES ${PROJECT_SOURCE_DIR}/${f} k)
    if(k GREATER -1)  # compiled again for the baseline, through a wrapper of its own
      string(REPLACE "nn/" "" rel ${f})
      set(w ${out}/src/${rel})
      file(GENERATE OUTPUT ${w} CONTENT "#include \"${PROJECT_SOURCE_DIR}/${f}\"\n")
      list(APPEND kernel_host ${w})
    endif()
  endforeach()
  # nn/kernels.h's functions with external linkage (DT_HD empty): the handout declares the
  # lessons' ones ("inline" lines) without their bodies and links this object
  set(w ${out}/src/kernels_ref.c)
  file(GENERATE OUTPUT ${w} CONTENT
       "#define DT_HD\n#include \"${PROJECT_SOURCE_DIR}/nn/kernels.h\"\n")
  list(APPEND kernel_host ${w})
  list(APPEND deps_extra ${PROJECT_SOURCE_DIR}/nn/kernels.h)
  set(objs_smpi "$<TARGET_OBJECTS:dtnn_smpi>")
  set(kernels "")
  if(kernel_host)  # (never empty: kernels_ref.c)
    add_library(dt_reference_kernels OBJECT ${kernel_host})
    target_include_directories(dt_reference_kernels PRIVATE ${PROJECT_SOURCE_DIR}/nn)
    target_link_libraries(dt_reference_kernels PRIVATE dt_openblas OpenMP::OpenMP_C)
    target_compile_options(dt_reference_kernels PRIVATE -ffunction-sections -fdata-sections
                           -march=x86-64-v2 -ffp-contract=fast)
    add_library(dt_reference_kernels_smpi OBJECT ${kernel_host})
    target_link_libraries(dt_reference_kernels_smpi PRIVATE dtnn_smpi)
    target_compile_options(dt_reference_kernels_smpi PRIVATE -march=x86-64-v2
                           -ffp-contract=fast)
    set_target_properties(dt_reference_kernels_smpi PROPERTIES
                          POSITION_INDEPENDENT_CODE ON)
    set(kernels dt_reference_kernels dt_reference_kernels_smpi)
  endif()
  # the objects' paths, written at generate time for the copy (cmake/dtlab_reference_copy.cmake)
  set(lists ${out}/objects.cmake)
  file(GENERATE OUTPUT ${lists} CONTENT
"set(FILES \"${files}\")
set(KERNEL_FILES \"${kernel_host}\")
set(OBJS_host \"$<TARGET_OBJECTS:dtnn>\")
set(OBJS_smpi \"${objs_smpi}\")
set(OBJS_dtcoll \"$<TARGET_OBJECTS:dtcoll_mpi>\")
set(OBJS_kernels_host \"$<$<TARGET_EXISTS:dt_reference_kernels>:$<TARGET_OBJECTS:dt_reference_kernels>>\")
set(OBJS_kernels_smpi \"$<$<TARGET_EXISTS:dt_reference_kernels_smpi>:$<TARGET_OBJECTS:dt_reference_kernels_smpi>>\")
")
  set(deps "")
  foreach(f ${files})
    list(APPEND deps ${PROJECT_SOURCE_DIR}/${f})
  endforeach()
  add_custom_command(OUTPUT ${out}/manifest.txt
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DSRC=${PROJECT_SOURCE_DIR} -DLISTS=${lists}
            -P ${PROJECT_SOURCE_DIR}/cmake/dtlab_reference_copy.cmake
    DEPENDS dtnn dtnn_smpi dtcoll_mpi ${kernels} ${deps} ${deps_extra} ${lists}
            ${PROJECT_SOURCE_DIR}/cmake/dtlab_reference_copy.cmake
            ${PROJECT_SOURCE_DIR}/lessons/components.txt
    COMMENT "dtlab: the lessons' components, compiled, for lessons/handout (build/reference)"
    VERBATIM)
  add_custom_target(dt_reference ALL DEPENDS ${out}/manifest.txt)
endfunction()
