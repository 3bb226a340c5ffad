// grader_overlap.c — lesson 07's grader, part 2: the student's overlap_ready/overlap_finish
// around one real backward of resnet8 (nn/), every rank on its own random batch, the same
// weights. The grader is linked with -Wl,--wrap=dt_allreduce_start, so each call the
// student's code makes lands in __wrap_dt_allreduce_start first: it notes which bucket it
// is and how many of backward's events had been reported, then calls the library.
#include <float.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grader_overlap.h"
#include "models.h"
#include "net.h"
#include "student_fusion.h"

#define CHECK_EARLY "overlap_no_bucket_starts_before_its_last_gradient"
#define CHECK_SOON "overlap_starts_each_bucket_as_soon_as_it_is_ready"
#define CHECK_BITS "overlap_result_bit_identical_without_overlap"

// What the interception saw. A process-wide record: the grader runs under mpirun, one rank
// per process, and nothing else calls the wrapper.
typedef struct {
    const float *grads;
    const dt_bucket *plan;
    int n_buckets, delivered, in_backward;
    int starts, first_bad;        // first_bad: the first start that broke a rule (-1: none)
    char why[600];                // its story
    int started_at[OVERLAP_MAX_BUCKETS];  // events delivered when bucket j started (-1: never)
    int order_ok;
} watch_t;
static watch_t watch;

dt_coll_req *__real_dt_allreduce_start(dt_coll *c, void *buf, size_t count, dt_dtype dtype,
                                       dt_error *err);
dt_coll_req *__wrap_dt_allreduce_start(dt_coll *c, void *buf, size_t count, dt_dtype dtype,
                                       dt_error *err) {
    watch_t *w = &watch;
    if (w->plan) {
        long off = (const float *)buf - w->grads;
        int j = -1;
        for (int b = 0; b < w->n_buckets && j < 0; b++)
            if (off == (long)w->plan[b].lo && count == w->plan[b].hi - w->plan[b].lo) j = b;
        if (j < 0 && w->first_bad < 0) {
            w->first_bad = w->starts;
            snprintf(w->why, sizeof w->why, "allreduce %d covers elements [%ld, %ld) of the "
                     "gradient, which is no bucket of the plan", w->starts + 1, off,
                     off + (long)count);
        } else if (j >= 0) {
            if (w->started_at[j] >= 0 && w->first_bad < 0) {
                w->first_bad = w->starts;
                snprintf(w->why, sizeof w->why, "bucket %d was started twice", j);
            }
            if (w->delivered <= w->plan[j].last_event && w->first_bad < 0) {
                w->first_bad = w->starts;
                snprintf(w->why, sizeof w->why, "bucket %d (events %d..%d, elements [%zu, %zu))"
                         " started when only events 0..%d had been reported: its gradient "
                         "was not final yet", j, w->plan[j].first_event, w->plan[j].last_event,
                         w->plan[j].lo, w->plan[j].hi, w->delivered - 1);
            }
            if (j != w->starts) w->order_ok = 0;
            w->started_at[j] = w->in_backward ? w->delivered : 1 << 30;
        }
        w->starts++;
    }
    return __real_dt_allreduce_start(c, buf, count, dtype, err);
}

// backward's gradient-ready callback: event i (in order) is final
typedef struct {
    overlap_state *s;
    int n;                       // events so far
    dt_grad_event *rec;          // recording: the events' ranges (NULL: not recording)
} ready_ctx;
static void on_ready(void *ctx, dt_net *net, int layer, size_t lo, size_t hi) {
    (void)net, (void)layer;
    ready_ctx *r = ctx;
    if (r->rec) r->rec[r->n] = (dt_grad_event){1e-3 * r->n, lo, hi};
    int i = r->n++;
    if (r->s) {
        watch.delivered = i + 1;
        overlap_ready(r->s, i);
    }
}

static void step(dt_net *net, uint64_t seed, int rank, ready_ctx *r) {
    size_t image = (size_t)net->in_c * net->in_h * net->in_w;
    float *x = malloc((size_t)net->B * image * sizeof *x);
    int32_t *y = malloc((size_t)net->B * sizeof *y);
    uint64_t s = seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(rank + 1));
    for (size_t i = 0; i < (size_t)net->B * image; i++) x[i] = (float)grade_uniform(&s) * 1.7f;
    for (int b = 0; b < net->B; b++) y[b] = grade_int(&s, 0, net->num_classes - 1);
    dt_net_set_batch(net, x, y);
    dt_net_forward(net, 1);
    dt_net_loss(net);
    dt_net_backward(net, 1.0f, r ? on_ready : NULL, r);
    free(x), free(y);
}

