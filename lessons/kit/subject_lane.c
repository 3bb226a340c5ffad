// subject_lane.c — a schedule's lane over the split grader's channel (subject_lane.h).
#include "subject_lane.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void lane_send(subject_buf *reply, const dt_lane *l) {
    sb_u64(reply, (uint64_t)(l->n_rounds > 0 ? l->n_rounds : 0));
    for (int k = 0; k < l->n_rounds; k++) {
        int lo = l->round_start[k], hi = l->round_start[k + 1];
        sb_u64(reply, (uint64_t)(hi > lo ? hi - lo : 0));
        for (int j = lo; j < hi; j++) {
            const dt_op *o = &l->ops[j];
            subject_lane_op w = {o->kind, o->comm, o->peer, o->off, o->count};
            sb_put(reply, &w, sizeof w);
        }
    }
}

void lane_receive(subject_buf *rep, dt_lane *l, const char *what) {
    uint64_t rounds = sb_get_u64(rep), total = 0;
    if (rounds > SUBJECT_LANE_MAX_OPS) subject_malformed(what);
    for (uint64_t k = 0; k < rounds && !rep->bad; k++) {
        uint64_t ops = sb_get_u64(rep);
        if ((total += ops) > SUBJECT_LANE_MAX_OPS) subject_malformed(what);
        dt_lane_round(l);
        for (uint64_t j = 0; j < ops && !rep->bad; j++) {
            subject_lane_op o;
            sb_get(rep, &o, sizeof o);
            dt_lane_op(l, o.kind, o.comm, o.peer, (size_t)o.off, (size_t)o.count);
        }
    }
    if (rep->bad || rep->at != rep->len) subject_malformed(what);
}

void lane_release(dt_lane *l) {
    free(l->ops), free(l->round_start), free(l->key), free(l->delay);
    memset(l, 0, sizeof *l);
}

void lane_serve(subject_buf *req, subject_buf *reply, lane_builder build) {
    uint64_t a[5];
    sb_get(req, a, sizeof a);
    if (req->bad) exit(2);
    dt_lane l = {0};
    build(&l, (int)a[0], (int)a[1], (int)a[2], (size_t)a[3], (size_t)a[4]);
    lane_send(reply, &l);
    lane_release(&l);
}

void lane_ask(int tag, const char *name, dt_lane *l, int comm, int r, int p, size_t off,
              size_t n) {
    subject_buf req = {0}, rep = {0};
    uint64_t args[5] = {(uint64_t)comm, (uint64_t)r, (uint64_t)p, off, n};
    sb_put(&req, args, sizeof args);
    char what[200];  // the call, as the judge names it if the subject crashes or hangs
    snprintf(what, sizeof what, "%s(comm=%d, r=%d, p=%d, off=%zu, n=%zu)", name, comm, r, p,
             off, n);
    subject_call(tag, &req, &rep, what);
    lane_receive(&rep, l, what);
    sb_free(&req), sb_free(&rep);
}
