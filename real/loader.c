// loader.c — the prefetching thread of loader.h. One producer, one consumer, a ring of
// queue+1 batch slots: batch t of the sequence always goes to slot t mod (queue+1); the
// producer may fill batch t once the consumer has handed back batch t-(queue+1), and the
// consumer holds exactly one batch between calls. A mutex and two condition variables, no
// lock-free cleverness. Not here: what an example is (data_*.c).
#include "loader.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

typedef struct {
    float *x;
    int32_t *labels;
    int64_t *indices;
    int b;
    int64_t epoch, step;
} slot;

struct dt_loader {
    const dt_dataset *ds;
    dt_loader_config cfg;
    int64_t steps;     // per epoch
    int local;         // G/P
    int nslots;        // queue + 1
    slot *slots;
    int64_t *perm;     // (n) the producer's permutation of the current epoch

    pthread_t thread;
    int started;            // the thread was created (join it)
    pthread_mutex_t mu;
    pthread_cond_t ready;   // producer -> consumer: a batch, the end, or an error
    pthread_cond_t freed;   // consumer -> producer: a slot came back, or stop
    int64_t produced;       // batches complete
    int64_t released;       // batches the consumer has given back
    int64_t consumed;       // batches handed to the consumer
    int done, failed;
    atomic_int stop;
    dt_error err;           // the producer's failure
};

// Fills slot s with (epoch, step); checks for stop between groups of examples so that
// shutdown never waits for a whole batch. 0, 1 if stopped, -1 with err.
static int produce(dt_loader *l, slot *s, int64_t epoch, int64_t step, dt_error *err) {
    const dt_loader_config *c = &l->cfg;
    int b = dt_shard_indices(l->perm, l->ds->n, c->global_batch, c->ranks, c->rank,
                             c->drop_last, step, s->indices, err);
    if (b < 0) return -1;
    size_t per = (size_t)l->ds->c * l->ds->h * l->ds->w;
    int group = c->threads > 1 ? 4 * c->threads : 4;
    for (int j = 0; j < b; j += group) {
        if (atomic_load(&l->stop)) return 1;
        int m = b - j < group ? b - j : group;
        if (dt_dataset_fill(l->ds, s->indices + j, m, c->seed, epoch, c->threads,
                            s->x + (size_t)j * per, s->labels + j, err) != 0) {
            return -1;
        }
    }
    s->b = b;
    s->epoch = epoch;
    s->step = step;
    return 0;
}

static void *producer_main(void *arg) {
    dt_loader *l = arg;
    const dt_loader_config *c = &l->cfg;
    int64_t t = 0;  // sequence number of the batch being produced
    for (int64_t e = c->first_epoch; e < c->first_epoch + c->epochs; e++) {
        if (c->shuffle) {
            dt_epoch_permutation(c->seed, e, l->ds->n, l->perm);
        } else {
            for (int64_t i = 0; i < l->ds->n; i++) l->perm[i] = i;
        }
        for (int64_t s = e == c->first_epoch ? c->first_step : 0; s < l->steps; s++, t++) {
            pthread_mutex_lock(&l->mu);
            while (t >= l->released + l->nslots && !atomic_load(&l->stop)) {
                pthread_cond_wait(&l->freed, &l->mu);
            }
            pthread_mutex_unlock(&l->mu);
            if (atomic_load(&l->stop)) return NULL;
            dt_error err = {0, ""};
            int rc = produce(l, &l->slots[t % l->nslots], e, s, &err);
            if (rc == 1) return NULL;
            pthread_mutex_lock(&l->mu);
            if (rc < 0) {
                l->failed = 1;
                l->err = err;
            } else {
                l->produced = t + 1;
            }
            pthread_cond_signal(&l->ready);
            pthread_mutex_unlock(&l->mu);
            if (rc < 0) return NULL;
        }
    }
    pthread_mutex_lock(&l->mu);
    l->done = 1;
    pthread_cond_signal(&l->ready);
    pthread_mutex_unlock(&l->mu);
    return NULL;
}

int dt_loader_next(dt_loader *l, dt_batch *batch, double *wait_s, dt_error *err) {
    double t0 = dt_now_s();
    pthread_mutex_lock(&l->mu);
    if (l->released < l->consumed) {  // hand back the batch the caller held
        l->released = l->consumed;
        pthread_cond_signal(&l->freed);
    }
    while (l->consumed >= l->produced && !l->done && !l->failed) {
        pthread_cond_wait(&l->ready, &l->mu);
    }
    int rc;
    if (l->consumed < l->produced) {
        const slot *s = &l->slots[l->consumed % l->nslots];
        *batch = (dt_batch){s->b, l->ds->c, l->ds->h, l->ds->w, s->x, s->labels, s->indices,
                            s->epoch, s->step};
        l->consumed++;
        rc = 1;
    } else if (l->failed) {
        if (err) *err = l->err;
        rc = -1;
    } else {
        rc = 0;
    }
    pthread_mutex_unlock(&l->mu);
    if (wait_s) *wait_s = dt_now_s() - t0;
    return rc;
}

