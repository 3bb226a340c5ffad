// coll_native.c — the allreduces that other libraries run, as a layer on the core runner
// (coll_run.h): `mpi`, the MPI library's own MPI_Allreduce / MPI_Iallreduce (the baseline
// every benchmark compares with), and `nccl`, NVIDIA's NCCL on the cuda device's stream
// (attached with dt_coll_set_ext by real/cuda/coll_nccl.c).
#include "coll_internal.h"

// `mpi` as a schedule: one round whose one op is the library's collective on the buffer.
void dt_build_native(const dt_coll *c, size_t n, int quant, dt_sched *s) {
    (void)c, (void)quant;
    dt_lane_round(&s->lanes[0]);
    dt_lane_op(&s->lanes[0], DT_OP_NATIVE, DT_COMM_ALL, -1, 0, n);
}

// The library's collective must start in the same order on every rank, but staged chunks
// arrive at different times on different ranks: an `mpi` request waits until the ones
// started before it have posted theirs.
int dt_native_ready(dt_coll_req *r) {
    if (!r->native) return 1;
    if (r->native_seq != r->c->native_posted) return 0;
    r->c->native_posted++;
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

// dt_allreduce with algo mpi on host-addressable float32 or float64 data: the library's
// blocking call (its MPI_Iallreduce measured 0.4-0.6x as fast at 1-64 MB). 1 when taken,
// with *rc the call's result.
int dt_native_fast(dt_coll *c, void *buf, size_t count, dt_dtype dtype, int *rc,
                   dt_error *err) {
    if (c->o.algo != DT_ALGO_MPI || c->o.wire_f16 || dt_stage_needed(c, DT_F32)) return 0;
    *rc = 0;
    if (c->o.checked && dt_check_counts(c, count, dtype, err)) {
        *rc = -1;
        return 1;
    }
    if (c->dev) c->dev->sync(c->dev);
    size_t es = dtype == DT_F64 ? sizeof(double) : sizeof(float);
    for (size_t done = 0; done < count; done += DT_MSG_MAX) {
        size_t n = count - done < DT_MSG_MAX ? count - done : DT_MSG_MAX;
        PMPI_Allreduce(MPI_IN_PLACE, (char *)buf + done * es, (int)n,
                       dtype == DT_F64 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, c->comms[DT_COMM_ALL]);
    }
    return 1;
}

// nccl: NCCL queues the allreduce on the device's stream and progresses by itself.
int dt_ext_start(dt_coll_req *r) {
    dt_coll *c = r->c;
    r->ext = c->ext.start(c->ext.ctx, r->buf, r->count, r->dtype);
    return 1;
}

int dt_ext_progress(dt_coll_req *r, int blocking) {
    while (!r->c->ext.test(r->c->ext.ctx, r->ext))
        if (!blocking) return 0;
    r->ext = NULL;
    r->back = 2;
    return 1;
}
