// test_sim_rank_protocol.c — what dtsim's launcher and its rank program say to each other
// (sim/rank_run.h, sim/rank_result.h): the run description, every field other than zero,
// comes back byte for byte through its file; an absent, foreign, other-version, truncated or
// damaged file is refused (exit 2) saying which; the result comes back exactly through its
// JSON file, and a broken file is refused naming what is wrong.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rank_result.h"
#include "rank_run.h"
#include "testutil.h"

// Every field set, none to zero (padding stays zero: calloc).
static dt_rank_run *unusual_run(void) {
    dt_rank_run *r = calloc(1, sizeof *r);
    assert_non_null(r);
    snprintf(r->model, sizeof r->model, "resnet18");
    snprintf(r->gpu, sizeof r->gpu, "a100");
    r->prec = DT_PREC_FP16;
    r->batch = 7, r->accumulate = 3, r->iters = 5, r->warmup = 2, r->lars = 1;
    r->model_side = 64, r->model_classes = 7;
    r->seq_len = 512, r->vocab = 30522, r->flash = 1, r->shard = 3;
    r->coll = dt_coll_opts_default();
    r->coll.algo = DT_ALGO_TORUS2D, r->coll.inner = DT_ALGO_RHD;
    r->coll.wire_f16 = 1, r->coll.group = 4, r->coll.hier_rs = 1;
    r->coll.tx = 2, r->coll.ty = 3, r->coll.coarsen = 4, r->coll.coarsen_tree = 5;
    r->coll.cost.alpha = 1.25e-6, r->coll.cost.beta = 1.0 / 3e10;  // not 9 digits: exact too
    r->coll.cost.gamma = 1.23456789e-10, r->coll.cost.share = 8;
    r->fusion = (dt_fusion_opts){DT_FUSION_BYTES, 1000000, 0};
    r->overlap = 1;
    r->arena = 123456789012ull;
    r->time_scale = 0.1 + 0.2;
    r->n_kind_scales = 3;
    r->kind_scale[0] = 1.5, r->kind_scale[1] = 0.25, r->kind_scale[2] = 3;
    dt_error err = {0};
    if (dt_straggler_parse("node:1:1.5,cv:0.05", "test", &r->straggler, &err))
        fail_msg("%s", err.msg);
    r->seed = UINT64_MAX, r->gpus_per_node = 4, r->cpu = 1;
    snprintf(r->trace, sizeof r->trace, "/tmp/a b=c.json");
    snprintf(r->result, sizeof r->result, "/tmp/r.json");
    r->progress = 1;
    r->rank = (dt_rank_settings){3, 16, 4, 48, 0.05, 0.8, 1e-4};
    return r;
}

static void test_rank_run_round_trips_exactly(void **state) {
    (void)state;
    char dir[] = "/tmp/dt_rank_run_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/rank_run.bin", dir);
    dt_rank_run *in = unusual_run(), *out = calloc(1, sizeof *out);
    dt_error err = {0};
    if (dt_rank_run_write(path, in, &err) || dt_rank_run_read(path, out, &err))
        fail_msg("%s", err.msg);
    assert_memory_equal(in, out, sizeof *in);
    unlink(path);
    rmdir(dir);
    free(in), free(out);
}

// good written to path, `len` bytes at `at` replaced by `bytes` (len 0: cut there; at -1:
// appended, or nothing changed with len 0), then read: refused with DT_EXIT_USAGE and a message holding `names`.
static void refused(const char *path, const dt_rank_run *good, long at, const void *bytes,
                    size_t len, const char *names) {
    dt_error err = {0};
    dt_rank_run *out = calloc(1, sizeof *out);
    if (dt_rank_run_write(path, good, &err)) fail_msg("%s", err.msg);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    if (at < 0) fseek(f, 0, SEEK_END);
    else fseek(f, at, SEEK_SET);
    if (len) assert_int_equal(fwrite(bytes, 1, len, f), len);
    fclose(f);
    if (!len && at >= 0) assert_int_equal(truncate(path, at), 0);
    if (!dt_rank_run_read(path, out, &err)) fail_msg("accepted (%s)", names);
    printf("# %s\n", err.msg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    if (!strstr(err.msg, names)) fail_msg("message lacks '%s'", names);
    free(out);
}

static void test_rank_run_bad_files_are_refused_saying_why(void **state) {
    (void)state;
    char dir[] = "/tmp/dt_rank_run_XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/rank_run.bin", dir);
    dt_rank_run *good = unusual_run();
    dt_rank_run *out = calloc(1, sizeof *out);
    dt_error err = {0};
    assert_int_equal(dt_rank_run_read(path, out, &err), -1);  // absent
    printf("# %s\n", err.msg);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, "No such file"));
    unsigned version = DT_RANK_RUN_VERSION + 1, size = (unsigned)sizeof *good + 8;
    refused(path, good, 0, "{\"gpus\":", 8, "not a dtsim run description");
    refused(path, good, 8, &version, 4, "dtsim and dtsim_rank.so are of different builds");
    refused(path, good, 12, &size, 4, "dtsim and dtsim_rank.so are of different builds");
    refused(path, good, 10, "", 0, "not a dtsim run description");  // inside the header
    refused(path, good, 100, "", 0, "truncated or too long");
    refused(path, good, -1, "x", 1, "truncated or too long");
    memset(good->model, 'x', sizeof good->model);  // no terminating NUL
    refused(path, good, -1, "", 0, "damaged");
    unlink(path);
    rmdir(dir);
    free(good), free(out);
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
        cmocka_unit_test(test_rank_run_round_trips_exactly),
        cmocka_unit_test(test_rank_run_bad_files_are_refused_saying_why),
        cmocka_unit_test(test_rank_result_round_trips_and_broken_files_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