// What the overlapped step left in the gradient, when it is not the plain step's bits: this
// rank's own gradient (nothing summed), the sum over the ranks added in another order (MPI's
// own allreduce, or buckets split or merged: float sums in another order differ in their
// last bits), or the mean. Collective (every rank calls it): the float64 sum of the ranks'
// own gradients is the reference, within the rounding a float sum of p terms may show.
typedef enum { GOT_PLAIN, GOT_OWN, GOT_SUM_OTHER_ORDER, GOT_MEAN, GOT_OTHER } got_t;
static got_t what_got(const float *with, const float *without, const float *own, size_t n) {
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    double *sum = malloc(2 * n * sizeof *sum);  // [0, n): the sum; [n, 2n): the sum of |x|
    for (size_t i = 0; i < n; i++) sum[i] = own[i], sum[n + i] = fabs((double)own[i]);
    MPI_Allreduce(MPI_IN_PLACE, sum, (int)(2 * n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int is_own = !memcmp(with, own, n * sizeof *with);
    int is_plain = !memcmp(with, without, n * sizeof *with), is_sum = 1, is_mean = 1;
    for (size_t i = 0; i < n && (is_sum || is_mean); i++) {
        double tol = 4.0 * p * FLT_EPSILON * sum[n + i] + FLT_MIN;
        if (fabs(with[i] - sum[i]) > tol) is_sum = 0;
        if (fabs((double)with[i] * p - sum[i]) > tol * p) is_mean = 0;
    }
    free(sum);
    return is_own ? GOT_OWN : is_plain ? GOT_PLAIN : is_sum ? GOT_SUM_OTHER_ORDER
           : is_mean && p > 1 ? GOT_MEAN : GOT_OTHER;
}

// The bit check's hint after "... reduced one by one after backward": what the gradient is.
static const char *bits_story(got_t got, int starts) {
    switch (got) {
    case GOT_OWN:
        return starts == 0 ? " (no allreduce was started: the gradient is this rank's own)"
                           : " (the gradient is this rank's own: the allreduces started never "
                             "reached it: not waited for in overlap_finish?)";
    case GOT_SUM_OTHER_ORDER:
        return starts == 0 ? " (every element is the sum over the ranks, added in another order "
                             "than dtlab's allreduce: no bucket went through dt_allreduce_start, "
                             "so MPI or another path summed them, and float sums in another "
                             "order differ in their last bits)"
                           : " (every element is the sum over the ranks, added in another order "
                             "than dtlab's allreduce: float sums in another order differ in "
                             "their last bits; each bucket must be one dt_allreduce_start of "
                             "exactly its elements)";
    case GOT_MEAN:
        return " (the mean over the ranks: the plain step sums)";
    default:
        return "";
    }
}

// The early check's hint when dt_allreduce_start was never called: whether anything summed.
static const char *no_start_story(got_t got) {
    return got == GOT_OWN ? "no allreduce was started at all (the gradient is this rank's own)"
           : "dt_allreduce_start was never called, yet the gradient was summed over the ranks "
             "(another call did it: each bucket must start with dt_allreduce_start, whose "
             "calls the grader watches)";
}

// One plan: the overlapped step against the plain one. ok[3] are and-ed.
static void one_plan(dt_net *net, dt_coll *c, const dt_bucket *plan, int nb, const char *label,
                     uint64_t seed, int ok[3], char hint[3][900]) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t n = net->n_trainable;
    float *with = malloc(n * sizeof *with), *without = malloc(n * sizeof *without);
    float *own = malloc(n * sizeof *own);
    overlap_state s;
    memset(&s, 0, sizeof s);
    s.coll = c, s.grads = net->grads, s.plan = plan, s.n_buckets = nb;
    memset(&watch, 0, sizeof watch);
    watch.grads = net->grads, watch.plan = plan, watch.n_buckets = nb, watch.first_bad = -1;
    watch.order_ok = 1, watch.in_backward = 1;
    for (int j = 0; j < nb; j++) watch.started_at[j] = -1;
    ready_ctx r = {&s, 0, NULL};
    step(net, seed, rank, &r);
    watch.in_backward = 0;
    overlap_finish(&s);
    watch.plan = NULL;
    memcpy(with, net->grads, n * sizeof *with);
    step(net, seed, rank, NULL);  // the same step, then the buckets one by one
    memcpy(own, net->grads, n * sizeof *own);
    dt_error err;
    for (int j = 0; j < nb; j++)
        if (dt_allreduce(c, net->grads + plan[j].lo, plan[j].hi - plan[j].lo, DT_F32, &err)) {
            fprintf(stderr, "grader: dt_allreduce: %s\n", err.msg);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    memcpy(without, net->grads, n * sizeof *without);
    got_t got = what_got(with, without, own, n);
    // (a) too early, or not a bucket; (b) each bucket once, in order, in its own event's call
    int mine[3] = {watch.first_bad < 0 && watch.starts > 0, 1, 1};
    if (mine[0] == 0 && rank == 0 && ok[0])
        snprintf(hint[0], sizeof hint[0], "%s, rank 0: %s", label, watch.starts == 0
                 ? no_start_story(got) : watch.why);
    for (int j = 0; j < nb && mine[1]; j++)
        if (watch.started_at[j] != plan[j].last_event + 1 || !watch.order_ok) {
            mine[1] = 0;
            if (rank == 0 && ok[1])
                snprintf(hint[1], sizeof hint[1], "%s, rank 0: bucket %d (its last event %d) "
                         "%s; it must start in overlap_ready's call for event %d, so that it "
                         "overlaps the layers below", label, j, plan[j].last_event,
                         watch.started_at[j] < 0 ? "never started"
                         : watch.started_at[j] == 1 << 30 ? "started only after backward (in "
                           "overlap_finish)"
                         : !watch.order_ok ? "was not started in plan order"
                         : "started in a later event's call", plan[j].last_event);
        }
    // (c) the bits
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (memcmp(&with[i], &without[i], sizeof *with)) bad = i;
    mine[2] = bad == n;
    if (!mine[2] && rank == 0 && ok[2])
        snprintf(hint[2], sizeof hint[2], "%s, rank 0: gradient element %zu is %.9g with "
                 "overlap, %.9g when the same buckets are reduced one by one after backward%s",
                 label, bad, with[bad], without[bad], bits_story(got, watch.starts));
    MPI_Allreduce(MPI_IN_PLACE, mine, 3, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    for (int k = 0; k < 3; k++) {
        if (!mine[k] && ok[k] && rank == 0 && !hint[k][0])
            snprintf(hint[k], sizeof hint[k], "%s: it failed on another rank", label);
        ok[k] &= mine[k];
    }
    free(with), free(without), free(own);
}

static double cost_model(void *ctx, size_t bytes) {  // only the plan's times use it
    (void)ctx;
    return 5e-5 + (double)bytes * 1e-10;
}

void check_overlap(grade_t *g, uint64_t seed) {
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    dt_device *dev = dt_device_cpu_create(1);
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = 2, cfg.in_h = cfg.in_w = 32, cfg.num_classes = 10, cfg.seed = seed | 1;
    dt_error err = {0, ""};
    dt_net *net = dt_model_create("resnet8", dev, &cfg, &err);
    dt_coll *c = net ? dt_coll_create(MPI_COMM_WORLD, NULL, NULL, &err) : NULL;
    if (!c) {
        fprintf(stderr, "grader: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    // backward's events: a recording pass (their ranges; ready times 1 ms apart)
    enum { MAX_EVENTS = 1024 };
    dt_grad_event *ev = calloc(MAX_EVENTS, sizeof *ev);
    dt_bucket *plan[2] = {calloc(MAX_EVENTS, sizeof(dt_bucket)), calloc(MAX_EVENTS, sizeof(dt_bucket))};
    ready_ctx rec = {NULL, 0, ev};
    step(net, seed, 0, &rec);
    int n_ev = rec.n;
    // two plans, the same on every rank: a random byte threshold between 1/6 and 1/2 of the
    // gradient (2 to 6 buckets), and no fusion (one bucket per layer with parameters)
    uint64_t rng = seed ^ 0x4f5645524c4150ull;
    size_t total = net->n_trainable * 4;
    dt_fusion_opts by_bytes = {DT_FUSION_BYTES, total / 6 + (size_t)((grade_uniform(&rng) + 1.0) * (double)total / 6), 0};
    dt_fusion_opts none = {DT_FUSION_NONE, 0, 0};
    int nb[2] = {dt_fusion_plan(ev, n_ev, 4, &by_bytes, cost_model, NULL, plan[0], &err),
                 dt_fusion_plan(ev, n_ev, 4, &none, cost_model, NULL, plan[1], &err)};
    if (nb[0] < 1 || nb[1] < 1 || nb[1] > OVERLAP_MAX_BUCKETS) {
        fprintf(stderr, "grader: the plans failed (%d, %d buckets): %s\n", nb[0], nb[1], err.msg);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int ok[3] = {1, 1, 1};
    char hint[3][900] = {"", "", ""}, label[2][120];
    snprintf(label[0], sizeof label[0], "P %d, resnet8, threshold %zu bytes: %d buckets of %d "
             "events", p, by_bytes.bytes, nb[0], n_ev);
    snprintf(label[1], sizeof label[1], "P %d, resnet8, no fusion: %d buckets of %d events", p,
             nb[1], n_ev);
    for (int k = 0; k < 2; k++) one_plan(net, c, plan[k], nb[k], label[k], seed, ok, hint);
    const char *names[3] = {CHECK_EARLY, CHECK_SOON, CHECK_BITS};
    for (int k = 0; k < 3; k++) {
        if (ok[k]) snprintf(hint[k], sizeof hint[k], "(%s; %s)", label[0], label[1]);
        grade_check(g, ok[k], names[k], "%s", hint[k]);
    }
    free(ev), free(plan[0]), free(plan[1]);
    dt_coll_free(c), dt_net_free(net), dev->destroy(dev);
}
