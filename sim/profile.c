// profile.c — reading, checking and writing a measured profile (sim/profile.h), and fitting
// the ring allreduce's α and β to a dtcoll-bench table. Every error names the file, and the
// member or line, and says what was expected.
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "json.h"
#include "profile.h"

#define MAX_FILE (1 << 20)  // bytes: a profile is a few hundred
#define MAX_FIT_ROWS 4096  // rows of a dtcoll-bench table: a sweep has tens

static int kind_of(const char *name) {
    char buf[32];
    for (int k = 0; k < DT_N_KINDS; k++)
        if (!strcmp(name, dt_kind_name(k, buf, sizeof buf))) return k;
    return -1;
}

static char *slurp(const char *path, size_t *len, dt_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return dt_fail(err, DT_EXIT_USAGE, "%s: cannot open it: %s", path, strerror(errno)), NULL;
    char *buf = mallocCheck(MAX_FILE + 1);
    *len = fread(buf, 1, MAX_FILE + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || *len > MAX_FILE) {
        free(buf);
        dt_fail(err, DT_EXIT_USAGE, "%s: %s", path, bad ? "cannot read it" : "larger than 1 MiB: not a profile");
        return NULL;
    }
    buf[*len] = 0;
    return buf;
}

// ---- reading ----

typedef struct {
    const char *path;
    dt_error *err;
} reader;

static int fail_member(const reader *r, const char *member, const char *want) {
    return dt_fail(r->err, DT_EXIT_USAGE, "%s: member '%s': expected %s", r->path, member, want);
}

static const dt_json *member(const reader *r, const dt_json *obj, const char *key, int need) {
    const dt_json *v = dt_json_get(obj, key);
    if (!v && need) fail_member(r, key, "it (missing)");
    return v;
}

static int get_string(const reader *r, const dt_json *obj, const char *key, char *dst, size_t size,
                      int need) {
    const dt_json *v = member(r, obj, key, need);
    if (!v) return need ? -1 : 0;
    if (v->type != DT_JSON_STRING || v->slen >= size || memchr(v->s, 0, v->slen))
        return fail_member(r, key, "a string");
    memcpy(dst, v->s, v->slen + 1);
    return 0;
}

static int get_int(const reader *r, const dt_json *obj, const char *key, long lo, long hi, long *out) {
    const dt_json *v = member(r, obj, key, 1);
    if (!v) return -1;
    if (v->type != DT_JSON_INT || v->i < lo || v->i > hi) {
        char want[96];
        snprintf(want, sizeof want, "an integer in %ld .. %ld", lo, hi);
        return fail_member(r, key, want);
    }
    *out = (long)v->i;
    return 0;
}

// a finite number in [lo, hi] (JSON has no NaN; an out-of-range value is the guard)
static int get_real(const reader *r, const dt_json *obj, const char *key, double lo, double hi,
                    double *out) {
    const dt_json *v = member(r, obj, key, 1);
    if (!v) return -1;
    if ((v->type != DT_JSON_REAL && v->type != DT_JSON_INT) || !isfinite(v->d) || v->d < lo ||
        v->d > hi) {
        char want[96];
        snprintf(want, sizeof want, "a number in %g .. %g", lo, hi);
        return fail_member(r, key, want);
    }
    *out = v->d;
    return 0;
}

static int read_link(const reader *r, const dt_json *links, const char *key, dt_link_fit *f) {
    const dt_json *l = dt_json_get(links, key);
    memset(f, 0, sizeof *f);
    if (!l) return 0;
    char name[64];
    snprintf(name, sizeof name, "links.%s", key);
    if (l->type != DT_JSON_OBJECT) return fail_member(r, name, "an object");
    reader rr = *r;
    if (get_real(&rr, l, "alpha_s", 0, 1, &f->alpha) ||
        get_real(&rr, l, "beta_s_per_byte", 1e-15, 1, &f->beta) ||
        get_string(&rr, l, "from", f->from, sizeof f->from, 0))
        return -1;
    return 0;
}

