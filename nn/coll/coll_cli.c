// coll_cli.c — the table of coll_cli.h: the allreduce options of every program.
#include "coll_cli.h"

#include <stdio.h>
#include <string.h>

static int algo(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    (void)d;
    return dt_algo_parse(s, what, v, err) ? -1 : 0;
}

// hier's and torus2d's inner allreduce: the two flat algorithms without a shape of their own
static int inner(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    dt_algo a;
    if (dt_algo_parse(s, what, &a, err)) return -1;
    if (a != DT_ALGO_RING && a != DT_ALGO_RHD) return dt_opt_bad(err, what, s, d->want);
    *(dt_algo *)v = a;
    return 0;
}

static int torus(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    int x, y;
    char tail;
    if (sscanf(s, "%dx%d%c", &x, &y, &tail) != 2 || x < 1 || y < 1)
        return dt_opt_bad(err, what, s, d->want);
    ((dt_coll_opts *)v)->tx = x, ((dt_coll_opts *)v)->ty = y;
    return 0;
}

static int fusion(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    (void)d, (void)what;
    return dt_fusion_parse(s, v, err) ? -1 : 0;
}

static const char *algo_names(char *buf, size_t n) { return dt_algo_names(buf, n); }
static const char *fusion_forms(char *buf, size_t n) {
    snprintf(buf, n, "%s", DT_FUSION_VALID);
    return buf;
}

#define AT(member) DT_OPT_AT(dt_coll_cli, member)

dt_opt_table dt_coll_cli_table(dt_coll_cli *cli, unsigned char *given) {
    const dt_opt rows[] = {
        {.name = "algo", .arg = "NAME", .type = DT_OPT_CUSTOM, AT(coll.algo), .parse = algo,
         .help = "the allreduce (nccl: real GPUs only, dtrain --device cuda; auto: the cheapest\n"
                 "by the cost model at each size, bench/AUTO.md), one of:\n%s",
         .help_arg = algo_names, .env = "DTCOLL_ALGO"},
        {.name = "fusion", .arg = "SPEC", .type = DT_OPT_CUSTOM, AT(fusion), .parse = fusion,
         .help = "gradient buckets: %s", .help_arg = fusion_forms},
        {.name = "no-overlap", .type = DT_OPT_CLEAR, AT(overlap),
         .help = "start the allreduces after backward, not during it"},
        {.name = "fp16-grads", .type = DT_OPT_SWITCH, AT(coll.wire_f16),
         .help = "gradients in fp16 on the wire, summed in fp32", .env = "DTCOLL_FP16"},
        {.name = "group", .arg = "N", .type = DT_OPT_INT, AT(coll.group), .lo = 1, .hi = 1 << 20,
         .want = "a positive group size", .help = "hier: ranks per group", .env = "DTCOLL_GROUP"},
        {.name = "inner", .arg = "ring|rhd", .type = DT_OPT_CUSTOM, AT(coll.inner), .parse = inner,
         .want = "ring or rhd", .help = "hier/torus2d: the allreduce between groups (ring)",
         .env = "DTCOLL_INNER"},
        {.name = "hier-rs", .type = DT_OPT_SWITCH, AT(coll.hier_rs),
         .help = "hier: reduce-scatter/allgather variant (default reduce/bcast)"},
        {.name = "torus", .arg = "XxY", .type = DT_OPT_CUSTOM, AT(coll), .parse = torus,
         .want = "XxY with positive X and Y, e.g. 4x2", .help = "torus2d grid (default: the "
         "squarest)"},
    };
    _Static_assert(sizeof rows / sizeof *rows == DT_COLL_CLI_COUNT, "DT_COLL_CLI_COUNT");
    memcpy(cli->rows, rows, sizeof rows);
    return (dt_opt_table){.opts = cli->rows, .n = DT_COLL_CLI_COUNT, .base = cli, .given = given};
}
