// opts_tables.c DTSIM — each dtsim command's --help is exactly its option-table rows
// (nn/opt_table.h, sim/dtsim.h: dtsim_main_tables, dtsim_plan_tables, dtsim_calibrate_tables):
// the program prints the bytes dt_opts_usage writes from the tables, every row with help is
// one entry of it and every entry a row (the one exception: --help, which every parser takes);
// an option `dtsim plan` shares with dtsim is dtsim's row itself, not a copy (where plan's
// option means something else, a list of candidates, it is named here); and a row added to the
// tables from outside them (this file) is listed and read like the others.
// Compiled with the launcher's sources (tests/sim/CMakeLists.txt), run on the dtsim binary.
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L  // popen, open_memstream
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtsim.h"

static int fails;
#define CHECK(ok, ...) \
    do { \
        if (!(ok)) fails++, printf("FAIL: "), printf(__VA_ARGS__), printf("\n"); \
    } while (0)

// What a command's tables print, as --help prints it
static char *usage_of(const dt_opt_table *t, int n) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    for (int i = 0; i < n; i++) dt_opts_usage(f, &t[i]);
    fclose(f);
    return buf;
}

static char *run_help(const char *dtsim, const char *sub) {
    char cmd[1024], *buf = NULL;
    size_t len = 0, k;
    snprintf(cmd, sizeof cmd, "'%s' %s --help", dtsim, sub);
    FILE *p = popen(cmd, "r"), *f = open_memstream(&buf, &len);
    char chunk[4096];
    while (p && (k = fread(chunk, 1, sizeof chunk, p)) > 0) fwrite(chunk, 1, k, f);
    fclose(f);
    CHECK(p && pclose(p) == 0, "%s: exit status not 0", cmd);
    return buf;
}

// A row of table t that --help lists (used, with help)
static int listed(const dt_opt_table *t, int i) {
    const dt_opt *d = &t->opts[i];
    return d->type != DT_OPT_SECTION && d->help && dt_opt_find(t, d->name) == i;
}

// The lines of help that begin the entry "  --name" or "  -j" (followed by a space or the end)
static int entries_of(const char *help, const char *name) {
    char head[96];
    int n = 0;
    snprintf(head, sizeof head, "\n  -%s%s", name[1] ? "-" : "", name);
    for (const char *p = help; (p = strstr(p, head)); p += strlen(head))
        n += p[strlen(head)] == ' ' || p[strlen(head)] == '\n';
    return n;
}

static int lines_starting(const char *help, const char *prefix) {
    int n = 0;
    for (const char *p = help; (p = strstr(p, prefix)); p++) n++;
    return n;
}

// --help of `dtsim sub` against its tables; returns the number of rows listed
static int check_command(const char *dtsim, const char *sub, const dt_opt_table *t, int nt,
                         const char *hidden) {
    char *want = usage_of(t, nt), *got = run_help(dtsim, sub);
    CHECK(got && !strcmp(want, got), "dtsim %s --help is not what its tables print", sub);
    char *help = malloc(strlen(want) + 2);
    sprintf(help, "\n%s", want);
    int rows = 0;
    for (int j = 0; j < nt; j++)
        for (int i = 0; i < t[j].n; i++) {
            const dt_opt *d = &t[j].opts[i];
            if (listed(&t[j], i)) {
                rows++;
                CHECK(entries_of(help, d->name) == 1, "dtsim %s --help: --%s listed %d times",
                      sub, d->name, entries_of(help, d->name));
            } else if (d->type != DT_OPT_SECTION && dt_opt_find(&t[j], d->name) == i) {
                CHECK(strstr(hidden, d->name) != NULL, "dtsim %s: --%s has no help", sub,
                      d->name);
            }
        }
    int entries = lines_starting(help, "\n  -"), extra = entries_of(help, "help");
    CHECK(entries == rows + extra, "dtsim %s --help: %d entries for %d rows (and %d --help)",
          sub, entries, rows, extra);
    printf("ok: dtsim%s%s --help: %d entries, each a row of its %d tables\n", *sub ? " " : "",
           sub, entries, nt);
    free(help);
    free(want);
    free(got);
    return rows;
}

