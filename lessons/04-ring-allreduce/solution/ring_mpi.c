// ring_mpi.c — lesson 04, part 1: the ring allreduce with MPI's point-to-point calls alone
// (student_ring_mpi.h has the contract). Patarasuk & Yuan 2009: a reduce-scatter of p-1
// steps, then an allgather of p-1 steps; every rank sends 2(p-1) messages of n/p floats.
// Each step sends right and receives left in one MPI_Sendrecv: a blocking MPI_Send first
// would wait, above the eager limit, for a receive its neighbour never reaches (every rank
// is sending), the classic deadlock (MPI 4.0 §3.5, "unsafe" programs).
#include <stdlib.h>

#include "student_ring_mpi.h"

// chunk c of p over n elements: [lo(c), lo(c+1)), sizes differing by at most one
static size_t lo(size_t n, int p, int c) {
    return (size_t)c * (n / (size_t)p) + ((size_t)c < n % (size_t)p ? (size_t)c : n % (size_t)p);
}

void student_ring_mpi(float *x, size_t n, MPI_Comm comm) {
    int r, p;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &p);
    if (p == 1) return;
    int right = (r + 1) % p, left = (r - 1 + p) % p;
    float *tmp = malloc((n / (size_t)p + 1) * sizeof(float));
    // reduce-scatter: in step s rank r sends chunk r-s-1 and adds chunk r-s-2 from the left
    for (int s = 0; s < p - 1; s++) {
        int cs = (r - s - 1 + p) % p, cr = (r - s - 2 + 2 * p) % p;
        size_t rlo = lo(n, p, cr), rn = lo(n, p, cr + 1) - rlo;
        MPI_Sendrecv(x + lo(n, p, cs), (int)(lo(n, p, cs + 1) - lo(n, p, cs)), MPI_FLOAT, right,
                     0, tmp, (int)rn, MPI_FLOAT, left, 0, comm, MPI_STATUS_IGNORE);
        for (size_t i = 0; i < rn; i++) x[rlo + i] += tmp[i];
    }
    // allgather: rank r holds chunk r summed; pass the sums around, copying in place
    for (int t = 0; t < p - 1; t++) {
        int cs = (r - t + p) % p, cr = (r - t - 1 + p) % p;
        MPI_Sendrecv(x + lo(n, p, cs), (int)(lo(n, p, cs + 1) - lo(n, p, cs)), MPI_FLOAT, right,
                     1, x + lo(n, p, cr), (int)(lo(n, p, cr + 1) - lo(n, p, cr)), MPI_FLOAT, left,
                     1, comm, MPI_STATUS_IGNORE);
    }
    free(tmp);
}
