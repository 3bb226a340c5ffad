// dtsim_offers.c — `dtsim plan --offer NAME=FLAGS ...`: the offers a buyer holds, priced as
// offered. Each offer is a dtsim command line (its GPU, node, NICs, network, price per GPU-hour);
// flags given outside any --offer (the model, the batch, the epochs) go to every offer. Each is
// answered by this same dtsim (--analytic, or SimGrid with --simulate) in a child process, and
// the table gives its description as dtsim read it, its time-to-train and cost with the band
// measured on held-out runs (bench/HELDOUT.md), and whether the offers are told apart: two
// whose bands overlap are tied (the error measured does not separate them), two whose cost
// bands overlap and time bands do not are tied on cost, and the answer is the offer the
// bands tell to buy (verdict, below), where they tell one.
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtsim.h"
#include "json.h"
#include "opt_table.h"

extern char **environ;

#define MAX_OFFERS 8
#define MAX_ARGS 96

typedef struct {
    char name[32], flags[512];
    int ok;
    double train_s, lo_s, hi_s, cost, cost_lo, cost_hi;
    char gpu[16], precision[8], basis[224], calibration[96];
    int gpus, gpn, nics, sharp;
    double nic_gbs;
} offer;

// Split s on blanks into v (at most n - 1 words; NULL-terminated); the words point into s
static int split(char *s, char **v, int n) {
    int k = 0;
    for (char *t = strtok(s, " \t"); t && k < n - 1; t = strtok(NULL, " \t")) v[k++] = t;
    v[k] = NULL;
    return k;
}

// Runs this program with args; its stdout into *out (malloc'ed); the exit code (-1: failed)
static int run_child(char **args, char **out) {
    int fd[2];
    if (pipe(fd)) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) return close(fd[0]), -1;
    size_t cap = 1 << 16, len = 0;
    char *buf = mallocCheck(cap);
    ssize_t r;
    while ((r = read(fd[0], buf + len, cap - len - 1)) > 0)
        if ((len += (size_t)r) + 1 == cap) {
            buf = realloc(buf, cap *= 2);
            DT_ASSERT(buf);
        }
    buf[len] = 0;
    close(fd[0]);
    int st;
    if (waitpid(pid, &st, 0) < 0) return free(buf), -1;
    *out = buf;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double num(const dt_json *o, const char *k) {
    const dt_json *v = dt_json_get(o, k);
    return v && (v->type == DT_JSON_INT || v->type == DT_JSON_REAL) ? v->d : NAN;
}
static void str(const dt_json *o, const char *k, char *dst, size_t n) {
    const dt_json *v = dt_json_get(o, k);
    snprintf(dst, n, "%s", v && v->type == DT_JSON_STRING ? v->s : "");
}

static int answer(offer *f, char **common, int nc, int simulate) {
    char flags[512], *args[MAX_ARGS];
    snprintf(flags, sizeof flags, "%s", f->flags);
    int n = 0;
    args[n++] = "dtsim";
    n += split(flags, args + n, MAX_ARGS - nc - 6);
    for (int i = 0; i < nc; i++) args[n++] = common[i];
    args[n++] = "--json", args[n++] = "--quiet";
    if (!simulate) args[n++] = "--analytic";
    args[n] = NULL;
    char *out = NULL;
    fflush(stdout), fflush(stderr);
    int rc = run_child(args, &out);
    if (rc) {
        fprintf(stderr, "dtsim plan: --offer %s: dtsim refused it (exit %d, its message above)\n",
                f->name, rc);
        free(out);
        return rc;
    }
    char err[128];
    dt_json *j = dt_json_parse_flags(out, strlen(out), DT_JSON_REALS, err, sizeof err);
    free(out);
    const dt_json *r = j && j->type == DT_JSON_ARRAY && j->n > 0 ? j->child : NULL;
    if (!r) {
        fprintf(stderr, "dtsim plan: --offer %s: no result (%s)\n", f->name, err);
        dt_json_free(j);
        return 1;
    }
    f->train_s = num(r, "train_s");
    f->lo_s = num(r, "train_s_low"), f->hi_s = num(r, "train_s_high");
    f->cost = num(r, "cost"), f->cost_lo = num(r, "cost_low"), f->cost_hi = num(r, "cost_high");
    f->gpus = (int)num(r, "gpus"), f->gpn = (int)num(r, "gpus_per_node");
    f->nics = (int)num(r, "nics"), f->nic_gbs = num(r, "nic_bw_gbs");
    const dt_json *sh = dt_json_get(r, "sharp");
    f->sharp = sh && sh->type == DT_JSON_BOOL && sh->i;
    str(r, "gpu", f->gpu, sizeof f->gpu);
    str(r, "precision", f->precision, sizeof f->precision);
    str(r, "band_basis", f->basis, sizeof f->basis);
    str(r, "calibration", f->calibration, sizeof f->calibration);
    f->ok = 1;
    dt_json_free(j);
    return 0;
}

