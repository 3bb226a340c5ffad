// coll_run.c — the core runner (coll_run.h): one lane of a schedule, round by round.
//
//   for each round:  post every receive, then every send   (MPI_Irecv, MPI_Isend)
//                    wait until all of them have completed (MPI_Waitall)
//                    add what arrived into the buffer      (dev->add: the γ term)
//
// A ring allreduce is exactly that over the 2(P-1) rounds that dt_sched_ring lists
// (coll_sched.c). Receives go first so that a message finds its buffer waiting. A message
// to add lands in tmp, since the buffer still holds this rank's own values; a message to
// copy lands in place. Layers (coll_run.h) hook in where an allreduce needs more than this.
// Not here: which messages an algorithm sends (coll_sched.c), polling many lanes and
// requests at once (coll_request.c).
#include <string.h>

#include "coll_run.h"

int dt_run_recv_to_tmp(const dt_run *x, const dt_op *op) {
    return op->kind == DT_OP_RECV_ADD || op->kind == DT_OP_RECV_NOTE ||
           (op->kind == DT_OP_RECV_COPY && x->copy_via_tmp);
}

static int is_recv(const dt_op *op) {
    return op->kind == DT_OP_RECV_ADD || op->kind == DT_OP_RECV_COPY ||
           op->kind == DT_OP_RECV_NOTE;
}

// y += x on count elements: the local reduction (float32 on the device, float64 on the host).
static void add(dt_run *x, char *y, const char *src, size_t n) {
    if (x->esize == sizeof(double)) {
        double *yy = (double *)y;
        const double *xx = (const double *)src;
        for (size_t i = 0; i < n; i++) yy[i] += xx[i];
    } else if (x->dev) {
        x->dev->add(x->dev, (float *)y, (const float *)src, n);
    } else {
        float *yy = (float *)y;
        const float *xx = (const float *)src;
        for (size_t i = 0; i < n; i++) yy[i] += xx[i];
    }
}

// Post one op's message(s) from or to p; returns the requests used.
static int post_op(dt_run *x, const dt_op *op, char *p, MPI_Request *q) {
    int nq = 0;
    MPI_Comm comm = x->comms[op->comm];
    int peer = op->peer;
    if (x->first && op->comm != DT_COMM_ALL)  // one_comm: the sub-group's rank in the whole
        comm = x->comms[DT_COMM_ALL], peer = x->first[op->comm] + peer * x->stride[op->comm];
    for (size_t done = 0; done < op->count; done += DT_MSG_MAX) {
        int c = (int)(op->count - done < DT_MSG_MAX ? op->count - done : DT_MSG_MAX);
        char *pp = p + done * x->wsize;
        if (op->kind == DT_OP_NATIVE) x->hooks->post_other(x, op, pp, c, &q[nq++]);
        else if (is_recv(op)) MPI_Irecv(pp, c, x->type, peer, x->tag, comm, &q[nq++]);
        else MPI_Isend(pp, c, x->type, peer, x->tag, comm, &q[nq++]);
        if (x->sent && op->kind == DT_OP_SEND) *x->sent += (uint64_t)c * x->wsize;
    }
    return nq;
}

int dt_run_post(dt_run *x) {
    const dt_lane *l = x->lane;
    int first = l->round_start[x->cur], end = l->round_start[x->cur + 1];
    if (x->hooks && x->hooks->ready && !x->hooks->ready(x)) return 0;
    if (x->hooks && x->hooks->before_post) x->hooks->before_post(x);
    int nq = 0;
    size_t tpos = 0, spos = 0;  // elements of tmp and stage handed out so far
    for (int i = first; i < end; i++) {  // the receives
        const dt_op *op = &l->ops[i];
        if (!is_recv(op)) continue;
        char *p = x->buf + op->off * x->esize;
        if (dt_run_recv_to_tmp(x, op)) p = x->tmp + tpos * x->wsize, tpos += op->count;
        nq += post_op(x, op, p, x->reqs + nq);
    }
    for (int i = first; i < end; i++) {  // then the sends
        const dt_op *op = &l->ops[i];
        if (op->kind != DT_OP_SEND && op->kind != DT_OP_NATIVE) continue;
        char *p = x->buf + op->off * x->esize;
        if (x->stage && op->kind == DT_OP_SEND) p = x->stage + spos * x->wsize, spos += op->count;
        nq += post_op(x, op, p, x->reqs + nq);
    }
    for (int i = nq; i < x->max_reqs; i++) x->reqs[i] = MPI_REQUEST_NULL;
    x->posted = 1;
    return 1;
}

void dt_run_finish(dt_run *x) {
    const dt_lane *l = x->lane;
    size_t tpos = 0;
    for (int i = l->round_start[x->cur]; i < l->round_start[x->cur + 1]; i++) {
        const dt_op *op = &l->ops[i];
        if (!dt_run_recv_to_tmp(x, op)) continue;
        char *src = x->tmp + tpos * x->wsize, *dst = x->buf + op->off * x->esize;
        tpos += op->count;
        if (op->kind == DT_OP_RECV_NOTE) continue;  // arrived: that was all
        if (x->hooks && x->hooks->land) x->hooks->land(x, op, dst, src);
        else add(x, dst, src, op->count);  // (a plain RECV_COPY never lands in tmp)
    }
    if (x->hooks && x->hooks->after_round) x->hooks->after_round(x);
    x->posted = 0;
    x->cur++;
}

static int pending(const dt_run *x) {  // any message of the round still in flight?
    for (int i = 0; i < x->max_reqs; i++)
        if (x->reqs[i] != MPI_REQUEST_NULL) return 1;
    return 0;
}

void dt_run_all(dt_run *x) {
    while (x->cur < x->lane->n_rounds) {
        if (!x->posted) {
            int posted = dt_run_post(x);
            DT_ASSERT(posted);  // (callers check that no extension makes it wait)
        }
        if (pending(x)) MPI_Waitall(x->max_reqs, x->reqs, MPI_STATUSES_IGNORE);
        dt_run_finish(x);
    }
}