static int read_kinds(const reader *r, const dt_json *root, dt_profile *p) {
    const dt_json *kinds = member(r, root, "kinds", 1);
    if (!kinds) return -1;
    if (kinds->type != DT_JSON_OBJECT || kinds->n == 0)
        return fail_member(r, "kinds", "an object of seconds per step, one per layer kind");
    for (int k = 0; k < DT_N_KINDS; k++) p->kind_s[k] = -1;
    double sum = 0;
    for (const dt_json *m = kinds->child; m; m = m->next) {
        int k = kind_of(m->key);
        char name[80];
        snprintf(name, sizeof name, "kinds.%s", m->key);
        if (k < 0) return fail_member(r, name, "a layer kind such as conv.forward, or rest");
        if ((m->type != DT_JSON_REAL && m->type != DT_JSON_INT) || !isfinite(m->d) || m->d < 0 ||
            m->d > 1e6)
            return fail_member(r, name, "seconds per step, 0 .. 1e6");
        p->kind_s[k] = m->d;
        sum += p->kind_s[k];
    }
    if (fabs(sum - p->step_s) > 1e-6 * p->step_s + 1e-12)
        return dt_fail(r->err, DT_EXIT_USAGE, "%s: the kinds add up to %.9g s, but step_s is "
                       "%.9g s: expected their sum", r->path, sum, p->step_s);
    return 0;
}

int dt_profile_read(const char *path, dt_profile *p, dt_error *err) {
    memset(p, 0, sizeof *p);
    size_t len;
    char *text = slurp(path, &len, err);
    if (!text) return -1;
    char msg[200];
    dt_json *root = dt_json_parse_flags(text, len, DT_JSON_REALS, msg, sizeof msg);
    free(text);
    if (!root) return dt_fail(err, DT_EXIT_USAGE, "%s: not JSON: %s", path, msg);
    reader r = {path, err};
    long version, v;
    int rc = -1;
    if (root->type != DT_JSON_OBJECT) {
        dt_fail(err, DT_EXIT_USAGE, "%s: expected a JSON object (a dtlab profile)", path);
        goto done;
    }
    if (get_int(&r, root, "dtlab_profile", 1, 1, &version) ||
        get_string(&r, root, "model", p->model, sizeof p->model, 1) ||
        get_string(&r, root, "source", p->source, sizeof p->source, 0) ||
        get_string(&r, root, "device", p->device, sizeof p->device, 0) ||
        get_string(&r, root, "precision", p->precision, sizeof p->precision, 1) ||
        get_int(&r, root, "batch", 1, 1 << 20, &v))
        goto done;
    p->batch = (int)v;
    if (get_int(&r, root, "image_size", 4, 4096, &v)) goto done;
    p->image_size = (int)v;
    if (get_int(&r, root, "channels", 1, 64, &v)) goto done;
    p->channels = (int)v;
    if (get_int(&r, root, "classes", 2, 1 << 20, &v)) goto done;
    p->classes = (int)v;
    if (get_int(&r, root, "steps", 1, 1L << 40, &p->steps) ||
        get_real(&r, root, "step_s", 1e-9, 1e6, &p->step_s) || read_kinds(&r, root, p))
        goto done;
    if (strcmp(p->precision, "fp32") && strcmp(p->precision, "fp16") && strcmp(p->precision, "bf16")) {
        fail_member(&r, "precision", "fp32, fp16 or bf16");
        goto done;
    }
    const dt_json *links = dt_json_get(root, "links");
    if (links && links->type != DT_JSON_OBJECT) {
        fail_member(&r, "links", "an object with intra and/or inter");
        goto done;
    }
    if (links && (read_link(&r, links, "intra", &p->intra) || read_link(&r, links, "inter", &p->inter)))
        goto done;
    rc = 0;
done:
    dt_json_free(root);
    return rc;
}

// ---- writing ----

static void write_link(dt_json_writer *w, const char *key, const dt_link_fit *f) {
    if (!(f->beta > 0)) return;
    dt_json_begin_object(w, key);
    dt_json_write_real(w, "alpha_s", f->alpha);
    dt_json_write_real(w, "beta_s_per_byte", f->beta);
    if (f->from[0]) dt_json_write_string(w, "from", f->from);
    dt_json_end_object(w);
}

