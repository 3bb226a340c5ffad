// coll_nccl.c — the `nccl` allreduce (coll_nccl.h): ncclAllReduce queued on the cuda
// device's stream, completion seen through a CUDA event that the trainer's polling tests.
// Not here: our own algorithms (nn/coll), which this one is measured against.
#include "coll_nccl.h"

#include <nccl.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

typedef struct {
    ncclComm_t comm;
    cudaStream_t stream;
} nccl_ctx;

static void *nccl_start(void *ctx, void *buf, size_t count, dt_dtype dtype) {
    nccl_ctx *n = ctx;
    cudaEvent_t *ev = mallocCheck(sizeof *ev);
    ncclResult_t e = ncclAllReduce(buf, buf, count, dtype == DT_F64 ? ncclFloat64 : ncclFloat32,
                                   ncclSum, n->comm, n->stream);
    if (e != ncclSuccess) dt_cuda_fail("ncclAllReduce", ncclGetErrorString(e), __FILE__, __LINE__);
    cudaCheck(cudaEventCreateWithFlags(ev, cudaEventDisableTiming));
    cudaCheck(cudaEventRecord(*ev, n->stream));
    return ev;
}

static int nccl_test(void *ctx, void *h) {
    (void)ctx;
    cudaEvent_t *ev = h;
    cudaError_t e = cudaEventQuery(*ev);
    if (e == cudaErrorNotReady) return 0;
    cudaCheck(e);
    cudaCheck(cudaEventDestroy(*ev));
    free(ev);
    return 1;
}

static void nccl_destroy(void *ctx) {
    nccl_ctx *n = ctx;
    ncclCommDestroy(n->comm);
    free(n);
}

int dt_nccl_attach(dt_coll *c, MPI_Comm comm, dt_device *dev, dt_error *err) {
    int rank, size, bad = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (!dev || strcmp(dev->name, "cuda") != 0)
        bad = dt_fail(err, DT_EXIT_USAGE, "--algo nccl: needs the cuda device (--device cuda)");
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MIN, comm);
    if (bad) return dt_fail(err, DT_EXIT_USAGE, "--algo nccl: needs the cuda device on every "
                            "rank (--device cuda)");
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    ncclResult_t e = ncclSuccess;
    if (rank == 0) e = ncclGetUniqueId(&id);
    int ok = e == ncclSuccess;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) return dt_fail(err, DT_EXIT_USAGE, "--algo nccl: ncclGetUniqueId failed: %s",
                            ncclGetErrorString(e));
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm);
    nccl_ctx *n = callocCheck(1, sizeof *n);
    n->stream = ((dt_cuda_ctx *)dev->ctx)->stream;
    e = ncclCommInitRank(&n->comm, size, id, rank);
    ok = e == ncclSuccess;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    if (!ok) {
        if (e == ncclSuccess) ncclCommDestroy(n->comm);
        free(n);
        return dt_fail(err, DT_EXIT_USAGE, "--algo nccl: ncclCommInitRank failed on a rank: %s "
                       "(NCCL needs one GPU per rank)", ncclGetErrorString(e));
    }
    dt_coll_ext ext = {n, nccl_start, nccl_test, nccl_destroy};
    dt_coll_set_ext(c, &ext);
    return 0;
}
