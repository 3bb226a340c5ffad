// preload_setup.c — what libdtcoll_mpi.so costs an MPI program beside its allreduces, timed by
// a plain MPI program that knows nothing of dtlab (bench/preload_setup.sh runs it without the
// library and with it, per algorithm, and writes bench/PRELOAD-SETUP.md):
//   setup    a new communicator's first allreduce: MPI_Comm_dup, one MPI_Allreduce of 1024
//            floats on it, MPI_Comm_free (the library builds its state at that allreduce);
//   warm     one MPI_Allreduce of 1024 floats on a communicator already used;
//   barrier  MPI_Barrier alone (nothing of the library's in flight: what its interposer costs);
//   overlap  MPI_Iallreduce of 65,536 floats, MPI_Barrier, MPI_Wait: at MPI_THREAD_MULTIPLE the
//            library's progress thread advances the allreduce during the barrier.
// Each figure is the median over ROUNDS rounds of the slowest rank's microseconds, after a
// barrier (so that the ranks start together). Output: one line "name median_us" per figure.
// usage: preload_setup [ROUNDS [multiple]]   (default 400)
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

enum { SMALL = 1024, LARGE = 65536 };

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 400;
    int multiple = argc > 2 && !strcmp(argv[2], "multiple"), got, rank;
    if (rounds < 1) {
        fprintf(stderr, "preload_setup: ROUNDS %s: expected a positive integer\n", argv[1]);
        return 2;
    }
    MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &got);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    float *x = calloc(LARGE, sizeof *x), *y = calloc(LARGE, sizeof *y);
    double *t = malloc((size_t)rounds * sizeof *t);
    const char *names[] = {"setup", "warm", "barrier", "overlap"};
    MPI_Comm warm;
    MPI_Comm_dup(MPI_COMM_WORLD, &warm);
    MPI_Allreduce(x, y, SMALL, MPI_FLOAT, MPI_SUM, warm);
    for (int f = 0; f < 4; f++) {
        for (int i = 0; i < rounds; i++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (f == 0) {
                MPI_Comm c;
                MPI_Comm_dup(MPI_COMM_WORLD, &c);
                MPI_Allreduce(x, y, SMALL, MPI_FLOAT, MPI_SUM, c);
                MPI_Comm_free(&c);
            } else if (f == 1) {
                MPI_Allreduce(x, y, SMALL, MPI_FLOAT, MPI_SUM, warm);
            } else if (f == 2) {
                MPI_Barrier(warm);
            } else {
                MPI_Request r;
                MPI_Iallreduce(x, y, LARGE, MPI_FLOAT, MPI_SUM, warm, &r);
                MPI_Barrier(MPI_COMM_WORLD);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            }
            double dt = MPI_Wtime() - t0, most;
            MPI_Allreduce(&dt, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            t[i] = most * 1e6;
        }
        if (!rank) printf("%s %.1f\n", names[f], median(t, rounds));
    }
    MPI_Comm_free(&warm);
    free(x), free(y), free(t);
    MPI_Finalize();
    return 0;
}
