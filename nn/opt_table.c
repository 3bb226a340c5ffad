// opt_table.c — the walks over an option table (opt_table.h): reading argv and the
// environment into a program's options struct, writing --help, wording refusals.
#include "opt_table.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// getopt_long's code of the tables' options: DT_OPT_CODE + the option's place in all tables
// (above every character and above the codes of a program's extra options)
#define DT_OPT_CODE 0x10000
// Help text starts in this column; a longer "  --name ARG" is followed by two spaces
#define DT_OPT_HELP_COL 24
// and is broken into lines of at most this many columns
#define DT_OPT_WIDTH 100
// getopt_long's code of --help, which every program takes
#define DT_OPT_HELP (DT_OPT_CODE - 1)

// A number as typed: decimal digits from its first character (strtoll and strtod would also
// skip leading blanks, and strtod read C99's hexadecimal floats, "0x1p4")
static int plain(const char *s) {
    return *s && !isspace((unsigned char)*s) && !strpbrk(s, "xX");
}

int dt_parse_int(const char *s, long long lo, long long hi, long long *out) {
    char *end;
    if (!plain(s)) return -1;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int dt_parse_real(const char *s, double lo, double hi, double *out) {
    char *end;
    if (!plain(s)) return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

int dt_opt_bad(dt_error *err, const char *what, const char *s, const char *want) {
    dt_fail(err, DT_EXIT_USAGE, "%s%s: '%s' is not %s", what[0] == '-' ? "option " : "",
            what, s, want);
    return -1;
}

// A choice's words, "a, b or c", for its message
static const char *choice_want(const dt_opt *d, char *buf, size_t n) {
    size_t len = strlen(d->choices), k = 0;
    const char *last = strrchr(d->choices, '|');
    for (size_t i = 0; i < len && k + 5 < n; i++) {
        if (d->choices + i == last) k += (size_t)snprintf(buf + k, n - k, " or ");
        else if (d->choices[i] == '|') k += (size_t)snprintf(buf + k, n - k, ", ");
        else buf[k++] = d->choices[i];
    }
    buf[k < n ? k : n - 1] = 0;
    return buf;
}

static int set_choice(const dt_opt *d, const char *what, const char *s, int *v, dt_error *err) {
    size_t n = strlen(s);
    int i = 0;
    for (const char *c = d->choices; c; c = strchr(c, '|'), c = c ? c + 1 : c, i++) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && !strncmp(c, s, n)) return *v = i, 0;
    }
    char want[256];
    return dt_opt_bad(err, what, s, d->want ? d->want : choice_want(d, want, sizeof want));
}

int dt_opt_set(const dt_opt *d, const char *what, const char *s, void *base, dt_error *err) {
    void *v = (char *)base + d->offset;
    const char *want = d->want ? d->want : "valid";
    long long i;
    double x;
    switch (d->type) {
    case DT_OPT_SECTION: break;
    case DT_OPT_SWITCH:
    case DT_OPT_CLEAR:
        DT_ASSERT(d->size == sizeof(int));
        if (!s) return *(int *)v = d->type == DT_OPT_SWITCH, 0;
        if (strcmp(s, "0") && strcmp(s, "1")) return dt_opt_bad(err, what, s, "0 or 1");
        return *(int *)v = (s[0] == '1') == (d->type == DT_OPT_SWITCH), 0;
    case DT_OPT_INT:
        DT_ASSERT(d->size == sizeof(int));
        if (dt_parse_int(s, (long long)d->lo, (long long)d->hi, &i))
            return dt_opt_bad(err, what, s, want);
        return *(int *)v = (int)i, 0;
    case DT_OPT_I64:
        DT_ASSERT(d->size == sizeof(int64_t));
        if (dt_parse_int(s, (long long)d->lo, (long long)d->hi, &i))
            return dt_opt_bad(err, what, s, want);
        return *(int64_t *)v = i, 0;
    case DT_OPT_U64: {
        DT_ASSERT(d->size == sizeof(uint64_t));
        char *end;
        errno = 0;
        unsigned long long u = strtoull(s, &end, 10);
        if (errno || !plain(s) || end == s || *end || strchr(s, '-') || (double)u < d->lo ||
            (double)u > d->hi)
            return dt_opt_bad(err, what, s, want);
        return *(uint64_t *)v = u, 0;
    }
    case DT_OPT_REAL:
    case DT_OPT_FLOAT:
        DT_ASSERT(d->size == (d->type == DT_OPT_REAL ? sizeof(double) : sizeof(float)));
        if (dt_parse_real(s, d->lo, d->hi, &x)) return dt_opt_bad(err, what, s, want);
        if (d->type == DT_OPT_REAL) *(double *)v = x;
        else *(float *)v = (float)x;
        return 0;
    case DT_OPT_STRING:
        if (strlen(s) >= d->size) return dt_opt_bad(err, what, s, "short enough");
        memcpy(v, s, strlen(s) + 1);
        return 0;
    case DT_OPT_TEXT:
        DT_ASSERT(d->size == sizeof(const char *));
        return *(const char **)v = s, 0;
    case DT_OPT_CHOICE: DT_ASSERT(d->size == sizeof(int)); return set_choice(d, what, s, v, err);
    case DT_OPT_CUSTOM: return d->parse(d, what, s, v, err);
    }
    return 0;
}

