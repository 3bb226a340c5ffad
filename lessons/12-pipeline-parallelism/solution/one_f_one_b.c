// one_f_one_b.c — the reference 1F1B schedule (the contract: one_f_one_b.h).
// Stage s runs w = min(p - s - 1, m) forwards first: the last stage none (its backward of
// micro-batch j can start as soon as its forward of j is done), stage 0 p - 1 (enough for
// micro-batch 0 to reach the last stage). Then m - w rounds of one forward (of micro-batch
// w + i) and one backward (of i), then the w backwards left. At any time the stage holds
// at most w + 1 <= p - s micro-batches (Narayanan et al. 2021 §2.2.1).
#include "one_f_one_b.h"

static void put(pipe_op *op, int bwd, int micro, int p, int s) {
    op->bwd = bwd;
    op->micro = micro;
    op->send_to = bwd ? (s > 0 ? s - 1 : -1) : (s < p - 1 ? s + 1 : -1);
}

int one_f_one_b(int p, int m, int s, pipe_op *ops) {
    int warm = p - s - 1, n = 0;
    if (warm > m) warm = m;
    for (int i = 0; i < warm; i++) put(&ops[n++], 0, i, p, s);
    for (int i = 0; i < m - warm; i++) {
        put(&ops[n++], 0, warm + i, p, s);
        put(&ops[n++], 1, i, p, s);
    }
    for (int i = m - warm; i < m; i++) put(&ops[n++], 1, i, p, s);
    return n;
}
