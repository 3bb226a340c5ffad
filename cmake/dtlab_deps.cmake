# Finds dtlab's dependencies (Debian 12 package names in brackets) and says what is skipped.
find_package(PkgConfig REQUIRED)

# OpenMP [gcc] and OpenBLAS built for OpenMP [libopenblas-openmp-dev], so that BLAS threads
# and our OpenMP threads share one pool instead of fighting.
find_package(OpenMP REQUIRED COMPONENTS C)
find_path(OPENBLAS_INCLUDE_DIR cblas.h
  HINTS /usr/include/x86_64-linux-gnu/openblas-openmp /usr/include/openblas)
find_library(OPENBLAS_LIBRARY openblas
  HINTS /usr/lib/x86_64-linux-gnu/openblas-openmp)
if(NOT OPENBLAS_INCLUDE_DIR OR NOT OPENBLAS_LIBRARY)
  message(FATAL_ERROR "OpenBLAS not found: apt-get install libopenblas-openmp-dev")
endif()
add_library(dt_openblas INTERFACE)
target_include_directories(dt_openblas INTERFACE ${OPENBLAS_INCLUDE_DIR})
target_link_libraries(dt_openblas INTERFACE ${OPENBLAS_LIBRARY})
message(STATUS "dtlab: OpenBLAS ${OPENBLAS_LIBRARY}")

# oneDNN [libdnnl-dev] (optional, DT_ONEDNN): the cpu device's gemm backend where found, with
# AVX-512 kernels and bf16 gemms (nn/device_cpu_gemm.c, docs/cpu-backends.md); without it
# the gemms run on OpenBLAS, the reference path.
option(DT_ONEDNN "use oneDNN for the cpu device's gemms where it is found" ON)
set(DT_HAVE_DNNL OFF)
if(DT_ONEDNN)
  find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.h)
  find_library(DNNL_LIBRARY dnnl)
endif()
if(DT_ONEDNN AND DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
  set(DT_HAVE_DNNL ON)
  add_library(dt_dnnl INTERFACE)
  target_include_directories(dt_dnnl INTERFACE ${DNNL_INCLUDE_DIR})
  target_link_libraries(dt_dnnl INTERFACE ${DNNL_LIBRARY})
  include(CheckCSourceCompiles)
  set(CMAKE_REQUIRED_INCLUDES ${DNNL_INCLUDE_DIR})
  set(CMAKE_REQUIRED_LIBRARIES ${DNNL_LIBRARY})
  check_c_source_compiles("
    #include <stdint.h>
    #include <oneapi/dnnl/dnnl.h>
    dnnl_status_t dnnl_gemm_bf16bf16f32(char, char, dnnl_dim_t, dnnl_dim_t, dnnl_dim_t, float,
        const uint16_t *, dnnl_dim_t, const uint16_t *, dnnl_dim_t, float, float *, dnnl_dim_t);
    int main(void) { return (int)(intptr_t)&dnnl_gemm_bf16bf16f32 == 1; }" DT_HAVE_DNNL_BF16_GEMM)
  unset(CMAKE_REQUIRED_INCLUDES)
  unset(CMAKE_REQUIRED_LIBRARIES)
  message(STATUS "dtlab: oneDNN ${DNNL_LIBRARY}: the cpu device's gemms run on it")
elseif(DT_ONEDNN)
  message(STATUS "dtlab: oneDNN not found — the cpu device's gemms run on OpenBLAS only, "
                 "no bf16 gemms (apt-get install libdnnl-dev)")
else()
  message(STATUS "dtlab: oneDNN off (DT_ONEDNN=OFF) — the cpu device's gemms run on OpenBLAS")
endif()

# Open MPI [libopenmpi-dev openmpi-bin]: real runs and the mpirun tests.
find_package(MPI COMPONENTS C)
find_program(MPIRUN_EXECUTABLE NAMES mpirun mpiexec)
if(MPI_C_FOUND AND MPIRUN_EXECUTABLE)
  set(DT_HAVE_MPI ON)
  message(STATUS "dtlab: MPI found (${MPIRUN_EXECUTABLE})")
else()
  set(DT_HAVE_MPI OFF)
  message(STATUS "dtlab: MPI not found — skipping the real-MPI build and tests "
                 "(apt-get install libopenmpi-dev openmpi-bin)")
endif()

# SimGrid SMPI [libsimgrid-dev simgrid]: the simulated world.
find_program(SMPIRUN_EXECUTABLE smpirun)
find_path(SMPI_INCLUDE_DIR smpi/smpi_helpers.h)
find_library(SIMGRID_LIBRARY simgrid)
if(SMPIRUN_EXECUTABLE AND SMPI_INCLUDE_DIR AND SIMGRID_LIBRARY)
  set(DT_HAVE_SMPI ON)
  message(STATUS "dtlab: SimGrid SMPI found (${SMPIRUN_EXECUTABLE})")
else()
  set(DT_HAVE_SMPI OFF)
  message(STATUS "dtlab: SimGrid SMPI not found — skipping the simulator build and tests "
                 "(apt-get install libsimgrid-dev simgrid)")
endif()

# jemalloc [libjemalloc2] (optional): dtsim preloads it into SimGrid, whose many small
# allocations per simulated message ran 1.3-1.5x slower on glibc's malloc (sim/dtsim_run.c).
if(DT_HAVE_SMPI)
  find_library(DT_JEMALLOC_LIBRARY NAMES libjemalloc.so.2 jemalloc)
  if(DT_JEMALLOC_LIBRARY)
    message(STATUS "dtlab: jemalloc ${DT_JEMALLOC_LIBRARY} (preloaded into dtsim's SimGrid)")
  else()
    message(STATUS "dtlab: jemalloc not found — dtsim runs SimGrid on glibc's malloc, "
                   "same results, slower above ~1000 GPUs (apt-get install libjemalloc2)")
  endif()
endif()

# cmocka [libcmocka-dev]: unit tests.
pkg_check_modules(CMOCKA cmocka)
if(CMOCKA_FOUND)
  set(DT_HAVE_CMOCKA ON)
else()
  set(DT_HAVE_CMOCKA OFF)
  message(STATUS "dtlab: cmocka not found — skipping unit tests (apt-get install libcmocka-dev)")
endif()

# Images [libpng-dev libturbojpeg0-dev zlib1g-dev].
find_package(ZLIB)
find_package(PNG)
pkg_check_modules(TURBOJPEG libturbojpeg)

# CUDA toolkit with cuBLAS (optional): /usr/local/cuda or CUDAToolkit_ROOT.
if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER AND EXISTS ${PROJECT_SOURCE_DIR}/nn/reference)
  # a student handout: nn/kernels.h declares the lessons' formulas without their bodies
  # (lessons/components.txt), which device code cannot call
  set(DT_HAVE_CUDA OFF)
  message(STATUS "dtlab: a student handout — skipping the cuda device (nn/kernels.h's lesson "
                 "formulas ship compiled for the CPU only: nn/reference/README.md)")
elseif(CMAKE_CUDA_COMPILER)
  set(DT_HAVE_CUDA ON)
  message(STATUS "dtlab: CUDA compiler ${CMAKE_CUDA_COMPILER}")
else()
  set(DT_HAVE_CUDA OFF)
  message(STATUS "dtlab: nvcc not found — skipping the cuda device (install the CUDA toolkit "
                 "or set CUDAToolkit_ROOT)")
endif()
