// registry.c — dtlab's registry of allreduce algorithms (nn/coll/coll_algos.c) compiled with
// one more entry, "student" (student_ring.h), and that entry's builder. Linked into the
// grader, and into the lesson's dtrain and dtsim (build/lessons/04/<variant>/), where this
// copy of the registry overrides the library's (whose functions are weak): --algo student
// then runs student_ring wherever --algo ring runs dt_sched_ring. Provided by the lesson.
#define DT_ALGO_EXTRA "student_ring.h"
#include "coll/coll_algos.c"

// the ring's rounds keyed as dt_sched_ring's, so that dtsim coarsens them alike
#include "../kit/ring_keys.h"

void build_student(const dt_build_ctx *x, size_t n, int quant, dt_sched *s) {
    (void)quant;  // check_student refuses fp16 on the wire
    dt_lane *l = &s->lanes[0];
    int first = l->n_rounds, p = x->size[DT_COMM_ALL];
    student_ring(l, DT_COMM_ALL, x->rank[DT_COMM_ALL], p, 0, n);
    dt_lane_close(l);
    lesson_tag_ring_steps(l, first, p);
}

#ifdef LESSON04_PROGRAM
// Does student_ring give rank r of p any message for a buffer of p elements (every chunk
// holds one)? The skeleton's empty ring gives none: an allreduce that moves nothing, which
// dtsim would time as free and dtrain would run as P replicas that never average.
static int ring_sends_something(int r, int p) {
    dt_sched s;
    memset(&s, 0, sizeof s);
    s.n_lanes = 1;
    student_ring(&s.lanes[0], DT_COMM_ALL, r, p, 0, (size_t)p);
    int n_ops = s.lanes[0].n_ops;
    dt_sched_free(&s);
    return n_ops > 0;
}
#endif

int check_student(const dt_coll_opts *o, int p, dt_error *err) {
    if (o->wire_f16)
        return dt_fail(err, DT_EXIT_USAGE, "allreduce: --algo student sends fp32 only (fp16 on "
                       "the wire is beyond lesson 04; drop --fp16-grads, or use --algo ring)");
#ifdef LESSON04_PROGRAM  // dtrain and dtsim (lesson.cmake); the grader grades an empty ring
    if (p >= 2 && (!ring_sends_something(0, p) || !ring_sends_something(p - 1, p)))
        return dt_fail(err, DT_EXIT_USAGE, "allreduce: --algo student: the student ring "
                       "schedules no messages on %d ranks (rank %d sends and receives nothing): "
                       "write lessons/04-ring-allreduce/ring.c first (lessons/grade 04 grades it)",
                       p, ring_sends_something(0, p) ? p - 1 : 0);
#else
    (void)p;
#endif
    return 0;
}

int student_in_auto(const dt_coll_opts *o, int p) {
    (void)o, (void)p;
    return 0;
}
