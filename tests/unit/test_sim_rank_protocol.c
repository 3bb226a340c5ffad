// test_sim_rank_protocol.c — what dtsim's launcher and its rank program say to each other
// (sim/rank_opts.h, sim/rank_result.h): every option of the table, set to a value other
// than its default, comes back exactly through dt_rank_opts_to_argv and dt_rank_opts_parse;
// bad arguments are refused with a message naming the option; the result comes back exactly
// through its JSON file, and a broken file is refused naming what is wrong.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rank_opts.h"
#include "rank_result.h"
#include "testutil.h"

// Every field differs from its default; reals have at most 9 significant digits (what the
// command line carries), so they must come back bit for bit.
static dt_rank_opts unusual_opts(void) {
    dt_rank_opts o;
    dt_rank_opts_default(&o);
    snprintf(o.model, sizeof o.model, "resnet18");
    snprintf(o.gpu, sizeof o.gpu, "a100");
    o.prec = DT_PREC_FP16;
    o.batch = 7, o.iters = 5, o.warmup = 0, o.lars = 1, o.overlap = 0, o.accumulate = 3;
    o.coll.algo = DT_ALGO_TORUS2D, o.coll.inner = DT_ALGO_RHD;
    o.coll.wire_f16 = 1, o.coll.group = 4, o.coll.hier_rs = 1;
    o.coll.tx = 2, o.coll.ty = 3, o.coll.coarsen = 4, o.coll.coarsen_tree = 5;
    o.coll.cost.alpha = 1.25e-6, o.coll.cost.beta = 8.00000001e-11;
    o.coll.cost.alpha_intra = 7e-7, o.coll.cost.beta_intra = 4e-11;
    o.coll.cost.gamma = 1.23456789e-10, o.coll.cost.share = 8;
    o.fusion.mode = DT_FUSION_BYTES, o.fusion.bytes = 1000000;
    o.arena = 123456789012ull;
    o.time_scale = 1.8125;  // exact in binary and in %.17g
    snprintf(o.kind_scales, sizeof o.kind_scales, "1.5,0.25,3");
    snprintf(o.trace, sizeof o.trace, "/tmp/a b=c.json");  // a space and an '=' in a value
    o.trace_ranks = 3, o.progress = 1, o.cpu = 1;
    o.model_side = 64, o.model_classes = 7;
    snprintf(o.result, sizeof o.result, "/tmp/r.json");
    o.image_size = 16, o.classes = 4, o.synthetic_n = 48;
    o.seed = UINT64_MAX;
    o.lr = 0.05, o.momentum = 0.8, o.wd = 1e-4;
    snprintf(o.straggler, sizeof o.straggler, "node:1:1.5,cv:0.05");
    o.gpus_per_node = 4;
    o.shard = 3, o.seq_len = 512, o.vocab = 30522, o.flash = 1;
    return o;
}

// The bytes of one option's value (a fusion option by the fields its mode uses: it has
// padding, and dt_fusion_format writes only those).
static int same_value(const dt_rank_opt *d, const dt_rank_opts *a, const dt_rank_opts *b) {
    const char *x = (const char *)a + d->offset, *y = (const char *)b + d->offset;
    if (d->type == DT_RANK_OPT_FUSION) {
        const dt_fusion_opts *f = (const void *)x, *g = (const void *)y;
        return f->mode == g->mode && (f->mode != DT_FUSION_BYTES || f->bytes == g->bytes) &&
               (f->mode != DT_FUSION_SEGMENTS || f->segments == g->segments);
    }
    if (d->type == DT_RANK_OPT_STRING) return strcmp(x, y) == 0;
    return memcmp(x, y, d->size) == 0;
}