int dt_profile_write(const char *path, const dt_profile *p, dt_error *err) {
    dt_atomic_file a;
    if (dt_atomic_open(&a, path, "profile", err)) return -1;
    dt_json_writer w;
    dt_json_writer_init(&w, a.f);
    w.digits = 9;
    dt_json_begin_object(&w, NULL);
    dt_json_write_int(&w, "dtlab_profile", 1);
    dt_json_write_string(&w, "source", p->source);
    dt_json_write_string(&w, "model", p->model);
    dt_json_write_string(&w, "device", p->device);
    dt_json_write_string(&w, "precision", p->precision);
    dt_json_write_int(&w, "batch", p->batch);
    dt_json_write_int(&w, "image_size", p->image_size);
    dt_json_write_int(&w, "channels", p->channels);
    dt_json_write_int(&w, "classes", p->classes);
    dt_json_write_int(&w, "steps", p->steps);
    dt_json_write_real(&w, "step_s", p->step_s);
    dt_json_begin_object(&w, "kinds");
    char buf[32];
    for (int k = 0; k < DT_N_KINDS; k++)
        if (p->kind_s[k] >= 0) dt_json_write_real(&w, dt_kind_name(k, buf, sizeof buf), p->kind_s[k]);
    dt_json_end_object(&w);
    if (p->intra.beta > 0 || p->inter.beta > 0) {
        dt_json_begin_object(&w, "links");
        write_link(&w, "intra", &p->intra);
        write_link(&w, "inter", &p->inter);
        dt_json_end_object(&w);
    }
    dt_json_end_object(&w);
    if (ferror(a.f)) {
        dt_atomic_abort(&a);
        return dt_fail(err, DT_EXIT_RUNTIME, "profile %s: write error", path);
    }
    if (dt_atomic_finish(&a, err) || dt_atomic_commit(&a, err)) return -1;
    return 0;
}

// ---- the links: α and β from dtcoll-bench ----

typedef dt_fit_row fit_row;

static int by_x(const void *a, const void *b) {
    double u = ((const fit_row *)a)->x, v = ((const fit_row *)b)->x;
    return (u > v) - (u < v);
}

// The least-squares line y = c + s·x through rows [lo, hi), centred (x reaches 1e8 bytes).
static void fit_line(const fit_row *r, int lo, int hi, double *c, double *s) {
    double mx = 0, my = 0, sxx = 0, sxy = 0;
    for (int i = lo; i < hi; i++) mx += r[i].x, my += r[i].y;
    mx /= hi - lo, my /= hi - lo;
    for (int i = lo; i < hi; i++)
        sxx += (r[i].x - mx) * (r[i].x - mx), sxy += (r[i].x - mx) * (r[i].y - my);
    *s = sxx > 0 ? sxy / sxx : 0;
    *c = my - *s * mx;
}

// Reads the rows of `algo` (sorted by size) from a dtcoll-bench table; their count, or -1.
static int read_rows(const char *csv, const char *algo, fit_row **rows, int *P, dt_error *err) {
    FILE *f = fopen(csv, "r");
    *rows = NULL;
    if (!f) return dt_fail(err, DT_EXIT_USAGE, "%s: cannot open it: %s", csv, strerror(errno));
    char line[1024];
    if (!fgets(line, sizeof line, f) || strncmp(line, "ranks,bytes,count,algo,time_us,", 31)) {
        fclose(f);
        return dt_fail(err, DT_EXIT_USAGE, "%s: line 1: expected dtcoll-bench's CSV header "
                       "(ranks,bytes,count,algo,time_us,...)", csv);
    }
    int n = 0, lineno = 1;
    *rows = mallocCheck(MAX_FIT_ROWS * sizeof **rows), *P = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        int ranks;
        double bytes, t_us;
        char name[32];
        const char *bad = NULL;
        char why[96];
        if (sscanf(line, "%d,%lf,%*[^,],%31[^,],%lf,", &ranks, &bytes, name, &t_us) != 4 ||
            ranks < 2 || !(bytes > 0) || !isfinite(bytes) || !(t_us > 0) || !isfinite(t_us))
            bad = "expected ranks >= 2, bytes > 0, an algorithm and time_us > 0";
        else if (strcmp(name, algo)) continue;
        else if (*P && ranks != *P)
            snprintf(why, sizeof why, "%d ranks, but earlier rows have %d: one table per rank "
                     "count", ranks, *P), bad = why;
        else if (n == MAX_FIT_ROWS) bad = "more than 4096 rows of the algorithm";
        if (bad) {
            fclose(f), free(*rows), *rows = NULL;
            return dt_fail(err, DT_EXIT_USAGE, "%s: line %d: %s", csv, lineno, bad);
        }
        *P = ranks;
        (*rows)[n++] = (fit_row){2.0 * (ranks - 1) / ranks * bytes, t_us * 1e-6};
    }
    fclose(f);
    if (n) qsort(*rows, (size_t)n, sizeof **rows, by_x);
    return n;
}

