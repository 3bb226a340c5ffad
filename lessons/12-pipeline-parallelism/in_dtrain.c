// in_dtrain.c — lesson 12's schedule inside the real dtrain. Linked into a dtrain with
// -Wl,--wrap=dt_pipe_build (lesson.cmake), so that `dtrain --pp P` (1F1B, the default
// --pp-schedule) runs the stages in the order one_f_one_b gives (nn/train_pipe.c: each
// rank runs its stage's ops in order, sends its activations and gradients point to point,
// recomputes a micro-batch's forward where a later forward ran). GPipe and the interleaved
// schedule stay the library's.
// Before any rank runs it, the schedule is checked whole as the grader checks it (each op
// once, no deadlock: dt_pipe_run): a schedule that would leave the ranks waiting forever
// is refused with exit 2 and the reason, not run into a hang.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "one_f_one_b.h"
#include "pipe/pipe_sched.h"

int __real_dt_pipe_build(dt_pipe_sched *s, dt_pipe_kind k, int p, int m, int v, dt_error *err);
int __wrap_dt_pipe_build(dt_pipe_sched *s, dt_pipe_kind k, int p, int m, int v, dt_error *err);
int __wrap_dt_pipe_build(dt_pipe_sched *s, dt_pipe_kind k, int p, int m, int v, dt_error *err) {
    if (k != DT_PIPE_1F1B || v != 1) return __real_dt_pipe_build(s, k, p, m, v, err);
    if (__real_dt_pipe_build(s, k, p, m, v, err)) return -1;  // p and m checked, room made
    size_t n2 = 2 * (size_t)m;
    pipe_op *ops = calloc(n2 + 4 * (size_t)p + 64, sizeof *ops);  // room for a long warm-up
    for (int st = 0; st < p; st++) {
        int n = one_f_one_b(p, m, st, ops);
        if (n == 0) {  // the skeleton
            free(ops), dt_pipe_free(s);
            return dt_fail(err, DT_EXIT_USAGE, "lesson 12's one_f_one_b returned no ops: write "
                           "lessons/12-pipeline-parallelism/one_f_one_b.c first");
        }
        if (n != (int)n2) {
            free(ops), dt_pipe_free(s);
            return dt_fail(err, DT_EXIT_USAGE, "lesson 12's one_f_one_b(p = %d, m = %d, s = "
                           "%d) returned %d ops, expected %zu", p, m, st, n, n2);
        }
        for (size_t i = 0; i < n2; i++)
            s->ops[s->start[st] + (int)i] = (dt_pipe_op){ops[i].bwd, 0, ops[i].micro};
    }
    free(ops);
    dt_pipe_cost c = {1, 2, 0, 0};
    dt_pipe_price pr;
    char why[200];
    if (dt_pipe_run(s, &c, 1, &pr, NULL, why, sizeof why)) {
        dt_pipe_free(s);
        return dt_fail(err, DT_EXIT_USAGE, "lesson 12's one_f_one_b (p = %d, m = %d) is not "
                       "run: %s", p, m, why);
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "dtrain: --pp %d runs lesson 12's one_f_one_b (one_f_one_b.c) over %d "
                "micro-batches\n", p, m);
    return 0;
}
