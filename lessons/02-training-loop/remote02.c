// remote02.c — lesson 02's grader asks the student's code instead of calling it (the
// judge's side of the split grader, lessons/kit/subject.h): the grader is linked with these
// three functions, of training.h's signatures, in place of sgd.c and train_loop.c, which run
// in the subject (subject02.c, another process), so that the process that checks and prints
// verdicts never holds the student's code. Each call is one request (subject02.h):
//   sgd_step      w, g and v with their guard in and out (a write past n shows here);
//   evaluate_top1 the net's state and the examples it may read in; the fraction out;
//   train_loop    the net's state and the whole dataset in; the losses, the return code and
//                 the net's new state (parameters, gradients, dropout seed, BN count) out,
//                 into the grader's net, which the grader then judges as before.
// The loop's requests take seconds (the short run: 100 steps in one call): the subject tells
// the grader of each forward pass as it begins (a callback, SUBJECT02_CB_FORWARD), so that
// the channel's time limit (10 s, LESSON_SUBJECT_TIMEOUT) runs from one step to the next and
// a loop that stops stepping is still a hang, named. The request and reply buffers live from
// one call to the next (the training set, 47 MB a request, then costs no fresh pages).
#include <stdio.h>
#include <string.h>

#include "../kit/subject.h"
#include "subject02.h"
#include "training.h"

static subject_buf req, rep;

static void start_request(void) { req.len = req.at = 0, req.bad = 0; }

// A forward pass began in the subject: nothing to answer (the time limit starts again).
static void on_forward(subject_buf *in, subject_buf *out) { (void)in, (void)out; }
static const subject_handler loop_callbacks[] = {on_forward};
static void call_loop(uint32_t fn, const char *what) {
    subject_call_cb(0, fn, &req, &rep, what, loop_callbacks, 1);
}

void sgd_step(float *w, const float *g, float *v, size_t n, const sgd_config *c, int first) {
    size_t bytes = (n + LESSON02_GUARD) * sizeof(float);
    start_request();
    sb_u64(&req, n), sb_u64(&req, (uint64_t)first), sb_u64(&req, v != NULL);
    sb_put(&req, c, sizeof *c);
    sb_put(&req, w, bytes), sb_put(&req, g, bytes);
    if (v) sb_put(&req, v, bytes);
    char what[200];
    snprintf(what, sizeof what, "sgd_step(n %zu, lr %g, momentum %g, weight decay %g, "
             "nesterov %d, first %d)", n, (double)c->lr, (double)c->momentum,
             (double)c->weight_decay, c->nesterov, first);
    subject_call(SUBJECT02_SGD_STEP, &req, &rep, what);
    if (rep.len != (v ? 3 : 2) * bytes) subject_malformed(what);
    // g comes back too: the grader's check that sgd_step leaves it alone reads it here
    sb_get(&rep, w, bytes), sb_get(&rep, (float *)g, bytes);
    if (v) sb_get(&rep, v, bytes);
}

// The net's state (subject02.h): what the subject needs to build the same net.
static void put_net(const dt_net *net) {
    sb_put(&req, net->model, sizeof net->model);
    sb_put(&req, &net->cfg, sizeof net->cfg);
    sb_u64(&req, net->n_total);
    sb_put(&req, net->params, net->n_total * sizeof(float));  // cpu device: host memory
    sb_u64(&req, net->dropout_seed), sb_u64(&req, (uint64_t)net->bn_batches_tracked);
}

// Examples 0..m-1 of ds, as an in-memory uint8 dataset (subject02.h).
static void put_dataset(const dt_dataset *ds, int64_t m, const char *what) {
    if (!ds->pixels || ds->ops.get) {  // the grader's datasets are idx files: never here
        printf("grader: %s: the dataset %s is not an in-memory one\n", what, ds->name);
        subject_stop(3);
    }
    size_t per = (size_t)ds->c * ds->h * ds->w;
    sb_put(&req, ds->name, sizeof ds->name);
    sb_u64(&req, (uint64_t)m);
    sb_u64(&req, (uint64_t)ds->c), sb_u64(&req, (uint64_t)ds->h), sb_u64(&req, (uint64_t)ds->w);
    sb_u64(&req, (uint64_t)ds->num_classes), sb_u64(&req, (uint64_t)ds->train);
    sb_put(&req, ds->mean, sizeof ds->mean), sb_put(&req, ds->std, sizeof ds->std);
    sb_put(&req, ds->labels, (size_t)m * sizeof *ds->labels);
    sb_put(&req, ds->pixels, (size_t)m * per);
}

// The error the student's function set (code and message), from the reply.
static void get_error(dt_error *err) {
    dt_error e;
    sb_get(&rep, &e, sizeof e);
    e.msg[sizeof e.msg - 1] = '\0';
    if (err) *err = e;
}

double evaluate_top1(dt_net *net, const dt_dataset *ds, int64_t n, dt_error *err) {
    // the examples the contract lets it read: 0..n-1 (all of ds when n asks for more, which
    // the function must refuse)
    int64_t m = n >= 0 && n < ds->n ? n : ds->n;
    start_request();
    put_net(net);
    put_dataset(ds, m, "evaluate_top1");
    sb_u64(&req, (uint64_t)n);
    char what[200];
    snprintf(what, sizeof what, "evaluate_top1(%s, batch %d, n %lld)", ds->name, net->B,
             (long long)n);
    call_loop(SUBJECT02_EVALUATE, what);
    double top1;
    sb_get(&rep, &top1, sizeof top1);
    get_error(err);
    if (rep.bad || rep.at != rep.len) subject_malformed(what);
    return top1;
}

int train_loop(dt_net *net, const dt_dataset *train, const train_config *c, float *losses,
               dt_error *err) {
    start_request();
    put_net(net);
    put_dataset(train, train->n, "train_loop");
    sb_put(&req, c, sizeof *c);
    sb_put(&req, losses, (size_t)c->steps * sizeof *losses);  // what the grader left there
    char what[240];
    snprintf(what, sizeof what, "train_loop(%s, batch %d, %lld steps, lr %g, momentum %g, "
             "weight decay %g, nesterov %d)", train->name, net->B, (long long)c->steps,
             (double)c->sgd.lr, (double)c->sgd.momentum, (double)c->sgd.weight_decay,
             c->sgd.nesterov);
    call_loop(SUBJECT02_TRAIN_LOOP, what);
    int64_t rc = (int64_t)sb_get_u64(&rep);
    get_error(err);
    sb_get(&rep, losses, (size_t)c->steps * sizeof *losses);
    // the net's new state, into the grader's net (host memory on the cpu device)
    size_t want = sizeof rc + sizeof(dt_error) + (size_t)c->steps * sizeof(float) +
                  (net->n_total + net->n_trainable) * sizeof(float) + 2 * sizeof(uint64_t);
    if (rep.len != want) subject_malformed(what);
    sb_get(&rep, net->params, net->n_total * sizeof(float));
    sb_get(&rep, net->grads, net->n_trainable * sizeof(float));
    net->dropout_seed = sb_get_u64(&rep);
    net->bn_batches_tracked = (long)sb_get_u64(&rep);
    return (int)rc;
}