static void test_rank_opts_every_option_round_trips_exactly(void **state) {
    (void)state;
    dt_rank_opts def, in = unusual_opts(), out;
    dt_rank_opts_default(&def);
    char *argv[1 + 64] = {"dtsim_rank.so"};
    assert_true(dt_rank_opt_count <= 64);
    dt_rank_opts_to_argv(&in, argv + 1);
    dt_error err = {0};
    if (dt_rank_opts_parse(1 + dt_rank_opt_count, argv, &out, &err)) fail_msg("%s", err.msg);
    for (int i = 0; i < dt_rank_opt_count; i++) {
        const dt_rank_opt *d = &dt_rank_opt_table[i];
        printf("# %s\n", argv[1 + i]);
        if (same_value(d, &in, &def)) fail_msg("--%s: the test's value is the default", d->name);
        if (!same_value(d, &in, &out))
            fail_msg("--%s came back different: %s", d->name, argv[1 + i]);
        for (int k = 0; k < i; k++)  // one row per name and per field
            assert_true(strcmp(d->name, dt_rank_opt_table[k].name) &&
                        d->offset != dt_rank_opt_table[k].offset);
    }
    for (int i = 0; i < dt_rank_opt_count; i++) free(argv[1 + i]);
}

static void test_rank_opts_bad_argument_exits_2_naming_it(void **state) {
    (void)state;
    static const struct {
        const char *arg, *names;
    } bad[] = {{"--batch=x", "--batch"},          {"--batch=99999999999", "--batch"},
               {"--precision=fp64", "--precision"}, {"--algo=butterfly", "--algo"},
               {"--fusion=lots", "lots"},           {"--seed=-1", "--seed"},
               {"--alpha=inf", "--alpha"},          {"--nope=1", "--nope"},
               {"--batch", "--batch"},              {"batch=1", "batch=1"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *argv[] = {"dtsim_rank.so", (char *)bad[i].arg};
        dt_rank_opts o;
        dt_error err = {0};
        if (!dt_rank_opts_parse(2, argv, &o, &err)) fail_msg("%s was accepted", bad[i].arg);
        printf("# %s -> %s\n", bad[i].arg, err.msg);
        assert_int_equal(err.code, DT_EXIT_USAGE);
        if (!strstr(err.msg, bad[i].names))
            fail_msg("%s: message lacks %s", bad[i].arg, bad[i].names);
    }
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_rank_result_round_trips_and_broken_files_are_refused(void **state) {
    (void)state;
    char dir[] = "/tmp/dt_rank_result_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/result.json", dir);
    dt_rank_result in = {.gpus = 64, .iter_s = 0.100504975, .compute_s = 0.0940900679,
                         .comm_s = NAN, .exposed_s = 0, .buckets = 2, .algo = "ring",
                         .params = 25557032, .arena_used = (int64_t)1 << 40,
                         .model_comm_s = 1};
    dt_rank_result out;
    dt_error err = {0};
    if (dt_rank_result_write(path, &in, &err) || dt_rank_result_read(path, &out, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(out.gpus, 64);
    assert_true(out.iter_s == in.iter_s && out.compute_s == in.compute_s);
    assert_true(isnan(out.comm_s) && out.exposed_s == 0 && out.model_comm_s == 1);
    assert_int_equal(out.buckets, 2);
    assert_string_equal(out.algo, "ring");
    assert_true(out.params == in.params && out.arena_used == in.arena_used);
    static const struct {
        const char *text, *names;
    } broken[] = {{"{\"gpus\": 64", "at byte"},
                  {"[]", "not a JSON object"},
                  {"{\"gpus\": 64}", "\"iter_s\" is missing"},
                  {"{\"gpus\": \"64\"}", "\"gpus\" is string"}};
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++) {
        write_text(path, broken[i].text);
        if (!dt_rank_result_read(path, &out, &err)) fail_msg("%s was accepted", broken[i].text);
        printf("# %s -> %s\n", broken[i].text, err.msg);
        if (!strstr(err.msg, broken[i].names)) fail_msg("message lacks %s", broken[i].names);
    }
    unlink(path);
    assert_int_equal(dt_rank_result_read(path, &out, &err), -1);  // missing
    rmdir(dir);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank_opts_every_option_round_trips_exactly),
        cmocka_unit_test(test_rank_opts_bad_argument_exits_2_naming_it),
        cmocka_unit_test(test_rank_result_round_trips_and_broken_files_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
