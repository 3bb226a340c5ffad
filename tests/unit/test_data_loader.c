// test_data_loader.c — the prefetching loader (real/loader.c): it delivers exactly the
// batches of the direct sequential computation (permutation, shard, fill) in (epoch, step)
// order, bit for bit, whatever the queue depth and decode-thread count, for every rank;
// evaluation mode (no shuffle, keep last) covers every index once over the ranks; it resumes
// at a given step; it shuts down cleanly at any point (before the first batch, mid-epoch,
// with a full queue); a corrupt image reaches the consumer as a code-2 error naming the file,
// after the batches before it; bad configurations are rejected.
#include "test_data_util.h"

#include <time.h>

#include "loader.h"

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

// Checks every batch of loader config c against the sequential computation.
static void check_against_direct(const dt_dataset *ds, const dt_loader_config *c) {
    dt_error err = {0, ""};
    dt_loader *l = dt_loader_create(ds, c, &err);
    if (!l) fail_msg("%s", err.msg);
    int64_t steps = dt_steps_per_epoch(ds->n, c->global_batch, c->drop_last);
    assert_int_equal(dt_loader_steps_per_epoch(l), steps);
    int local = c->global_batch / c->ranks;
    size_t per = (size_t)ds->c * ds->h * ds->w;
    int64_t *perm = malloc(sizeof(int64_t) * (size_t)ds->n), *idx = malloc(sizeof(int64_t) * local);
    float *x = malloc(sizeof(float) * per * local);
    int32_t *lab = malloc(sizeof(int32_t) * local);
    int64_t batches = 0;
    for (int64_t e = c->first_epoch; e < c->first_epoch + c->epochs; e++) {
        if (c->shuffle) {
            dt_epoch_permutation(c->seed, e, ds->n, perm);
        } else {
            for (int64_t i = 0; i < ds->n; i++) perm[i] = i;
        }
        for (int64_t s = e == c->first_epoch ? c->first_step : 0; s < steps; s++) {
            int b = dt_shard_indices(perm, ds->n, c->global_batch, c->ranks, c->rank, c->drop_last,
                                     s, idx, &err);
            assert_true(b >= 0);
            assert_int_equal(dt_dataset_fill(ds, idx, b, c->seed, e, 1, x, lab, &err), 0);
            dt_batch got;
            double waited = -1.0;
            assert_int_equal(dt_loader_next(l, &got, &waited, &err), 1);
            assert_true(waited >= 0.0 && waited < 60.0);
            assert_int_equal(got.epoch, e);
            assert_int_equal(got.step, s);
            assert_int_equal(got.b, b);
            assert_true(got.c == ds->c && got.h == ds->h && got.w == ds->w);
            assert_memory_equal(got.indices, idx, sizeof(int64_t) * b);
            assert_memory_equal(got.labels, lab, sizeof(int32_t) * b);
            assert_memory_equal(got.x, x, sizeof(float) * per * b);
            batches++;
        }
    }
    dt_batch got;
    assert_int_equal(dt_loader_next(l, &got, NULL, &err), 0);  // the end, and it stays there
    assert_int_equal(dt_loader_next(l, &got, NULL, &err), 0);
    printf("# %lld batches identical (P=%d rank %d G=%d queue %d threads %d)\n", (long long)batches,
           c->ranks, c->rank, c->global_batch, c->queue, c->threads);
    dt_loader_destroy(l);
    free(perm);
    free(idx);
    free(x);
    free(lab);
}

static void test_loader_delivers_the_batches_of_the_direct_sequential_computation(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_error err = {0, ""};
    dt_dataset *ds = dt_dataset_synthetic(tu_int(&r, 60, 300), 2, tu_int(&r, 3, 9), tu_int(&r, 3, 9),
                                          5, r.s, &err);
    assert_non_null(ds);
    for (int trial = 0; trial < 4; trial++) {
        int P = tu_int(&r, 1, 3);
        dt_loader_config c = {.global_batch = P * tu_int(&r, 1, 8), .ranks = P,
                              .rank = tu_int(&r, 0, P - 1), .seed = r.s,
                              .first_epoch = tu_int(&r, 0, 5), .epochs = 2, .shuffle = 1,
                              .drop_last = 1, .queue = tu_int(&r, 2, 4),
                              .threads = trial % 2 ? 2 : 1};
        check_against_direct(ds, &c);
    }
    dt_dataset_free(ds);
}

