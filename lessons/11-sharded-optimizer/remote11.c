// remote11.c — lesson 11's grader asks the student's code instead of calling it (the judge's
// side of the split grader, lessons/kit/subject.h): linked in place of sharded.c, so that
// the process that checks and prints verdicts never holds the student's code. The student's
// state lives in its subject (subject11.c); here each shard_state is known by an id.
//   shard_state_init  sends the net's size and the rank; the momentum is allocated by a
//       callback on this process's device (the grader counts its bytes); lo and hi come back.
//   sharded_step  sends the parameter table, the parameters and this rank's gradient; each
//       collective the student's step makes (CB11_COLL) runs here, with dtlab's library, on
//       this net's buffers (the subject's bytes copied in first, the result sent back) — so
//       under SMPI its simulated time is the step's; then the parameters and the gradient
//       come back.
//   shard_state_free  frees through the same device.
// Slot = the rank: under SMPI the ranks share this process, and a rank's collective waits
// for the others' steps, which their own subjects run meanwhile.
#include <stdio.h>
#include <string.h>

#include "../kit/subject.h"
#include "sharded.h"
#include "subject11.h"

#define MAX_PTRS 64
typedef struct {  // the call in progress (one per rank: under SMPI a call of each at once)
    dt_device *dev;
    dt_net *net;
    dt_coll *coll;
    void *ptr[MAX_PTRS];  // id - 1 -> what the device handed out
    int n_ptr;
    dt_coll_req *req[MAX_PTRS];
    int n_req;
    const char *what;
} call11;
static call11 calls[SUBJECT_MAX_SLOTS];  // by rank
// a callback's call is its slot's (subject_callback_slot): a collective lets the other SMPI
// ranks run meanwhile, each in a call of its own

static int slot_of(dt_coll *coll, int rank) {
    int r = coll ? dt_coll_rank(coll) : rank;
    return r >= 0 && r < SUBJECT_MAX_SLOTS ? r : 0;
}

static void cb_alloc(subject_buf *req, subject_buf *rep) {
    call11 *me = &calls[subject_callback_slot()];
    uint64_t bytes = sb_get_u64(req);
    if (me->n_ptr == MAX_PTRS || bytes > ((uint64_t)1 << 36)) subject_malformed(me->what);
    me->ptr[me->n_ptr++] = me->dev->alloc(me->dev, (size_t)bytes);
    sb_u64(rep, (uint64_t)me->n_ptr);
}
static void cb_free(subject_buf *req, subject_buf *rep) {
    call11 *me = &calls[subject_callback_slot()];
    (void)rep;
    uint64_t id = sb_get_u64(req);
    if (id == 0 || id > (uint64_t)me->n_ptr || !me->ptr[id - 1]) subject_malformed(me->what);
    me->dev->free(me->dev, me->ptr[id - 1]);
    me->ptr[id - 1] = NULL;
}
// a collective on this net's buffer: [kind, buffer, count, dtype], then the subject's
// `count` elements (float); the reply: the return value (or request id), then the buffer
static void cb_coll(subject_buf *req, subject_buf *rep) {
    call11 *me = &calls[subject_callback_slot()];
    uint64_t kind = sb_get_u64(req), which = sb_get_u64(req), count = sb_get_u64(req);
    uint64_t dtype = sb_get_u64(req);
    dt_net *net = me->net;
    size_t len = which == BUF11_GRADS ? net->n_trainable : net->n_total;
    float *buf = which == BUF11_GRADS ? net->grads : net->params;
    if (req->bad || which > BUF11_PARAMS || count > len || dtype != DT_F32 ||
        req->len - req->at != count * sizeof(float))
        subject_malformed(me->what);
    sb_get(req, buf, count * sizeof(float));
    dt_error err = {0};
    int64_t rc = 0;
    switch (kind) {
    case COLL11_REDUCE_SCATTER:
        rc = dt_reduce_scatter(me->coll, buf, count, NULL, DT_F32, &err);
        break;
    case COLL11_ALLGATHER: rc = dt_allgather(me->coll, buf, count, NULL, DT_F32, &err); break;
    case COLL11_REDUCE_SCATTER_START:
    case COLL11_ALLGATHER_START: {
        if (me->n_req == MAX_PTRS) subject_malformed(me->what);
        dt_coll_req *q = kind == COLL11_ALLGATHER_START
                             ? dt_allgather_start(me->coll, buf, count, NULL, DT_F32, &err)
                             : dt_reduce_scatter_start(me->coll, buf, count, NULL, DT_F32, &err);
        if (q) me->req[me->n_req++] = q;
        rc = q ? me->n_req : 0;
        break;
    }
    default: subject_malformed(me->what);
    }
    sb_u64(rep, (uint64_t)rc);
    sb_put(rep, buf, count * sizeof(float));  // (a started one: waited for by CB11_WAIT)
}
// wait / progress a started collective: then the whole buffer it ran on comes back
static void cb_wait(subject_buf *req, subject_buf *rep) {
    call11 *me = &calls[subject_callback_slot()];
    uint64_t id = sb_get_u64(req), which = sb_get_u64(req);
    if (id == 0 || id > (uint64_t)me->n_req || which > BUF11_PARAMS) subject_malformed(me->what);
    dt_allreduce_wait(me->req[id - 1]);
    size_t len = which == BUF11_GRADS ? me->net->n_trainable : me->net->n_total;
    sb_put(rep, which == BUF11_GRADS ? me->net->grads : me->net->params, len * sizeof(float));
}
static void cb_progress(subject_buf *req, subject_buf *rep) {
    call11 *me = &calls[subject_callback_slot()];
    uint64_t id = sb_get_u64(req);
    if (id == 0 || id > (uint64_t)me->n_req) subject_malformed(me->what);
    sb_u64(rep, (uint64_t)dt_allreduce_progress(me->req[id - 1]));
}