static int used(const dt_opt_table *t, int i) {
    const dt_opt *d = &t->opts[i];
    if (d->type == DT_OPT_SECTION) return 0;
    if (!t->only) return 1;
    size_t n = strlen(d->name);
    for (const char *p = t->only; (p = strstr(p, d->name)); p += n)
        if ((p == t->only || p[-1] == ',') && (p[n] == ',' || !p[n])) return 1;
    return 0;
}

int dt_opt_find(const dt_opt_table *t, const char *name) {
    for (int i = 0; i < t->n; i++)
        if (used(t, i) && !strcmp(t->opts[i].name, name)) return i;
    return -1;
}

int dt_opt_given(const dt_opt_table *t, const char *name) {
    int i = dt_opt_find(t, name);
    return i >= 0 && t->given && t->given[i];
}

// A row of one letter is the short option -j alone
static int is_letter(const dt_opt *d) { return d->name && d->name[0] && !d->name[1]; }

// The getopt_long array of the tables, zero-terminated, and the short options' letters
// ("j:"); both malloc'ed
static struct option *long_options(const dt_opt_table *t, int nt, char **shortopts) {
    int n = 2, k = 0, m = 0;
    for (int j = 0; j < nt; j++) n += t[j].n;
    struct option *lo = calloc((size_t)n, sizeof *lo);
    char *so = calloc(2 * (size_t)n + 1, 1);
    DT_ASSERT(lo && so);
    for (int j = 0, code = DT_OPT_CODE; j < nt; j++)
        for (int i = 0; i < t[j].n; i++, code++) {
            const dt_opt *d = &t[j].opts[i];
            if (!used(&t[j], i)) continue;
            if (is_letter(d)) {
                so[m++] = d->name[0];
                if (d->arg) so[m++] = ':';
            } else {
                lo[k++] = (struct option){d->name, d->arg ? 1 : 0, 0, code};
            }
        }
    lo[k] = (struct option){"help", 0, 0, DT_OPT_HELP};
    *shortopts = so;
    return lo;
}

// The table and the option of getopt_long's code c (a table's code, or a short option's
// letter); 0, or -1 for a code not of the tables
static int option_of(const dt_opt_table *t, int nt, int c, int *table, int *opt) {
    for (int j = 0, first = DT_OPT_CODE; j < nt; first += t[j].n, j++)
        for (int i = 0; i < t[j].n; i++) {
            const dt_opt *d = &t[j].opts[i];
            int letter = c < DT_OPT_CODE && is_letter(d) && d->name[0] == c;
            if (used(&t[j], i) && (c == first + i || letter)) return *table = j, *opt = i, 0;
        }
    return -1;
}