static void test_loader_eval_mode_covers_every_index_once_over_ranks(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_error err = {0, ""};
    int64_t n = tu_int(&r, 20, 200);
    dt_dataset *ds = dt_dataset_synthetic(n, 1, 2, 2, 3, r.s, &err);
    int P = 3, G = 3 * tu_int(&r, 1, 7);
    int *uses = calloc((size_t)n, sizeof(int));
    for (int rank = 0; rank < P; rank++) {
        dt_loader_config c = {.global_batch = G, .ranks = P, .rank = rank, .epochs = 1};
        check_against_direct(ds, &c);
        dt_loader *l = dt_loader_create(ds, &c, &err);
        dt_batch b;
        while (dt_loader_next(l, &b, NULL, &err) == 1)
            for (int j = 0; j < b.b; j++) uses[b.indices[j]]++;
        dt_loader_destroy(l);
    }
    for (int64_t i = 0; i < n; i++) assert_int_equal(uses[i], 1);
    free(uses);
    dt_dataset_free(ds);
}

static void test_loader_resumes_at_first_step_of_first_epoch(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_error err = {0, ""};
    dt_dataset *ds = dt_dataset_synthetic(100, 1, 4, 4, 3, r.s, &err);
    dt_loader_config c = {.global_batch = 8, .ranks = 2, .rank = 1, .seed = r.s, .first_epoch = 3,
                          .epochs = 2, .first_step = tu_int(&r, 1, 11), .shuffle = 1,
                          .drop_last = 1};
    check_against_direct(ds, &c);
    dt_dataset_free(ds);
}

static void test_loader_shuts_down_cleanly_before_during_and_with_a_full_queue(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_error err = {0, ""};
    dt_dataset *ds = dt_dataset_synthetic(5000, 3, 32, 32, 10, r.s, &err);
    dt_loader_config c = {.global_batch = 64, .ranks = 1, .rank = 0, .seed = 1, .epochs = 3,
                          .shuffle = 1, .drop_last = 1};
    dt_loader *l = dt_loader_create(ds, &c, &err);  // destroyed before any batch
    dt_loader_destroy(l);
    for (int taken = 1; taken <= 5; taken += 2) {  // mid-epoch, producer busy
        l = dt_loader_create(ds, &c, &err);
        dt_batch b;
        for (int k = 0; k < taken; k++) assert_int_equal(dt_loader_next(l, &b, NULL, &err), 1);
        dt_loader_destroy(l);
    }
    // ImageNet-sized examples: a batch takes the producer a while; stop it in the middle
    dt_dataset *big = dt_dataset_synthetic(1000, 3, 224, 224, 1000, r.s, &err);
    dt_loader_config cb = {.global_batch = 128, .ranks = 1, .epochs = 5, .shuffle = 1,
                           .drop_last = 1};
    l = dt_loader_create(big, &cb, &err);
    sleep_ms(20);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    dt_loader_destroy(l);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double stop_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("# stopping mid-batch took %.4f s\n", stop_s);
    assert_true(stop_s < 2.0);  // a few examples, not the rest of the batch or the epochs
    dt_dataset_free(big);
    c.queue = 2;  // the producer fills the queue and blocks; then we stop it
    l = dt_loader_create(ds, &c, &err);
    dt_batch b;
    assert_int_equal(dt_loader_next(l, &b, NULL, &err), 1);
    sleep_ms(50);
    double waited = -1;
    assert_int_equal(dt_loader_next(l, &b, &waited, &err), 1);
    printf("# wait for a prefetched batch: %.6f s\n", waited);
    assert_true(waited >= 0.0);
    dt_loader_destroy(l);
    dt_loader_destroy(NULL);
    dt_dataset_free(ds);
}

#if DT_HAVE_PNG
static void test_loader_reports_a_corrupt_image_as_code_2_after_the_batches_before_it(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char root[256], p[512];
    td_mkdtemp(root, sizeof root);
    snprintf(p, sizeof p, "%s/cls", root);
    td_mkdir(p);
    int n = tu_int(&r, 6, 12), bad = tu_int(&r, 1, n - 1);
    for (int i = 0; i < n; i++) {
        snprintf(p, sizeof p, "%s/cls/img_%02d.png", root, i);
        uint8_t *rgb = td_smooth_rgb(&r, 12, 12);
        td_write_png_rgb8(p, rgb, 12, 12);
        free(rgb);
        if (i == bad) {
            size_t len;
            unsigned char *buf = td_read(p, &len);
            td_write(p, buf, len - 30);  // IDAT cut short
            free(buf);
        }
    }
    char badname[32];
    snprintf(badname, sizeof badname, "img_%02d.png", bad);
    dt_error err = {0, ""};
    dt_folder_opts o = {.resize = 10, .crop = 8, .train = 1};
    dt_dataset *ds = dt_dataset_folder(root, &o, &err);
    assert_non_null(ds);
    for (int threads = 1; threads <= 2; threads++) {
        // one example per step, in index order: batches 0..bad-1 arrive, then the error
        dt_loader_config c = {.global_batch = 1, .ranks = 1, .epochs = 1, .threads = threads};
        dt_loader *l = dt_loader_create(ds, &c, &err);
        dt_batch b;
        for (int i = 0; i < bad; i++) {
            assert_int_equal(dt_loader_next(l, &b, NULL, &err), 1);
            assert_int_equal(b.indices[0], i);
        }
        err.code = 0;
        assert_int_equal(dt_loader_next(l, &b, NULL, &err), -1);
        td_assert_error(err, badname, "corrupt PNG");
        err.code = 0;
        assert_int_equal(dt_loader_next(l, &b, NULL, &err), -1);  // and stays failed
        assert_int_equal(err.code, DT_EXIT_USAGE);
        dt_loader_destroy(l);
    }
    dt_dataset_free(ds);
    td_rmtree(root);
}
#endif

