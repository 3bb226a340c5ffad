// ping.c — the timing probe of the generated platforms: one message of BYTES bytes from rank
// a to rank b for each "a:b" pair given, all pairs started together after a barrier; each
// receiver prints "pair a b time T" (seconds from the barrier to the end of its receive).
// Run under smpirun on a platform from sim/platform_write.c, the times give the bandwidth
// that SimGrid actually grants (tests/sim/platform_tool.c compares them with the cluster's
// figures). Not a benchmark of MPI: a rank takes part in at most one pair.
//   usage: ping BYTES a:b [a:b ...]
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bytes = argc > 1 ? atol(argv[1]) : 0;
    int peer = -1, sender = 0, bad = bytes <= 0 || bytes > (1L << 30) || argc < 3;
    for (int i = 2; i < argc && !bad; i++) {
        int a, b;
        if (sscanf(argv[i], "%d:%d", &a, &b) != 2 || a < 0 || b < 0 || a >= size || b >= size ||
            a == b) {
            bad = 1;
        } else if (rank == a || rank == b) {
            if (peer >= 0) bad = 1;  // one pair per rank
            peer = rank == a ? b : a;
            sender = rank == a;
        }
    }
    if (bad) {
        if (rank == 0) fprintf(stderr, "usage: ping BYTES(1..2^30) a:b ... (distinct ranks < %d)\n", size);
        MPI_Finalize();
        return 2;
    }
    char *buf = peer >= 0 ? calloc((size_t)bytes, 1) : NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (peer >= 0 && sender) MPI_Send(buf, (int)bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
    if (peer >= 0 && !sender) {
        MPI_Recv(buf, (int)bytes, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("pair %d %d time %.12g\n", peer, rank, MPI_Wtime() - t0);
        fflush(stdout);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