int64_t dt_loader_steps_per_epoch(const dt_loader *l) { return l->steps; }

dt_loader *dt_loader_create(const dt_dataset *ds, const dt_loader_config *cfg, dt_error *err) {
    if (!ds || !cfg) {
        dt_fail(err, DT_EXIT_USAGE, "dt_loader_create: dataset or config is NULL");
        return NULL;
    }
    dt_loader_config c = *cfg;
    if (c.queue == 0) c.queue = 2;
    if (c.threads < 1) c.threads = 1;
    if (c.global_batch <= 0 || c.ranks <= 0 || c.global_batch % c.ranks != 0 || c.rank < 0 ||
        c.rank >= c.ranks) {
        dt_fail(err, DT_EXIT_USAGE, "loader for %s: global batch %d, ranks %d, rank %d: "
                "expected a global batch that is a positive multiple of ranks, 0 <= rank < ranks",
                ds->name, c.global_batch, c.ranks, c.rank);
        return NULL;
    }
    int64_t steps = dt_steps_per_epoch(ds->n, c.global_batch, c.drop_last);
    if (steps < 1) {
        dt_fail(err, DT_EXIT_USAGE, "loader for %s: %lld examples, fewer than the global batch "
                "%d: no full step per epoch (drop_last)", ds->name, (long long)ds->n,
                c.global_batch);
        return NULL;
    }
    if (c.first_epoch < 0 || c.epochs < 1 || c.first_step < 0 || c.first_step >= steps ||
        c.queue < 2 || c.queue > 64) {
        dt_fail(err, DT_EXIT_USAGE, "loader for %s: first_epoch %lld, epochs %lld, first_step "
                "%lld, queue %d: expected first_epoch >= 0, epochs >= 1, 0 <= first_step < %lld "
                "(steps per epoch), 2 <= queue <= 64", ds->name, (long long)c.first_epoch,
                (long long)c.epochs, (long long)c.first_step, c.queue, (long long)steps);
        return NULL;
    }
    dt_loader *l = callocCheck(1, sizeof *l);
    l->ds = ds;
    l->cfg = c;
    l->steps = steps;
    l->local = c.global_batch / c.ranks;
    l->nslots = c.queue + 1;
    l->perm = mallocCheck(sizeof(int64_t) * (size_t)ds->n);
    l->slots = callocCheck((size_t)l->nslots, sizeof(slot));
    size_t per = (size_t)ds->c * ds->h * ds->w;
    for (int i = 0; i < l->nslots; i++) {
        l->slots[i].x = mallocCheck(sizeof(float) * per * (size_t)l->local);
        l->slots[i].labels = mallocCheck(sizeof(int32_t) * (size_t)l->local);
        l->slots[i].indices = mallocCheck(sizeof(int64_t) * (size_t)l->local);
    }
    pthread_mutex_init(&l->mu, NULL);
    pthread_cond_init(&l->ready, NULL);
    pthread_cond_init(&l->freed, NULL);
    atomic_init(&l->stop, 0);
    int rc = pthread_create(&l->thread, NULL, producer_main, l);
    l->started = rc == 0;
    if (rc != 0) {
        dt_fail(err, DT_EXIT_RUNTIME, "loader for %s: cannot start its thread: %s", ds->name,
                strerror(rc));
        dt_loader_destroy(l);
        return NULL;
    }
    return l;
}

void dt_loader_destroy(dt_loader *l) {
    if (!l) return;
    pthread_mutex_lock(&l->mu);
    atomic_store(&l->stop, 1);
    pthread_cond_broadcast(&l->freed);
    pthread_mutex_unlock(&l->mu);
    if (l->started) pthread_join(l->thread, NULL);
    pthread_cond_destroy(&l->ready);
    pthread_cond_destroy(&l->freed);
    pthread_mutex_destroy(&l->mu);
    for (int i = 0; i < l->nslots; i++) {
        free(l->slots[i].x);
        free(l->slots[i].labels);
        free(l->slots[i].indices);
    }
    free(l->slots);
    free(l->perm);
    free(l);
}
