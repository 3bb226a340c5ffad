// dtrain_device.c — dtrain's choice of device and of what only GPUs have: one GPU per rank
// (the rank's index among the ranks on its node, from MPI's shared-memory split, modulo the
// node's GPUs), the deterministic mode, CUDA-aware MPI and the `nccl` algorithm. Builds
// without nvcc or NCCL refuse those options with a message (exit 2).
// Not here: the cuda device itself (real/cuda), the allreduce (nn/coll).
#include <mpi.h>
#include <string.h>

#include "dtrain.h"
#if defined(DT_HAVE_CUDA)
#include "device_cuda.h"
#endif
#if defined(DT_HAVE_NCCL)
#include "coll_nccl.h"
#endif
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // MPIX_Query_cuda_support
#endif

// The rank's index among the ranks of its node, and how many share the node.
static void local_rank(int *lr, int *ln) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, lr);
    MPI_Comm_size(node, ln);
    MPI_Comm_free(&node);
}

// 1 if the MPI library says it reads and writes GPU memory, 0 if not or if it cannot say.
static int mpi_cuda_aware(void) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support();
#else
    return 0;
#endif
}

int dtrain_make_device(const dtrain_opts *o, int threads, dt_device **out, char *desc,
                       size_t desc_n, dt_error *err) {
    *out = NULL;
    snprintf(desc, desc_n, "cpu (%d threads)", threads);
    if (!o->device_cuda) {
        *out = dt_device_cpu_create(threads);
        return 0;
    }
#if defined(DT_HAVE_CUDA)
    int lr, ln, gpus = dt_cuda_device_count();
    local_rank(&lr, &ln);
    if (gpus == 0)
        return dt_fail(err, DT_EXIT_USAGE, "--device cuda: no CUDA GPU on this node (or no "
                       "driver); run without --device cuda to train on the CPU");
    if (o->cuda_aware && !mpi_cuda_aware())
        return dt_fail(err, DT_EXIT_USAGE, "--cuda-aware: this MPI library is not CUDA-aware "
                       "(MPIX_Query_cuda_support() is 0 or absent); leave the option out to "
                       "stage through host memory");
    int ordinal = lr % gpus;
    *out = dt_device_cuda_create(ordinal, o->deterministic ? DT_CUDA_DETERMINISTIC : 0u, err);
    if (!*out) return -1;
    char name[160];
    dt_cuda_describe(ordinal, name, sizeof name);
    snprintf(desc, desc_n, "cuda:%d %s%s%s", ordinal, name, ln > gpus ? ", shared by several "
             "ranks" : "", o->deterministic ? ", deterministic" : "");
    return 0;
#else
    (void)threads;
    (void)local_rank;
    (void)mpi_cuda_aware;
    return dt_fail(err, DT_EXIT_USAGE, "--device cuda: this build has no cuda device (nvcc "
                   "was not found when cmake configured it; install the CUDA toolkit or set "
                   "CUDAToolkit_ROOT, and configure again)");
#endif
}

int dtrain_attach_algo(const dtrain_opts *o, dt_coll *c, dt_device *dev, dt_error *err) {
    if (o->coll.algo != DT_ALGO_NCCL) return 0;
#if defined(DT_HAVE_NCCL)
    return dt_nccl_attach(c, MPI_COMM_WORLD, dev, err);
#else
    (void)c;
    (void)dev;
    return dt_fail(err, DT_EXIT_USAGE, "--algo nccl: this build has no NCCL (install "
                   "libnccl-dev or NCCL into the CUDA toolkit, and configure again)");
#endif
}
