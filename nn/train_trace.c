// train_trace.c — the Chrome trace of train_trace.h: events kept in memory per rank,
// written as JSON "X" (complete) events, pid = rank, tid 0 compute / 1 allreduce / 2 step.
#include "train_trace.h"

#include "atomic_file.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    char name[80];
    int tid;
    double ts, dur;  // microseconds
    double bytes;    // an allreduce's bucket (0: not an allreduce)
} trace_event;

struct dt_trace {
    int rank;
    trace_event *ev;
    int n, cap;
};

dt_trace *dt_trace_new(int rank) {
    dt_trace *t = callocCheck(1, sizeof *t);
    t->rank = rank;
    return t;
}

static void add(dt_trace *t, const char *name, int tid, double s0, double s1) {
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->ev = realloc(t->ev, (size_t)t->cap * sizeof *t->ev);
        DT_ASSERT(t->ev);
    }
    trace_event *e = &t->ev[t->n++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->tid = tid, e->ts = s0 * 1e6, e->dur = (s1 - s0) * 1e6, e->bytes = 0;
}

void dt_trace_step(dt_trace *tr, const dt_trainer *t, double t0, double t1) {
    if (!tr) return;
    double b0 = t->last_backward_start;
    add(tr, "forward + loss", 0, t0, b0);
    double prev = b0;
    for (int i = 0; i < t->n_events; i++) {  // events are in backward order
        const dt_layer *l = t->net->layers[t->net->n_layers - 1 - i];
        double at = b0 + t->events[i].ready;
        char name[80];
        snprintf(name, sizeof name, "backward %s", l->name[0] ? l->name : "(no params)");
        if (at > prev) add(tr, name, 0, prev, at);
        prev = at > prev ? at : prev;
    }
    for (int b = 0; b < t->n_buckets; b++) {
        char name[80];
        snprintf(name, sizeof name, "allreduce bucket %d (%.1f MB)", b,
                 (double)(t->buckets[b].hi - t->buckets[b].lo) * 4 / 1e6);
        add(tr, name, 1, b0 + t->bucket_start[b], b0 + t->bucket_end[b]);
        // its exact size in float32 (dtcoll-bench's bytes), for dtsim calibrate
        // --intra-trace (sim/profile_trace.c)
        tr->ev[tr->n - 1].bytes = (double)(t->buckets[b].hi - t->buckets[b].lo) * 4;
    }
    add(tr, "step", 2, t0, t1);
}

static int write_part(const dt_trace *tr, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    for (int i = 0; i < tr->n; i++) {
        fprintf(f, ",\n{\"name\": \"%s\", \"ph\": \"X\", \"pid\": %d, \"tid\": %d, "
                   "\"ts\": %.3f, \"dur\": %.3f", tr->ev[i].name, tr->rank, tr->ev[i].tid,
                tr->ev[i].ts, tr->ev[i].dur);
        if (tr->ev[i].bytes > 0) fprintf(f, ", \"args\": {\"bytes\": %.0f}", tr->ev[i].bytes);
        fputs("}", f);
    }
    return fclose(f);
}

int dt_trace_write(dt_trace *tr, const char *path, int rank, int n_ranks, const char *who,
                   dt_error *err) {
    char part[600];
    int bad = 0;
    if (tr) {
        snprintf(part, sizeof part, "%s.%d.part", path, rank);
        bad = write_part(tr, part) != 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank != 0) {
        if (tr && bad) unlink(part);
        return 0;
    }
    if (bad) {  // some rank could not write its part: no trace, and no part left behind
        for (int r = 0; r < n_ranks; r++) {
            snprintf(part, sizeof part, "%s.%d.part", path, r);
            unlink(part);
        }
        return dt_fail(err, DT_EXIT_RUNTIME, "--trace %s: a rank could not write its part "
                       "(%s.R.part: the directory full or not writable?)", path, path);
    }
    dt_atomic_file a;
    if (dt_atomic_open(&a, path, "--trace", err)) return -1;
    FILE *out = a.f;
    fprintf(out, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"program\": \"%s\"}, "
                 "\"traceEvents\": [\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, "
                 "\"args\": {\"name\": \"rank 0\"}}", who);
    for (int r = 0; r < n_ranks; r++) {
        snprintf(part, sizeof part, "%s.%d.part", path, r);
        FILE *f = fopen(part, "r");
        if (!f) continue;
        char buf[8192];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, out);
        fclose(f);
        unlink(part);
        if (r > 0)
            fprintf(out, ",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %d, "
                         "\"args\": {\"name\": \"rank %d\"}}", r, r);
        for (int tid = 0; tid < 3; tid++)
            fprintf(out, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %d, \"tid\": %d, "
                         "\"args\": {\"name\": \"%s\"}}", r, tid,
                    tid == 0 ? "compute" : tid == 1 ? "allreduce" : "iteration");
    }
    fprintf(out, "\n]}\n");
    if (dt_atomic_finish(&a, err) || dt_atomic_commit(&a, err)) return -1;
    return 0;
}

void dt_trace_free(dt_trace *tr) {
    if (!tr) return;
    free(tr->ev);
    free(tr);
}
