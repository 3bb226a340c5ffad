// dtcoll_mpi_rsag.c — libdtcoll_mpi.so's reduce-scatter and allgather: an MPI program's
// MPI_Reduce_scatter_block, MPI_Reduce_scatter (MPI_SUM of MPI_FLOAT or MPI_DOUBLE) and
// MPI_Allgather (MPI_FLOAT or MPI_DOUBLE, the same type and count on both sides or
// MPI_IN_PLACE) run on nn/coll's halves (coll.h, dt_reduce_scatter / dt_allgather) with
// DTCOLL_ALGO's algorithm; everything else, and every call under DTCOLL_ALGO=mpi, goes to
// PMPI unchanged. Blocking calls only (their nonblocking forms pass through).
//
// The MPI forms are not in place the way nn/coll's are: MPI's result shard starts at recvbuf
// (the input being sendbuf, or recvbuf itself with MPI_IN_PLACE), so the sum runs in a
// copy of the whole input (the rest of recvbuf under MPI_IN_PLACE stays as it was) and the
// rank's shard is moved to the start of recvbuf; MPI_Allgather's contribution is copied to
// its place in recvbuf first. MPI_Allgather always runs on the full-precision context (a
// gather copies: DTCOLL_FP16 rounds sums, not data that is only moved); the reduce-scatters
// follow DTCOLL_FP16 as MPI_Allreduce does.
#include <stdlib.h>
#include <string.h>

#include "dtcoll_mpi.h"

static size_t esize(dt_dtype t) { return t == DT_F64 ? sizeof(double) : sizeof(float); }

// The sum over the ranks of n elements (from sendbuf, or recvbuf under MPI_IN_PLACE) split
// into shards (counts, or NULL: the even split), this rank's shard left at recvbuf.
static void reduce_scatter(const void *sendbuf, void *recvbuf, size_t n, const size_t *counts,
                           dtc_comm *s, dt_coll *c, dt_dtype t, MPI_Comm comm) {
    size_t es = esize(t);
    int r = dt_coll_rank(c), p = dt_coll_size(c);
    // a copy even under MPI_IN_PLACE: recvbuf beyond the shard keeps the caller's input
    // (as Open MPI leaves it; mpi4py's test_cco_buf checks it)
    char *work = mallocCheck(n * es + 1);
    memcpy(work, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, n * es);
    size_t lo = 0, mine;
    if (counts) {
        for (int i = 0; i < r; i++) lo += counts[i];
        mine = counts[r];
    } else {
        lo = dt_shard_lo(n, p, r);
        mine = dt_shard_lo(n, p, r + 1) - lo;
    }
    dt_error err;
    dtc_lock();
    dt_coll_req *q = dt_reduce_scatter_start(c, work, n, counts, t, &err);
    if (!q) dtc_fail(comm, &err);
    dtc_complete(s, q);
    dtc_unlock();
    memmove(recvbuf, work + lo * es, mine * es);
    free(work);
}

static int mpi_algo(const dt_coll *c) { return dt_coll_get_opts(c)->algo == DT_ALGO_MPI; }

DTC_EXPORT int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                        MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    dtc_comm *s;
    dt_coll *c;
    dt_dtype t;
    if (!dtc_ours(recvbuf, recvcount, dt, op, comm, &s, &c, &t) || mpi_algo(c))
        DTC_BLOCKING(PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, dt, op, comm));
    reduce_scatter(sendbuf, recvbuf, (size_t)recvcount * (size_t)dt_coll_size(c), NULL, s, c,
                   t, comm);
    return MPI_SUCCESS;
}

DTC_EXPORT int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                  MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
    dtc_comm *s;
    dt_coll *c;
    dt_dtype t;
    int p = 0, bad = !recvcounts || comm == MPI_COMM_NULL;
    size_t n = 0;
    if (!bad) {
        PMPI_Comm_size(comm, &p);
        for (int i = 0; i < p; i++) {
            if (recvcounts[i] < 0) bad = 1;
            else n += (size_t)recvcounts[i];
        }
    }
    // (a count of 0 for this rank is fine: recvbuf may then be anything, even NULL)
    void *rb = recvbuf ? recvbuf : (void *)recvcounts;
    if (bad || n == 0 || !dtc_ours(rb, 1, dt, op, comm, &s, &c, &t) || mpi_algo(c))
        DTC_BLOCKING(PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, dt, op, comm));
    size_t *counts = mallocCheck((size_t)p * sizeof(size_t));
    for (int i = 0; i < p; i++) counts[i] = (size_t)recvcounts[i];
    char spare[16];
    reduce_scatter(sendbuf, recvbuf ? recvbuf : spare, n, counts, s, c, t, comm);
    free(counts);
    return MPI_SUCCESS;
}

DTC_EXPORT int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm) {
    dtc_comm *s;
    dt_coll *c;
    dt_dtype t;
    int same = sendbuf == MPI_IN_PLACE || (sendtype == recvtype && sendcount == recvcount);
    if (!same || !dtc_ours(recvbuf, recvcount, recvtype, MPI_SUM, comm, &s, &c, &t) ||
        mpi_algo(c))
        DTC_BLOCKING(
            PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
    c = s->c64;  // full precision (the same context as c unless DTCOLL_FP16)
    int r = dt_coll_rank(c), p = dt_coll_size(c);
    size_t es = esize(t), m = (size_t)recvcount;
    if (sendbuf != MPI_IN_PLACE) memmove((char *)recvbuf + (size_t)r * m * es, sendbuf, m * es);
    dt_error err;
    dtc_lock();
    dt_coll_req *q = dt_allgather_start(c, recvbuf, m * (size_t)p, NULL, t, &err);
    if (!q) dtc_fail(comm, &err);
    dtc_complete(s, q);
    dtc_unlock();
    return MPI_SUCCESS;
}