// 1 when two offers' bands overlap: in time, and in cost where both are priced
// --offer NAME=FLAGS as dtsim plan's table reads it: its shape only (the offer is answered below)
int dtsim_offer_shape(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    const char *eq = strchr(s, '=');
    (void)v;
    if (!eq || eq == s || eq - s >= 32 || !eq[1] || strlen(eq + 1) >= 512)
        return dt_opt_bad(err, what, s, d->want);
    return 0;
}

static int time_tied(const offer *a, const offer *b) {
    return a->lo_s <= b->hi_s && b->lo_s <= a->hi_s;
}

// both priced and their cost bands overlap
static int cost_tied(const offer *a, const offer *b) {
    return !isnan(a->cost) && !isnan(b->cost) && a->cost_lo <= b->cost_hi &&
           b->cost_lo <= a->cost_hi;
}

static int tied(const offer *a, const offer *b) {
    if (isnan(a->cost) || isnan(b->cost)) return time_tied(a, b);
    return time_tied(a, b) && cost_tied(a, b);
}

// The offer to buy, -1 when the bands do not tell: priced, the cheapest when its cost band
// lies below every other's; else, of the offers whose cost bands overlap the cheapest's, the
// one whose time band lies below every other's there (as cheap within the error, faster
// beyond it). Unpriced, the fastest when its time band lies below every other's. *how says
// which, in words.
static int verdict(const offer *of, int n, const char **how) {
    int priced = 1, best = 0;
    for (int i = 0; i < n; i++) priced &= !isnan(of[i].cost);
    for (int i = 1; i < n; i++)
        if (priced ? of[i].cost < of[best].cost : of[i].train_s < of[best].train_s) best = i;
    int apart = 1;
    for (int i = 0; i < n; i++)
        if (i != best && (priced ? cost_tied(&of[best], &of[i]) : time_tied(&of[best], &of[i])))
            apart = 0;
    if (apart) {
        *how = priced ? "cheaper than every other offer beyond the bands"
                      : "faster than every other offer beyond the bands";
        return best;
    }
    if (!priced) return -1;
    int fast = -1;  // among the offers as cheap as the cheapest within the bands
    for (int i = 0; i < n; i++)
        if ((i == best || cost_tied(&of[best], &of[i])) &&
            (fast < 0 || of[i].train_s < of[fast].train_s))
            fast = i;
    for (int i = 0; i < n; i++)
        if (i != fast && (i == best || cost_tied(&of[best], &of[i])) &&
            time_tied(&of[fast], &of[i]))
            return -1;
    *how = "as cheap as the cheapest within the bands, and faster than every offer that is, "
           "beyond the bands";
    return fast;
}

