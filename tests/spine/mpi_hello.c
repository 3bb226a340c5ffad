// mpi_hello.c — the plumbing check of the two worlds: the smallest MPI program that
// exercises what the trainer needs (init, rank/size, an in-place float allreduce, finalize),
// compiled against Open MPI (an executable for mpirun) and against SimGrid's SMPI (a shared
// object for smpirun -no-privatize). Not a test of MPI itself: it proves the build and the
// launchers work. Prints "hello sum <S> size <P>" on rank 0; exits 1 if the sum is wrong.
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    float v = (float)(rank + 1);  // sum over ranks = P(P+1)/2, exact in fp32
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    int ok = v == (float)(size * (size + 1) / 2);
    if (rank == 0) printf("hello sum %g size %d %s\n", v, size, ok ? "ok" : "WRONG");
    MPI_Finalize();
    return ok ? 0 : 1;
}
