// subject_lane.c — a schedule's lane over the split grader's channel (subject_lane.h).
#include "subject_lane.h"

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