// Hockney's t(n) = t0 + n/r∞ (Parallel Computing 20, 1994): the bandwidth is the asymptotic
// one, so β is the slope over the large end of the sweep — sizes at least 1/16 of the largest,
// and at least two sizes — where a real link runs once the data has left the caches (the
// sizes of a step's fusion buckets); t0 = 2(P−1)·α is the intercept of the line through the
// two smallest sizes, kept within [0, their fastest time].
int dt_profile_fit_links(const char *csv, const char *algo, dt_link_fit *fit, dt_error *err) {
    memset(fit, 0, sizeof *fit);
    fit_row *r;
    int P, n = read_rows(csv, algo, &r, &P, err);
    if (n < 0) return -1;
    if (n < 2 || !(r[n - 1].x > r[0].x)) {
        free(r);
        return dt_fail(err, DT_EXIT_USAGE, "%s: %d row(s) of algorithm %s at distinct sizes: "
                       "expected at least 2 (run dtcoll-bench --algos %s over a range of "
                       "sizes)", csv, n, algo, algo);
    }
    int rc = dt_profile_fit_rows(r, n, P, csv, algo, fit, err);
    free(r);
    return rc;
}

int dt_profile_fit_rows(dt_fit_row *r, int n, int P, const char *from, const char *algo,
                        dt_link_fit *fit, dt_error *err) {
    const char *csv = from;
    memset(fit, 0, sizeof *fit);
    DT_ASSERT(n >= 1 && P >= 2);
    qsort(r, (size_t)n, sizeof *r, by_x);
    if (!(r[n - 1].x > r[0].x)) {  // one size: no intercept to fit, the latency is left out
        double y = 0;
        for (int i = 0; i < n; i++) y += r[i].y;
        fit->beta = y / n / r[0].x;
        fit->fit_from = fit->fit_to = r[0].x * P / (2.0 * (P - 1));
        snprintf(fit->from, sizeof fit->from, "%s", from);
        return 0;
    }
    int lo = n - 1;  // the large end: [lo, n)
    while (lo > 0 && (r[lo - 1].x >= r[n - 1].x / 16 || r[lo].x == r[n - 1].x)) lo--;
    while (lo > 0 && r[lo - 1].x == r[lo].x) lo--;  // every row of its smallest size
    int hi = 1;      // the small end: [0, hi), the two smallest sizes
    while (r[hi].x == r[0].x) hi++;
    for (hi++; hi < n && r[hi].x == r[hi - 1].x;) hi++;
    double c_big, beta, c0, s_small, y_min = INFINITY;
    fit_line(r, lo, n, &c_big, &beta);
    fit_line(r, 0, hi, &c0, &s_small);
    for (int i = 0; i < hi; i++) y_min = fmin(y_min, r[i].y);
    fit->fit_from = r[lo].x * P / (2.0 * (P - 1)), fit->fit_to = r[n - 1].x * P / (2.0 * (P - 1));
    if (!(beta > 0) || !isfinite(beta))
        return dt_fail(err, DT_EXIT_USAGE, "%s: the %s times do not grow with the size from %.0f "
                       "to %.0f bytes (fitted %g s per byte): expected a bandwidth-bound table",
                       csv, algo, fit->fit_from, fit->fit_to, beta);
    fit->alpha = fmin(fmax(c0, 0), y_min) / (2.0 * (P - 1));
    fit->beta = beta;
    snprintf(fit->from, sizeof fit->from, "%s", csv);
    return 0;
}
