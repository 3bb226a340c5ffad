// subject02.c — the process that runs lesson 02's sgd.c and train_loop.c
// (lessons/kit/subject.h): a server that answers the grader's requests (subject02.h) with
// what the student's functions write and return.
//   sgd_step       n, first, whether v is there, the configuration, and w, g (v) with their
//                  guard in; all of them, guard included, out
//   evaluate_top1  a net, the examples it may read and n in; the fraction and the error out
//   train_loop     a net, the dataset, the configuration and the grader's losses in; the
//                  return code, the error, the losses and the net's new state out
// A net is built here as the grader's was (dt_model_create with its model and
// configuration, on this process's own cpu device, one thread) and given the grader's state;
// a dataset is an in-memory uint8 one, whose pixels stay where they lie in the request.
// Each forward pass the student's code runs is told to the grader as it begins (the net's
// on_layer hook at its first layer: SUBJECT02_CB_FORWARD), so that the grader's time limit
// runs from step to step.
// Linked with the student's files, the kit's subject.c and, of dtlab's library, only what
// they reach (--gc-sections): the model and its layers, the dataset's examples and order;
// not dtlab's optimiser step nor its training step (calls.txt refuses them).
#include <string.h>

#include "../kit/subject.h"
#include "subject02.h"
#include "training.h"

static dt_device *cpu;

// A request the grader would never send: the server stops (the grader reports the crash).
static void require(int ok) {
    if (!ok) exit(2);
}

// The next n bytes of the request, where they lie (the caller copies what needs alignment).
static const unsigned char *span(subject_buf *req, size_t n) {
    require(!req->bad && n <= req->len - req->at);
    const unsigned char *p = req->p + req->at;
    req->at += n;
    return p;
}
static void *take(subject_buf *req, size_t n) {
    void *p = malloc(n ? n : 1);
    require(p != NULL);
    memcpy(p, span(req, n), n);
    return p;
}

// The net's hook before each layer's work: the first layer's forward starts a pass.
static void on_layer(void *ctx, const dt_net *net, int layer, int phase) {
    (void)ctx, (void)net;
    if (layer != 0 || phase != DT_PHASE_FORWARD) return;
    subject_buf none = {0}, back = {0};
    subject_callback(SUBJECT02_CB_FORWARD, &none, &back);
    sb_free(&back);
}

// ---- a net (subject02.h): the grader's model, configuration and state ----

static dt_net *take_net(subject_buf *req) {
    char model[32];
    dt_model_config cfg;
    sb_get(req, model, sizeof model);
    sb_get(req, &cfg, sizeof cfg);
    model[sizeof model - 1] = '\0';
    uint64_t n_total = sb_get_u64(req);
    require(!req->bad);
    dt_error err = {0, ""};
    dt_net *net = dt_model_create(model, cpu, &cfg, &err);
    require(net && net->n_total == n_total);
    memcpy(net->params, span(req, n_total * sizeof(float)), n_total * sizeof(float));
    net->dropout_seed = sb_get_u64(req);
    net->bn_batches_tracked = (long)sb_get_u64(req);
    net->on_layer = on_layer;
    return net;
}

// ---- a dataset (subject02.h): an in-memory uint8 one, its pixels in the request ----

static dt_dataset *take_dataset(subject_buf *req) {
    dt_dataset *ds = calloc(1, sizeof *ds);
    require(ds != NULL);
    sb_get(req, ds->name, sizeof ds->name);
    ds->name[sizeof ds->name - 1] = '\0';
    uint64_t n = sb_get_u64(req), c = sb_get_u64(req), h = sb_get_u64(req), w = sb_get_u64(req);
    uint64_t classes = sb_get_u64(req), train = sb_get_u64(req);
    sb_get(req, ds->mean, sizeof ds->mean), sb_get(req, ds->std, sizeof ds->std);
    require(!req->bad && n <= 1u << 26 && c >= 1 && c <= 3 && h >= 1 && h <= 1024 && w >= 1 &&
            w <= 1024 && classes >= 1 && classes <= 1u << 20 && train <= 1);
    ds->n = (int64_t)n, ds->c = (int)c, ds->h = (int)h, ds->w = (int)w;
    ds->num_classes = (int)classes, ds->train = (int)train;
    ds->labels = take(req, n * sizeof *ds->labels);
    ds->pixels = (uint8_t *)span(req, n * c * h * w);
    return ds;
}
static void free_dataset(dt_dataset *ds) {
    free(ds->labels);
    free(ds);
}

// The net's state after a call: parameters, gradients, dropout seed, BN count.
static void put_net_state(subject_buf *reply, const dt_net *net) {
    sb_put(reply, net->params, net->n_total * sizeof(float));
    sb_put(reply, net->grads, net->n_trainable * sizeof(float));
    sb_u64(reply, net->dropout_seed), sb_u64(reply, (uint64_t)net->bn_batches_tracked);
}

// ---- the requests ----

// w, g and v are stepped where they lie in the request's copy, then written to the reply.
static void serve_sgd_step(subject_buf *req, subject_buf *reply) {
    uint64_t n = sb_get_u64(req), first = sb_get_u64(req), has_v = sb_get_u64(req);
    sgd_config c;
    sb_get(req, &c, sizeof c);
    require(!req->bad && n <= (1u << 28) && has_v <= 1 && first <= 1);
    size_t bytes = ((size_t)n + LESSON02_GUARD) * sizeof(float);
    require(req->len - req->at == (has_v ? 3 : 2) * bytes);
    float *w = take(req, bytes), *g = take(req, bytes), *v = has_v ? take(req, bytes) : NULL;
    sgd_step(w, g, v, (size_t)n, &c, (int)first);
    sb_put(reply, w, bytes), sb_put(reply, g, bytes);
    if (v) sb_put(reply, v, bytes);
    free(w), free(g), free(v);
}

static void serve_evaluate(subject_buf *req, subject_buf *reply) {
    dt_net *net = take_net(req);
    dt_dataset *ds = take_dataset(req);
    int64_t n = (int64_t)sb_get_u64(req);
    require(!req->bad && req->at == req->len);
    dt_error err = {0, ""};
    double top1 = evaluate_top1(net, ds, n, &err);
    sb_put(reply, &top1, sizeof top1);
    sb_put(reply, &err, sizeof err);
    free_dataset(ds);
    dt_net_free(net);
}

static void serve_train_loop(subject_buf *req, subject_buf *reply) {
    dt_net *net = take_net(req);
    dt_dataset *ds = take_dataset(req);
    train_config c;
    sb_get(req, &c, sizeof c);
    require(!req->bad && c.steps >= 0 && c.steps <= 1 << 20 &&
            req->len - req->at == (size_t)c.steps * sizeof(float));
    float *losses = take(req, (size_t)c.steps * sizeof *losses);
    dt_error err = {0, ""};
    int rc = train_loop(net, ds, &c, losses, &err);
    sb_u64(reply, (uint64_t)(int64_t)rc);
    sb_put(reply, &err, sizeof err);
    sb_put(reply, losses, (size_t)c.steps * sizeof *losses);
    put_net_state(reply, net);
    free(losses);
    free_dataset(ds);
    dt_net_free(net);
}

int main(void) {
    cpu = dt_device_cpu_create(1);  // one thread, as the grader's under lessons/grade
    const subject_handler h[SUBJECT02_N] = {serve_sgd_step, serve_evaluate, serve_train_loop};
    return subject_serve(h, SUBJECT02_N);
}
