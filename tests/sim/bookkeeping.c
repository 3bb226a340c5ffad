// bookkeeping.c — the simulated time of one SMPI collective of a few bytes, the kind dtsim's
// rank program keeps its books with (the barrier before each step, the loss's allreduce, the
// results' reduce). All ranks call it first thing after MPI_Init; rank 0 prints
// "collective NAME P ranks start S end E" (the latest start and the latest finish, seconds).
// tests/sim/bookkeeping.sh runs it under dtsim's own SimGrid settings and compares E - S with
// the depth of a binomial tree.
//   usage: bookkeeping barrier|allreduce|reduce|bcast
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *what = argc > 1 ? argv[1] : "";
    float x = (float)rank, y = 0.0f;
    double t[2] = {MPI_Wtime(), 0};
    if (!strcmp(what, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
    else if (!strcmp(what, "allreduce")) MPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(what, "reduce")) MPI_Reduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, 0, MPI_COMM_WORLD);
    else if (!strcmp(what, "bcast")) MPI_Bcast(&x, 1, MPI_FLOAT, 0, MPI_COMM_WORLD);
    else {
        if (rank == 0) fprintf(stderr, "usage: bookkeeping barrier|allreduce|reduce|bcast\n");
        MPI_Finalize();
        return 2;
    }
    t[1] = MPI_Wtime();
    double mx[2];
    MPI_Reduce(t, mx, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("collective %s P %d ranks start %.9e end %.9e\n", what, size, mx[0], mx[1]);
    MPI_Finalize();
    return 0;
}
