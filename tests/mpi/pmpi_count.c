// pmpi_count.c — a PMPI byte counter (the MPI standard's profiling interface, MPI-3.1 §14.2),
// LD_PRELOADed into a program: counts the bytes every point-to-point send of the program
// carries (MPI_Send, MPI_Isend, MPI_Sendrecv; dtlab's allreduce library sends with
// MPI_Isend, nn/coll/coll_run.c) and at MPI_Finalize prints the sum over the ranks once, on
// rank 0: "pmpi_count: <bytes> bytes sent by <P> ranks". The MPI library's own collectives
// (MPI_Bcast, MPI_Allreduce) call its internal layers, not MPI_Send, so they are not
// counted. An independent witness of the communication volume (tests/mpi/shard_cases.sh).
#include <mpi.h>
#include <stdio.h>

static unsigned long long sent;  // (a test tool, one process per rank)

static void count(int n, MPI_Datatype t) {
    int size = 0;
    PMPI_Type_size(t, &size);
    if (n > 0 && size > 0) sent += (unsigned long long)n * (unsigned long long)size;
}

int MPI_Send(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {
    count(n, t);
    return PMPI_Send(buf, n, t, dest, tag, comm);
}

int MPI_Isend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
              MPI_Request *req) {
    count(n, t);
    return PMPI_Isend(buf, n, t, dest, tag, comm, req);
}

int MPI_Sendrecv(const void *sbuf, int sn, MPI_Datatype st, int dest, int stag, void *rbuf,
                 int rn, MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Status *s) {
    count(sn, st);
    return PMPI_Sendrecv(sbuf, sn, st, dest, stag, rbuf, rn, rt, src, rtag, comm, s);
}

int MPI_Finalize(void) {
    unsigned long long total = 0;
    int rank = 0, size = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    PMPI_Reduce(&sent, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("pmpi_count: %llu bytes sent by %d ranks\n", total, size);
        fflush(stdout);
    }
    return PMPI_Finalize();
}