static const subject_handler callbacks[CB11_COUNT] = {cb_alloc, cb_free, cb_coll, cb_wait,
                                                      cb_progress};

// A state is known to its subject by its address here; and here, by the slot whose
// subject holds it (shard_state_free goes to that one: under SMPI another rank's subject
// may be in the middle of a call)
static uint64_t state_id(const shard_state *s, int slot) {
    (void)slot;
    return (uint64_t)(uintptr_t)s;
}
#define MAX_STATES 1024
static struct {
    const shard_state *s;
    int slot;
} owners[MAX_STATES];
static void own(const shard_state *s, int slot) {
    for (int i = 0; i < MAX_STATES; i++)
        if (owners[i].s == s || !owners[i].s) {
            owners[i].s = s, owners[i].slot = slot;
            return;
        }
}
static int owner(const shard_state *s) {
    for (int i = 0; i < MAX_STATES; i++)
        if (owners[i].s == s) return owners[i].slot;
    return 0;
}

static void ask(int slot, uint32_t fn, subject_buf *req, subject_buf *rep, const char *what) {
    calls[slot].what = what;
    subject_call_cb(slot, fn, req, rep, what, callbacks, CB11_COUNT);
}

void shard_state_init(shard_state *s, const dt_net *net, dt_device *dev, int rank, int size,
                      float momentum, float weight_decay) {
    int slot = slot_of(NULL, rank);
    call11 *c = &calls[slot];
    c->dev = dev, c->net = (dt_net *)net;
    subject_buf req = {0}, rep = {0};
    sb_u64(&req, state_id(s, slot)), sb_u64(&req, net->n_trainable);
    sb_u64(&req, (uint64_t)rank), sb_u64(&req, (uint64_t)size);
    sb_put(&req, &momentum, sizeof momentum), sb_put(&req, &weight_decay, sizeof weight_decay);
    char what[96];
    snprintf(what, sizeof what, "shard_state_init(rank %d of %d)", rank, size);
    own(s, slot);
    ask(slot, SUBJECT11_INIT, &req, &rep, what);
    s->lo = (size_t)sb_get_u64(&rep), s->hi = (size_t)sb_get_u64(&rep);
    uint64_t v = sb_get_u64(&rep);
    sb_get(&rep, &s->momentum, sizeof s->momentum);
    sb_get(&rep, &s->weight_decay, sizeof s->weight_decay);
    if (rep.bad || rep.at != rep.len || v > (uint64_t)c->n_ptr) subject_malformed(what);
    s->velocity = v ? c->ptr[v - 1] : NULL;
    s->dev = dev;
    sb_free(&req), sb_free(&rep);
}

void sharded_step(shard_state *s, dt_net *net, dt_coll *coll, float lr) {
    int slot = slot_of(coll, 0);
    call11 *c = &calls[slot];
    c->net = net, c->coll = coll, c->dev = s->dev, c->n_req = 0;
    subject_buf req = {0}, rep = {0};
    sb_u64(&req, state_id(s, slot)), sb_put(&req, &lr, sizeof lr);
    sb_u64(&req, (uint64_t)dt_coll_rank(coll)), sb_u64(&req, (uint64_t)dt_coll_size(coll));
    sb_u64(&req, net->n_trainable), sb_u64(&req, net->n_total), sb_u64(&req, (uint64_t)net->n_params);
    sb_put(&req, net->params_table, (size_t)net->n_params * sizeof *net->params_table);
    sb_put(&req, net->params, net->n_total * sizeof(float));
    sb_put(&req, net->grads, net->n_trainable * sizeof(float));
    char what[96];
    snprintf(what, sizeof what, "sharded_step(rank %d of %d)", dt_coll_rank(coll),
             dt_coll_size(coll));
    ask(slot, SUBJECT11_STEP, &req, &rep, what);
    sb_get(&rep, net->params, net->n_total * sizeof(float));
    sb_get(&rep, net->grads, net->n_trainable * sizeof(float));
    if (rep.bad || rep.at != rep.len) subject_malformed(what);
    sb_free(&req), sb_free(&rep);
}

void shard_state_free(shard_state *s) {
    int slot = owner(s);
    if (!calls[slot].dev) calls[slot].dev = s->dev;
    subject_buf req = {0}, rep = {0};
    sb_u64(&req, state_id(s, slot));
    ask(slot, SUBJECT11_FREE, &req, &rep, "shard_state_free");
    s->velocity = NULL;
    sb_free(&req), sb_free(&rep);
}
