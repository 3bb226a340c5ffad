// coll_native.c — the MPI library's own allreduce as an extension of the core runner
// (coll_run.h): `mpi`, MPI_Allreduce / MPI_Iallreduce, the baseline every benchmark
// compares with. Its schedule is one round of one op (DT_OP_NATIVE) that this file posts.
// (`nccl`, NCCL on the cuda device's stream, has no schedule: coll_request.c hands it to
// the extension real/cuda/coll_nccl.c attaches.)
#include "coll_hooks.h"

// `mpi` as a schedule: one round whose one op is the library's collective on the buffer.
void dt_build_native(const dt_build_ctx *x, size_t n, int quant, dt_sched *s) {
    (void)x, (void)quant;
    dt_lane_round(&s->lanes[0]);
    dt_lane_op(&s->lanes[0], DT_OP_NATIVE, DT_COMM_ALL, -1, 0, n);
}

// The library's collective must start in the same order on every rank, but staged chunks
// arrive at different times on different ranks: an `mpi` request waits until the ones
// started before it have posted theirs.
int dt_native_ready(dt_native_order *o, unsigned long seq) {
    if (seq != o->posted) return 0;
    o->posted++;
    return 1;
}

// Under SMPI the blocking call: SMPI 3.32's MPI_Iallreduce ignores the smpi/allreduce
// algorithm selection that the simulator compares against, and returned wrong sums in
// place for 80 KB buffers in our tests.
void dt_native_post(dt_run *x, const dt_op *op, void *p, int count, MPI_Request *q) {
#ifdef DT_SMPI
    PMPI_Allreduce(MPI_IN_PLACE, p, count, x->type, MPI_SUM, x->comms[op->comm]);
    *q = MPI_REQUEST_NULL;
#else
    PMPI_Iallreduce(MPI_IN_PLACE, p, count, x->type, MPI_SUM, x->comms[op->comm], q);
#endif
}