// The row named name among the tables' used rows, or NULL
static const dt_opt *row_named(const dt_opt_table *t, int nt, const char *name) {
    for (int j = 0; j < nt; j++) {
        int i = dt_opt_find(&t[j], name);
        if (i >= 0) return &t[j].opts[i];
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) return fprintf(stderr, "usage: opts_tables DTSIM\n"), 2;
    dt_coll_cli cc;
    dt_opt_table m[DTSIM_MAIN_TABLES], p[DTSIM_PLAN_TABLES], c[1];
    int nm = dtsim_main_tables(&cc, m), np = dtsim_plan_tables(p), nc = dtsim_calibrate_tables(c);
    check_command(argv[1], "", m, nm, "");
    check_command(argv[1], "sweep", m, nm, "");
    check_command(argv[1], "plan", p, np, "straggler");  // refused: simulated, not searched
    check_command(argv[1], "calibrate", c, nc, "");

    // plan's options of dtsim's names: dtsim's rows, but for those whose values mean another
    // thing there (lists of candidates; the plot of the ranking)
    const char *lists = ",gpu,gpus,gpus-per-node,nics,fusion,per-gpu-batch,precision,topology,"
                        "shard,fail-rate,ckpt-interval,straggler,plot,";
    int shared = 0;
    for (int j = 0; j < np; j++)
        for (int i = 0; i < p[j].n; i++) {
            const dt_opt *d = &p[j].opts[i], *twin;
            char key[64];
            if (d->type == DT_OPT_SECTION || dt_opt_find(&p[j], d->name) != i ||
                !(twin = row_named(m, nm, d->name)))
                continue;
            snprintf(key, sizeof key, ",%s,", d->name);
            if (strstr(lists, key)) {
                CHECK(d != twin, "plan's --%s is named as its own row but is dtsim's", d->name);
            } else {
                CHECK(d == twin, "plan's --%s is a copy of dtsim's row, not the row", d->name);
                shared += d == twin;
            }
        }
    printf("ok: dtsim plan takes %d of dtsim's rows as they are\n", shared);

    // a row added from outside: listed in --help's place after the others, and read
    typedef struct { int probe; } extra_opts;
    static const dt_opt extra[] = {
        {.name = "probe-extra", .arg = "N", .type = DT_OPT_INT, DT_OPT_AT(extra_opts, probe),
         .lo = 1, .hi = 9, .want = "1..9", .help = "a row added from outside the tree"}};
    extra_opts x = {0};
    dt_opt_table q[DTSIM_PLAN_TABLES + 1];
    memcpy(q, p, sizeof p);
    q[np] = (dt_opt_table){.opts = extra, .n = 1, .base = &x};
    char *help = usage_of(q, np + 1), *plain = usage_of(p, np);
    CHECK(!strncmp(help, plain, strlen(plain)) &&
              !strcmp(help + strlen(plain), "  --probe-extra N       a row added from outside "
                                                 "the tree\n"),
          "the added row's entry: %s", help + strlen(plain));
    char *ok[] = {"dtsim plan", "--probe-extra", "7", NULL}, *bad[] = {"x", "--probe-extra",
                                                                        "10", NULL};
    CHECK(dt_opts_parse(3, ok, q, np + 1, "dtsim plan", 1) == 0 && x.probe == 7,
          "--probe-extra 7 not read");
    CHECK(dt_opts_parse(3, bad, q, np + 1, "dtsim plan", 1) == 2, "--probe-extra 10 taken");
    CHECK(dt_opts_parse(3, ok, p, np, "dtsim plan", 1) == 2, "--probe-extra read without its row");
    printf("ok: a row added to plan's tables is listed and read\n");
    free(help);
    free(plain);
    if (!fails) printf("PASS opts_tables\n");
    return fails != 0;
}
