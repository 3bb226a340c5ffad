// subject04_mpi.c — the run of lesson 04's ring_mpi.c (part 1) under mpirun, recording
// (lessons/kit/subject.h): grader_mpi.c's own sequence of calls (the same counts, the same
// inputs from the seed given as --seed, the same watchdog and profiling-interface counts),
// with its verdicts kept quiet, and after each call of student_ring_mpi the buffer, the
// counts and what each send carried written to this rank's record. The grader then replays the records (remote.c) and
// judges them in a process of its own. student_ring_mpi is wrapped at link time
// (-Wl,--wrap=student_ring_mpi), so that grader_mpi.c runs unchanged.
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/grade.h"
#include "../kit/subject.h"
#include "student_ring_mpi.h"
#include "subject04.h"

int grade_raw(grade_t *g, int r, int P, unsigned secs);
void __real_student_ring_mpi(float *x, size_t n, MPI_Comm comm);

void __wrap_student_ring_mpi(float *x, size_t n, MPI_Comm comm);
void __wrap_student_ring_mpi(float *x, size_t n, MPI_Comm comm) {
    __real_student_ring_mpi(x, n, comm);
    int r;
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    subject_buf b = {0};
    sb_u64(&b, n);
    sb_put(&b, x, n * sizeof(float));
    sb_u64(&b, (uint64_t)lesson04_sent_msgs);
    sb_u64(&b, (uint64_t)lesson04_sent_max);
    sb_u64(&b, (uint64_t)lesson04_n_sent);
    for (int k = 0; k < lesson04_n_sent; k++) {
        size_t kept = lesson04_sent[k].kept;
        sb_u64(&b, lesson04_sent[k].count), sb_u64(&b, kept);
        if (kept != LESSON04_NOT_FLOAT) sb_put(&b, lesson04_sent[k].v, kept * sizeof(float));
    }
    record_put(r, SUBJECT04_RING_MPI, &b);
    sb_free(&b);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int r, P;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    unsigned secs = 3;
    grade_t g = {0, 0, 1, 0, 0};  // quiet: this process prints no verdict
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--raw")) secs = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seed")) g.seed = strtoull(argv[i + 1], NULL, 10);
    }
    grade_raw(&g, r, P, secs);
    MPI_Finalize();
    return 0;
}
