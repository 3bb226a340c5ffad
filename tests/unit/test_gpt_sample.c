// test_gpt_sample.c — the next-token draw (nn/gpt_sample.h dt_sample_token) against its
// closed form: token t drawn with probability p_t^(1/temperature) / sum over the top_k most
// likely (nanoGPT's softmax(logits / temperature) after the top-k cut), computed here in
// float64 from an independent sort. 200,000 draws of random distributions, temperatures
// (away from 1, where a draw that ignored it would pass) and cuts; Pearson's chi-square
// against df + 6 sqrt(2 df) (a false failure about once in 10^8 runs); a token outside the
// cut never drawn. Greedy is the most likely token (the lower id at a tie), a draw depends
// on (seed, i) only, and another seed draws otherwise. Inputs from tu_seed().
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpt_sample.h"
#include "testutil.h"

typedef struct { double p; int t; } ref_rank;
static int ref_by(const void *a, const void *b) {
    const ref_rank *x = a, *y = b;
    if (x->p != y->p) return x->p > y->p ? -1 : 1;
    return x->t - y->t;
}

// expected[t]: the closed form above
static void closed_form(const float *p, int V, double temp, int k, double *expected) {
    ref_rank *r = malloc((size_t)V * sizeof *r);
    for (int t = 0; t < V; t++) r[t] = (ref_rank){p[t], t};
    qsort(r, (size_t)V, sizeof *r, ref_by);
    if (k <= 0 || k > V) k = V;
    double sum = 0;
    for (int t = 0; t < V; t++) expected[t] = 0;
    for (int j = 0; j < k; j++) sum += expected[r[j].t] = pow(r[j].p, 1.0 / temp);
    for (int t = 0; t < V; t++) expected[t] /= sum;
    free(r);
}

static void test_draws_follow_the_tempered_top_k_distribution(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int trial = 0; trial < 6; trial++) {
        int V = tu_int(&r, 5, 40), n = 200000;
        int k = trial == 0 ? 0 : tu_int(&r, 2, V);  // 0: no cut
        double temp = tu_int(&r, 0, 1) ? tu_uniform(&r, 0.3, 0.7) : tu_uniform(&r, 1.5, 3.0);
        float *p = malloc((size_t)V * sizeof *p);
        double z = 0, *expected = malloc((size_t)V * sizeof *expected);
        for (int t = 0; t < V; t++) z += p[t] = (float)exp(1.5 * tu_normal(&r));
        for (int t = 0; t < V; t++) p[t] = (float)(p[t] / z);
        closed_form(p, V, temp, k, expected);
        long *count = calloc((size_t)V, sizeof *count);
        int *order = malloc((size_t)V * sizeof *order);
        dt_sample_opts s = {.temperature = temp, .top_k = k,
                            .seed = (uint64_t)tu_int(&r, 0, 1 << 30)};
        for (int i = 0; i < n; i++) {
            int t = dt_sample_token(p, V, &s, (uint64_t)i, order);
            if (t < 0 || t >= V) fail_msg("drew token %d of %d", t, V);
            count[t]++;
        }
        double chi2 = 0;
        int df = -1;
        for (int t = 0; t < V; t++) {
            if (expected[t] == 0) {
                if (count[t]) fail_msg("V %d top-k %d: token %d (outside the cut) drawn %ld times",
                                       V, k, t, count[t]);
                continue;
            }
            double e = n * expected[t];
            chi2 += (count[t] - e) * (count[t] - e) / e, df++;
        }
        double bound = df + 6 * sqrt(2.0 * df);
        if (df > 0 && chi2 > bound)
            fail_msg("V %d top-k %d temperature %.3f: chi-square %.1f over %d degrees of "
                     "freedom (bound %.1f)", V, k, temp, chi2, df, bound);
        free(p), free(expected), free(count), free(order);
    }
}

static void test_greedy_and_reproducible(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    int V = 50, order[50];
    float p[50];
    for (int t = 0; t < V; t++) p[t] = (float)tu_uniform(&r, 0.0, 0.01);
    int a = tu_int(&r, 10, 20), b = tu_int(&r, 30, 40);
    p[a] = p[b] = 0.5f;  // a tie: the lower id
    dt_sample_opts g = {.temperature = 0, .top_k = 0, .seed = 7};
    assert_int_equal(dt_sample_token(p, V, &g, 0, order), a);
    g.temperature = 1, g.top_k = 1;
    assert_int_equal(dt_sample_token(p, V, &g, 3, order), a);
    for (int t = 0; t < V; t++) p[t] = 1.0f / V;  // flat: the draws are the seed's
    dt_sample_opts s = {.temperature = 1, .top_k = 0, .seed = (uint64_t)tu_int(&r, 0, 1 << 30)};
    dt_sample_opts s2 = s;
    s2.seed++;
    int same = 0, other = 0;
    for (int i = 0; i < 64; i++) {
        int x = dt_sample_token(p, V, &s, (uint64_t)i, order);
        int y = dt_sample_token(p, V, &s, (uint64_t)i, order);
        same += x == y;
        other += x == dt_sample_token(p, V, &s2, (uint64_t)i, order);
    }
    assert_int_equal(same, 64);
    if (other > 16)
        fail_msg("another seed drew the same token %d times of 64 (1/%d each)", other, V);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_draws_follow_the_tempered_top_k_distribution),
        cmocka_unit_test(test_greedy_and_reproducible),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