int dtsim_offers_main(int argc, char **argv) {
    offer of[MAX_OFFERS];
    char *common[MAX_ARGS];
    int n = 0, nc = 0, simulate = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--offer") && i + 1 < argc) {
            const char *v = argv[++i], *eq = strchr(v, '=');
            if (!eq || eq == v || eq - v >= (long)sizeof of[0].name || !eq[1] ||
                strlen(eq + 1) >= sizeof of[0].flags) {
                fprintf(stderr, "dtsim plan: option --offer: '%s' is not NAME=FLAGS: a name "
                        "(under 32 characters), then dtsim's options for that offer, e.g. "
                        "h100=\"--gpu h100 --gpus 1024 --price-gpu-hour 6\" (see dtsim plan "
                        "--help)\n", v);
                return 2;
            }
            if (n == MAX_OFFERS) {
                fprintf(stderr, "dtsim plan: at most %d offers\n", MAX_OFFERS);
                return 2;
            }
            memset(&of[n], 0, sizeof of[n]);
            snprintf(of[n].name, sizeof of[n].name, "%.*s", (int)(eq - v), v);
            snprintf(of[n].flags, sizeof of[n].flags, "%s", eq + 1);
            n++;
        } else if (!strcmp(a, "--simulate")) {
            simulate = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--offer")) {
            fprintf(stderr, "dtsim plan: unknown option or missing value: --offer (see dtsim "
                            "plan --help)\n");
            return 2;
        } else if (nc < MAX_ARGS - 8) {
            common[nc++] = argv[i];
        }
    }
    if (n < 1) return fprintf(stderr, "dtsim plan: no --offer given\n"), 2;
    for (int i = 0; i < n; i++) {
        int rc = answer(&of[i], common, nc, simulate);
        if (rc) return rc == 2 ? 2 : 1;
    }
    FILE *f = json ? stderr : stdout;
    fprintf(f, "%-12s %-9s %6s %-5s %-20s %10s %-22s %12s %-26s\n", "offer", "GPU", "GPUs",
            "prec", "node", "train", "(band)", "cost", "(band)");
    for (int i = 0; i < n; i++) {
        const offer *o = &of[i];
        char t[32], lo[32], hi[32], node[32], band[80], cost[32] = "-", cb[64] = "";
        dtsim_duration(o->train_s, t, sizeof t);
        dtsim_duration(o->lo_s, lo, sizeof lo);
        dtsim_duration(o->hi_s, hi, sizeof hi);
        snprintf(node, sizeof node, "%d GPU, %dx%gGb%s", o->gpn, o->nics, 8 * o->nic_gbs,
                 o->sharp ? " SHARP" : "");
        snprintf(band, sizeof band, "(%s to %s)", lo, hi);
        if (!isnan(o->cost)) {
            snprintf(cost, sizeof cost, "%.0f", o->cost);
            snprintf(cb, sizeof cb, "(%.0f to %.0f)", o->cost_lo, o->cost_hi);
        }
        fprintf(f, "%-12s %-9s %6d %-5s %-20s %10s %-22s %12s %-26s\n", o->name, o->gpu, o->gpus,
                o->precision, node, t, band, cost, cb);
    }
    for (int i = 0; i < n; i++)
        fprintf(f, "%s: band: %s; %s\n", of[i].name, of[i].basis, of[i].calibration);
    int any_tie = 0;
    for (int i = 0; i < n; i++)
        for (int k = i + 1; k < n; k++)
            if (tied(&of[i], &of[k])) {
                any_tie = 1;
                fprintf(f, "tied: %s and %s: their bands overlap, so the error measured on "
                           "held-out runs does not tell them apart\n", of[i].name, of[k].name);
            } else if (cost_tied(&of[i], &of[k])) {
                fprintf(f, "tied on cost: %s and %s: their cost bands overlap; %s trains "
                           "faster beyond the bands\n", of[i].name, of[k].name,
                        of[i].train_s < of[k].train_s ? of[i].name : of[k].name);
            }
    const char *how = "";
    int pick = n > 1 ? verdict(of, n, &how) : -1;
    if (pick >= 0)
        fprintf(f, "answer: %s, %s\n", of[pick].name, how);
    if (json) {
        dt_json_writer w;
        dt_json_writer_init(&w, stdout);
        dt_json_begin_object(&w, NULL);
        dt_json_begin_array(&w, "offers");
        for (int i = 0; i < n; i++) {
            const offer *o = &of[i];
            dt_json_begin_object(&w, NULL);
            dt_json_write_string(&w, "name", o->name);
            dt_json_write_string(&w, "flags", o->flags);
            dt_json_write_real(&w, "train_s", o->train_s);
            dt_json_write_real(&w, "train_s_low", o->lo_s);
            dt_json_write_real(&w, "train_s_high", o->hi_s);
            if (!isnan(o->cost)) {
                dt_json_write_real(&w, "cost", o->cost);
                dt_json_write_real(&w, "cost_low", o->cost_lo);
                dt_json_write_real(&w, "cost_high", o->cost_hi);
            }
            dt_json_write_string(&w, "band_basis", o->basis);
            dt_json_write_string(&w, "calibration", o->calibration);
            dt_json_end_object(&w);
        }
        dt_json_end_array(&w);
        dt_json_write_bool(&w, "tied", any_tie);
        if (pick >= 0) dt_json_write_string(&w, "answer", of[pick].name);  // absent: untold
        dt_json_end_object(&w);
        fputc('\n', stdout);
    }
    return 0;
}