static int refuse(const char *prog, int quiet, const char *msg) {
    if (!quiet) fprintf(stderr, "%s: %s (see %s --help)\n", prog, msg, prog);
    return DT_EXIT_USAGE;
}

int dt_opts_parse(int argc, char **argv, const dt_opt_table *t, int nt, const char *prog,
                  int quiet) {
    char *shortopts;
    struct option *lo = long_options(t, nt, &shortopts);
    int rc = 0, seq = 0;
    opterr = 0;
    optind = 1;
    for (int c; !rc && (c = getopt_long(argc, argv, shortopts, lo, NULL)) != -1;) {
        int j, i;
        dt_error err;
        if (c == DT_OPT_HELP) {
            rc = 1;
        } else if (c != '?' && option_of(t, nt, c, &j, &i) == 0) {
            const dt_opt *d = &t[j].opts[i];
            char what[80];
            snprintf(what, sizeof what, "-%s%s", is_letter(d) ? "" : "-", d->name);
            if (dt_opt_set(d, what, d->arg ? optarg : NULL, t[j].base, &err)) {
                rc = refuse(prog, quiet, err.msg);
            } else {
                if (t[j].given) t[j].given[i] = (unsigned char)(++seq < 255 ? seq : 255);
                if (t[j].typed) t[j].typed[i] = d->arg ? optarg : NULL;
            }
        } else {
            snprintf(err.msg, sizeof err.msg, "unknown option or missing value: %s",
                     argv[optind - 1]);
            rc = refuse(prog, quiet, err.msg);
        }
    }
    if (!rc && optind < argc) {
        dt_error err;
        snprintf(err.msg, sizeof err.msg, "unexpected argument '%s'", argv[optind]);
        rc = refuse(prog, quiet, err.msg);
    }
    free(lo);
    free(shortopts);
    return rc;
}

int dt_opts_env(const dt_opt_table *t, dt_error *err) {
    for (int i = 0; i < t->n; i++) {
        const dt_opt *d = &t->opts[i];
        const char *v = used(t, i) && d->env ? getenv(d->env) : NULL;
        if (v && *v && dt_opt_set(d, d->env, v, t->base, err)) return -1;
    }
    return 0;
}

void dt_opts_usage(FILE *f, const dt_opt_table *t) {
    for (int i = 0; i < t->n; i++) {
        const dt_opt *d = &t->opts[i];
        char text[2048], arg[1024] = "", head[128];
        if (d->type == DT_OPT_SECTION) {
            if (!t->only) fprintf(f, "%s\n", d->help);
            continue;
        }
        if (!used(t, i) || !d->help) continue;  // a hidden option (testing, an old name)
        if (d->help_arg) snprintf(text, sizeof text, d->help, d->help_arg(arg, sizeof arg));
        else snprintf(text, sizeof text, "%s", d->help);
        int n = snprintf(head, sizeof head, "  -%s%s%s%s", is_letter(d) ? "" : "-", d->name,
                         d->arg ? " " : "",
                         d->arg ? d->arg : "");
        fprintf(f, "%s%*s", head, n < DT_OPT_HELP_COL - 1 ? DT_OPT_HELP_COL - n : 2, "");
        // each line of the text, broken at a space before DT_OPT_WIDTH (a longer word alone)
        for (const char *p = text; *p;) {
            size_t n = strcspn(p, "\n"), room = DT_OPT_WIDTH - DT_OPT_HELP_COL;
            while (n > room) {
                size_t cut = room;
                while (cut > 0 && p[cut] != ' ') cut--;
                if (!cut) break;
                fprintf(f, "%.*s\n%*s", (int)cut, p, DT_OPT_HELP_COL, "");
                p += cut + 1, n -= cut + 1;
            }
            fprintf(f, "%.*s\n", (int)n, p);
            p += n;
            if (*p == '\n' && *++p) fprintf(f, "%*s", DT_OPT_HELP_COL, "");
        }
    }
}