// Training augmentation (random crop + flip of a PNG folder) through the loader with 1 and 3
// decode threads: still the direct computation's bytes, since the randomness is a function
// of (seed, epoch, index) and not of the thread that drew it.
static void test_loader_folder_augmentation_is_independent_of_threads_and_timing(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    char root[256], p[512];
    td_mkdtemp(root, sizeof root);
    int n = 0;
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/class%d", root, k);
        td_mkdir(p);
        for (int i = 0; i < 8; i++, n++) {
            int h = tu_int(&r, 10, 30), w = tu_int(&r, 10, 30);
            uint8_t *rgb = td_smooth_rgb(&r, h, w);
            snprintf(p, sizeof p, "%s/class%d/%d.png", root, k, i);
            td_write_png_rgb8(p, rgb, h, w);
            free(rgb);
        }
    }
    dt_error err = {0, ""};
    dt_folder_opts o = {.resize = 12, .crop = 9, .train = 1};
    dt_dataset *ds = dt_dataset_folder(root, &o, &err);
    assert_non_null(ds);
    assert_int_equal(ds->n, n);
    for (int threads = 1; threads <= 3; threads += 2) {
        dt_loader_config c = {.global_batch = 16, .ranks = 2, .rank = threads / 2, .seed = r.s,
                              .epochs = 3, .shuffle = 1, .drop_last = 0, .threads = threads};
        check_against_direct(ds, &c);
    }
    dt_dataset_free(ds);
    td_rmtree(root);
}

static void test_loader_rejects_bad_configurations_with_code_2(void **state) {
    (void)state;
    dt_error err = {0, ""};
    dt_dataset *ds = dt_dataset_synthetic(10, 1, 2, 2, 2, 3, &err);
    dt_loader_config c = {.global_batch = 5, .ranks = 2, .epochs = 1};  // 5 % 2
    assert_null(dt_loader_create(ds, &c, &err));
    td_assert_error(err, "synthetic", "multiple of ranks");
    c = (dt_loader_config){.global_batch = 4, .ranks = 2, .rank = 2, .epochs = 1};
    err.code = 0;
    assert_null(dt_loader_create(ds, &c, &err));
    td_assert_error(err, "rank 2", "0 <= rank < ranks");
    c = (dt_loader_config){.global_batch = 16, .ranks = 2, .epochs = 1, .drop_last = 1};
    err.code = 0;
    assert_null(dt_loader_create(ds, &c, &err));
    td_assert_error(err, "10 examples", "fewer than the global batch 16");
    c = (dt_loader_config){.global_batch = 4, .ranks = 1, .epochs = 1, .queue = 1};
    err.code = 0;
    assert_null(dt_loader_create(ds, &c, &err));
    td_assert_error(err, "queue 1", "2 <= queue");
    c = (dt_loader_config){.global_batch = 4, .ranks = 1, .epochs = 0};
    err.code = 0;
    assert_null(dt_loader_create(ds, &c, &err));
    td_assert_error(err, "epochs 0", "epochs >= 1");
    dt_dataset_free(ds);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loader_delivers_the_batches_of_the_direct_sequential_computation),
        cmocka_unit_test(test_loader_eval_mode_covers_every_index_once_over_ranks),
        cmocka_unit_test(test_loader_resumes_at_first_step_of_first_epoch),
        cmocka_unit_test(test_loader_shuts_down_cleanly_before_during_and_with_a_full_queue),
#if DT_HAVE_PNG
        cmocka_unit_test(test_loader_folder_augmentation_is_independent_of_threads_and_timing),
        cmocka_unit_test(test_loader_reports_a_corrupt_image_as_code_2_after_the_batches_before_it),
#endif
        cmocka_unit_test(test_loader_rejects_bad_configurations_with_code_2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
