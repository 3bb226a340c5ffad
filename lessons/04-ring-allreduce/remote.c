// remote.c — lesson 04's grader asks the student's code instead of calling it (the judge's
// side of the split grader, lessons/kit/subject.h): the grader is linked with these two
// functions in place of ring.c and ring_mpi.c, so that the process that checks and prints
// verdicts never holds the student's code.
//   student_ring      asks the subject (subject04.c: ring.c and a server, another process)
//                     for rank r's schedule, and rebuilds it here with dtlab's own
//                     dt_lane_round / dt_lane_op: a schedule is data, which the library's
//                     runner (and the checks) then run in this process.
//   student_ring_mpi  reads back what the recording run of ring_mpi.c returned on this rank
//                     (subject04_mpi.c under mpirun, before this run): the buffer after
//                     each call, and the sends the profiling interface counted there (and
//                     what each carried).
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../kit/subject.h"
#include "../kit/subject_lane.h"
#include "student_ring.h"
#include "student_ring_mpi.h"
#include "subject04.h"


void student_ring(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    lane_ask(SUBJECT04_RING, "student_ring", l, comm, r, p, off, n);
}

void student_ring_mpi(float *x, size_t n, MPI_Comm comm) {
    int r;
    MPI_Comm_rank(comm, &r);
    char what[120];
    snprintf(what, sizeof what, "student_ring_mpi(n=%zu) on rank %d", n, r);
    subject_buf b = {0};
    if (replay_next(r, SUBJECT04_RING_MPI, &b)) replay_missing(what, r == 0);
    if (sb_get_u64(&b) != n) subject_malformed(what);
    sb_get(&b, x, n * sizeof(float));
    lesson04_sent_msgs = (long)sb_get_u64(&b);
    lesson04_sent_max = (size_t)sb_get_u64(&b);
    uint64_t sent = sb_get_u64(&b);
    if (sent > LESSON04_MAX_MSGS) subject_malformed(what);
    for (uint64_t k = 0; k < sent && !b.bad; k++) {
        lesson04_msg *m = &lesson04_sent[lesson04_n_sent];
        m->count = (size_t)sb_get_u64(&b), m->kept = (size_t)sb_get_u64(&b);
        int floats = m->kept != LESSON04_NOT_FLOAT;
        if (floats && (m->kept > LESSON04_KEPT || m->kept > m->count)) subject_malformed(what);
        m->v = malloc(((floats ? m->kept : 0) + 1) * sizeof(float));
        if (floats) sb_get(&b, m->v, m->kept * sizeof(float));
        lesson04_n_sent++;
    }
    if (b.bad || b.at != b.len) subject_malformed(what);
    sb_free(&b);
}
