// test_net_inplace.c — the buffer plan of nn/net_plan.c on small networks, cpu device:
//  - a relu whose input nobody else reads runs in place (out and dout are its input's), as
//    does a residual add over its main branch, relu after relu, and relu after the add; the
//    first writers of a gradient (batchnorm, add) overwrite instead of adding; the whole-net
//    gradient (every parameter tensor and the input) matches central finite differences of
//    an independent float64 forward (reflayers.h), checked on the second backward so that
//    stale contents of shared, unzeroed buffers would show;
//  - a relu whose input has a second reader, a relu of the network input and an add over a
//    relu do NOT alias, and their gradients match finite differences too;
//  - the same network on a device without the in-place/overwrite primitives (the fallback
//    path: separate relu buffers, zero-filled gradients) gives the same loss and gradients;
//  - convs (1x1 stride 1 by a beta-0 gemm, others by col2im_set, chunk by chunk) and linears
//    that write their input's gradient first overwrite it, and the gradients still match
//    finite differences; without col2im_set only the im2col convs fall back to adding.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layers.h"
#include "net.h"
#include "reflayers.h"
#include "testutil.h"

enum { NB = 3, NC = 3, NH = 6, NW = 6, NK = 5 };

typedef struct {
    dt_device *dev;
    tu_rng rng;
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    f->dev = dt_device_cpu_create(2);
    f->rng = tu_rng_new(tu_seed());
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    f->dev->destroy(f->dev);
    free(f);
    return 0;
}

static dt_net *new_net(dt_device *d, uint64_t seed) {
    dt_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.batch = NB, cfg.in_c = NC, cfg.in_h = NH, cfg.in_w = NW, cfg.num_classes = NK;
    cfg.seed = seed;
    return dt_net_new(d, "inplace-test", &cfg);
}

static void finalize_ok(dt_net *net) {
    dt_error e;
    memset(&e, 0, sizeof e);
    if (dt_net_finalize(net, &e) != 0) fail_msg("finalize: %s", e.msg);
}

// Every chance to alias: 2 relu(bn1), 5 add(bn4, relu2) over bn4, 6 relu(add), 7 relu(relu),
// 10 relu(bn9). relu2 is read twice (conv3 and the add's shortcut).
static dt_net *aliasing_net(dt_device *d, uint64_t seed) {
    dt_net *net = new_net(d, seed);
    int x = dt_net_add_conv(net, "c0", -1, 4, 3, 1, 1, 0);
    x = dt_net_add_bn(net, "b1", x);
    int r2 = dt_net_add_relu(net, x);
    x = dt_net_add_conv(net, "c3", r2, 4, 3, 1, 1, 0);
    x = dt_net_add_bn(net, "b4", x);
    x = dt_net_add_add(net, x, r2);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_conv(net, "c8", x, 6, 1, 1, 0, 0);
    x = dt_net_add_bn(net, "b9", x);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_maxpool(net, x, 2, 2, 0);
    x = dt_net_add_avgpool(net, x, 1, 1);
    x = dt_net_add_linear(net, "fc", x, NK, 1);
    assert_int_equal(x, 13);
    finalize_ok(net);
    return net;
}

// No chance to alias: 0 relu(input); 3 relu(bn2) with bn2 also read by the add 4, which reads
// a relu; 6 relu(conv5) with conv5 also read by the add 7.
static dt_net *shared_input_net(dt_device *d, uint64_t seed) {
    dt_net *net = new_net(d, seed);
    int x = dt_net_add_relu(net, -1);
    x = dt_net_add_conv(net, "c1", x, 4, 3, 1, 1, 0);
    int bn = dt_net_add_bn(net, "b2", x);
    int r = dt_net_add_relu(net, bn);
    x = dt_net_add_add(net, r, bn);
    int c = dt_net_add_conv(net, "c5", x, 4, 3, 1, 1, 1);
    r = dt_net_add_relu(net, c);
    x = dt_net_add_add(net, c, r);
    x = dt_net_add_avgpool(net, x, 1, 1);
    x = dt_net_add_linear(net, "fc", x, NK, 1);
    assert_int_equal(x, 9);
    finalize_ok(net);
    return net;
}

// First writers that are convs and linears: 3 c3 (3x3 s1 p1, col2im_set) into relu2's
// gradient, 5 c5 (k2 s3: input cells no window reads) into relu4's, 8 c8 (1x1 s1: beta 0)
// into relu7's, 10 fc1 into the avgpool's, 12 fc2 into relu11's (over fc1); batchnorms 1
// and 6 into c0's and c5's.
static dt_net *conv_writer_net(dt_device *d, uint64_t seed) {
    dt_net *net = new_net(d, seed);
    int x = dt_net_add_conv(net, "c0", -1, 4, 3, 1, 1, 0);
    x = dt_net_add_bn(net, "b1", x);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_conv(net, "c3", x, 4, 3, 1, 1, 1);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_conv(net, "c5", x, 5, 2, 3, 0, 0);
    x = dt_net_add_bn(net, "b6", x);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_conv(net, "c8", x, 6, 1, 1, 0, 1);
    x = dt_net_add_avgpool(net, x, 1, 1);
    x = dt_net_add_linear(net, "fc1", x, 7, 1);
    x = dt_net_add_relu(net, x);
    x = dt_net_add_linear(net, "fc2", x, NK, 0);
    assert_int_equal(x, 12);
    finalize_ok(net);
    return net;
}

// ---- an independent float64 forward of any such network, layer by layer ----

static double ref_net_loss(const dt_net *net, const double *x, const double *p,
                           const int32_t *labels) {
    int n = net->n_layers;
    double **out = calloc((size_t)n, sizeof(double *));
    for (int i = 0; i < n; i++) {
        const dt_layer *l = net->layers[i];
        size_t ny = (size_t)l->B * dt_layer_out_size(l), nx = (size_t)l->B * dt_layer_in_size(l);
        const double *in = l->in < 0 ? x : out[l->in];
        double *y = out[i] = malloc(ny * sizeof(double));
        switch (l->type) {
        case DT_LAYER_CONV:
            ref_conv_forward(l->B, l->c, l->h, l->w, l->oc, l->kh, l->stride, l->pad, in,
                             p + l->w_off, l->has_bias ? p + l->b_off : NULL, y);
            break;
        case DT_LAYER_BN:
            ref_bn_train(l->B, l->c, l->h * l->w, in, p + l->w_off, p + l->b_off, 1e-5, y, NULL,
                         NULL);
            break;
        case DT_LAYER_RELU: ref_relu(nx, in, y); break;
        case DT_LAYER_ADD: {
            const double *in2 = l->in2 < 0 ? x : out[l->in2];
            for (size_t k = 0; k < ny; k++) y[k] = in[k] + in2[k];
            break;
        }
        case DT_LAYER_MAXPOOL:
            ref_maxpool(l->B, l->c, l->h, l->w, l->kh, l->stride, l->pad, in, y);
            break;
        case DT_LAYER_AVGPOOL: ref_avgpool(l->B, l->c, l->h, l->w, l->oh, l->ow, in, y); break;
        case DT_LAYER_LINEAR:
            ref_linear(l->B, (int)dt_layer_in_size(l), l->oc, in, p + l->w_off,
                       l->has_bias ? p + l->b_off : NULL, y);
            break;
        default: fail_msg("no reference for layer %s", l->name);
        }
    }
    double loss = ref_xent(NB, NK, out[n - 1], labels);
    for (int i = 0; i < n; i++) free(out[i]);
    free(out);
    return loss;
}

typedef struct {
    float *x;
    int32_t labels[NB];
    double *xd, *pd;
} batch;

// A fresh random batch and random parameters (gamma around 1, betas and biases away from
// 0), copied into the network.
static batch make_batch(fixture *f, dt_net *net) {
    batch bt;
    size_t nx = (size_t)NB * NC * NH * NW;
    bt.x = malloc(nx * sizeof(float));
    bt.xd = malloc(nx * sizeof(double));
    tu_fill_uniform(&f->rng, bt.x, nx, -1.0, 1.0);
    for (size_t i = 0; i < nx; i++) bt.xd[i] = bt.x[i];
    for (int b = 0; b < NB; b++) bt.labels[b] = tu_int(&f->rng, 0, NK - 1);
    float *pf = malloc(net->n_total * sizeof(float));
    f->dev->to_host(f->dev, pf, net->params, net->n_total * sizeof(float));
    for (int t = 0; t < net->n_params; t++) {
        const dt_param *q = &net->params_table[t];
        if (q->kind == DT_PARAM_BN_GAMMA)
            tu_fill_uniform(&f->rng, pf + q->offset, q->count, 0.5, 1.5);
        if (q->kind == DT_PARAM_BN_BETA || q->kind == DT_PARAM_BIAS)
            tu_fill_uniform(&f->rng, pf + q->offset, q->count, -0.3, 0.3);
    }
    net->dev->from_host(net->dev, net->params, pf, net->n_total * sizeof(float));
    bt.pd = malloc(net->n_total * sizeof(double));
    for (size_t i = 0; i < net->n_total; i++) bt.pd[i] = pf[i];
    free(pf);
    dt_net_set_batch(net, bt.x, bt.labels);
    return bt;
}

static void free_batch(batch *bt) { free(bt->x), free(bt->xd), free(bt->pd); }

// One training step's forward, loss and backward on a throwaway batch, so that every shared
// gradient buffer holds stale numbers, then the real batch's forward, loss and backward.
// Returns the real batch (parameters as in it).
static batch two_steps(fixture *f, dt_net *net, float *loss) {
    batch junk = make_batch(f, net);
    dt_net_forward(net, 1);
    dt_net_loss(net);
    dt_net_backward(net, 1.0f, NULL, NULL);
    free_batch(&junk);
    batch bt = make_batch(f, net);
    dt_net_forward(net, 1);
    *loss = dt_net_loss(net);
    dt_net_backward(net, 1.0f, NULL, NULL);
    return bt;
}

// g (fp32 gradient of the n elements of vals) along a random unit direction and along g/|g|
// against central differences of ref_net_loss (tu_check_directions: a direction that meets a
// ReLU kink is drawn again); tolerance 1e-4 * |g|.
typedef struct {
    const dt_net *net;
    batch *bt;
} loss_ctx;

static double loss_of(void *ctx) {
    loss_ctx *c = ctx;
    return ref_net_loss(c->net, c->bt->xd, c->bt->pd, c->bt->labels);
}

static void check_directions(fixture *f, const dt_net *net, batch *bt, double *vals,
                             const float *g, size_t n, const char *what) {
    loss_ctx c = {net, bt};
    tu_check_directions(&f->rng, vals, g, n, loss_of, &c, 1e-4, what);
}

// Loss against the reference, then every trainable tensor and the input by directions.
static void check_whole_net_gradient(fixture *f, dt_net *net) {
    float loss;
    batch bt = two_steps(f, net, &loss);
    double want[1] = {ref_net_loss(net, bt.xd, bt.pd, bt.labels)};
    tu_assert_close("loss", &loss, want, 1, 1e-5, 1e-3);
    dt_device *d = net->dev;
    size_t nx = (size_t)NB * NC * NH * NW;
    float *g = malloc(net->n_trainable * sizeof(float)), *gx = malloc(nx * sizeof(float));
    d->to_host(d, g, net->grads, net->n_trainable * sizeof(float));
    d->to_host(d, gx, net->dinput, nx * sizeof(float));
    for (int t = 0; t < net->n_params; t++) {
        const dt_param *q = &net->params_table[t];
        if (q->trainable)
            check_directions(f, net, &bt, bt.pd + q->offset, g + q->offset, q->count, q->name);
    }
    check_directions(f, net, &bt, bt.xd, gx, nx, "input");
    free(g), free(gx);
    free_batch(&bt);
}

static void assert_aliases(const dt_net *net, int k, int want) {
    const dt_layer *l = net->layers[k];
    const dt_layer *src = net->layers[l->in];
    if (l->inplace != want || (l->out == src->out) != want || (l->dout == src->dout) != want)
        fail_msg("layer %d (%s): inplace %d, out %s input's, dout %s input's; expected %s", k,
                 l->name, l->inplace, l->out == src->out ? "is" : "is not",
                 l->dout == src->dout ? "is" : "is not", want ? "aliasing" : "separate");
}

static void test_inplace_relu_and_add_alias_and_gradients_match_finite_differences(
    void **state) {
    fixture *f = *state;
    dt_net *net = aliasing_net(f->dev, (uint64_t)tu_int(&f->rng, 0, 1 << 30));
    const int inplace[] = {2, 5, 6, 7, 10};
    for (int k = 0; k < net->n_layers; k++) {
        int want = 0;
        for (size_t j = 0; j < sizeof inplace / sizeof inplace[0]; j++) want |= inplace[j] == k;
        if (k > 0) assert_aliases(net, k, want);
    }
    // first writers that overwrite: b1 into c0's gradient, b4 into c3's, b9 into c8's, the
    // add into relu2's (its second operand), c8 into relu7's (the chain over b4), fc into the
    // avgpool's; nothing else
    for (int k = 0; k < net->n_layers; k++) {
        int want = (k == 1 || k == 4 || k == 8 || k == 9 || k == 13) ? 1 : k == 5 ? 2 : 0;
        if (net->layers[k]->dsrc_set != want)
            fail_msg("layer %d (%s): dsrc_set %d, expected %d", k, net->layers[k]->name,
                     net->layers[k]->dsrc_set, want);
    }
    check_whole_net_gradient(f, net);
    dt_net_free(net);
}

static void test_relu_with_second_reader_does_not_alias_and_gradients_match_finite_differences(
    void **state) {
    fixture *f = *state;
    dt_net *net = shared_input_net(f->dev, (uint64_t)tu_int(&f->rng, 0, 1 << 30));
    assert_int_equal(net->layers[0]->inplace, 0);  // reads the network input
    assert_true(net->layers[0]->out != net->input);
    for (int k = 1; k < net->n_layers; k++) assert_aliases(net, k, 0);
    check_whole_net_gradient(f, net);
    dt_net_free(net);
}

static void test_net_without_inplace_primitives_gives_same_loss_and_gradients(void **state) {
    fixture *f = *state;
    uint64_t seed = (uint64_t)tu_int(&f->rng, 0, 1 << 30);
    dt_device *plain = dt_device_cpu_create(2);
    plain->relu_backward_inplace = NULL;
    plain->bn_backward_set = NULL;
    dt_net *a = aliasing_net(f->dev, seed), *b = aliasing_net(plain, seed);
    for (int k = 0; k < b->n_layers; k++) {
        const dt_layer *l = b->layers[k];
        if (l->type == DT_LAYER_RELU) assert_int_equal(l->inplace, 0);
        if (l->type == DT_LAYER_BN) assert_int_equal(l->dsrc_set, 0);
    }
    size_t nx = (size_t)NB * NC * NH * NW, nt = a->n_trainable;
    assert_int_equal(nt, b->n_trainable);
    float *x = malloc(nx * sizeof(float)), *pa = malloc(a->n_total * sizeof(float));
    float *ga = malloc((nt + nx) * sizeof(float)), *gb = malloc((nt + nx) * sizeof(float));
    double *want = malloc((nt + nx) * sizeof(double));
    int32_t labels[NB];
    float la = 0, lb = 0;
    for (int step = 0; step < 2; step++) {  // the second step runs on stale buffers
        tu_fill_uniform(&f->rng, x, nx, -1.0, 1.0);
        tu_fill_uniform(&f->rng, pa, a->n_total, -0.5, 0.5);
        for (int b2 = 0; b2 < NB; b2++) labels[b2] = tu_int(&f->rng, 0, NK - 1);
        dt_net *nets[2] = {a, b};
        float *gs[2] = {ga, gb}, *ls[2] = {&la, &lb};
        for (int i = 0; i < 2; i++) {
            dt_net *net = nets[i];
            net->dev->from_host(net->dev, net->params, pa, net->n_total * sizeof(float));
            dt_net_set_batch(net, x, labels);
            dt_net_forward(net, 1);
            *ls[i] = dt_net_loss(net);
            dt_net_backward(net, 1.0f, NULL, NULL);
            net->dev->to_host(net->dev, gs[i], net->grads, nt * sizeof(float));
            net->dev->to_host(net->dev, gs[i] + nt, net->dinput, nx * sizeof(float));
        }
    }
    double lw[1] = {lb};
    tu_assert_close("loss, in place vs separate buffers", &la, lw, 1, 1e-6, 1e-6);
    double gmax = 0.0;
    for (size_t i = 0; i < nt + nx; i++) {
        want[i] = gb[i];
        if (fabs(want[i]) > gmax) gmax = fabs(want[i]);
    }
    tu_assert_close("gradients, in place vs separate buffers", ga, want, nt + nx, 1e-5,
                    1e-3 * gmax);
    free(x), free(pa), free(ga), free(gb), free(want);
    dt_net_free(a), dt_net_free(b);
    plain->destroy(plain);
}

static void assert_dsrc_set(const dt_net *net, const int *want) {
    for (int k = 0; k < net->n_layers; k++) {
        if (net->layers[k]->dsrc_set != want[k])
            fail_msg("layer %d (%s): dsrc_set %d, expected %d", k, net->layers[k]->name,
                     net->layers[k]->dsrc_set, want[k]);
    }
}

// The conv and linear first writers overwrite their input's (unzeroed, stale) gradient: the
// whole-net gradient still matches finite differences on the second backward. The device
// asks for one image per im2col chunk, so col2im_set runs chunk by chunk.
static void test_conv_and_linear_first_writers_overwrite_and_gradients_match_finite_differences(
    void **state) {
    fixture *f = *state;
    size_t saved = f->dev->im2col_chunk_bytes;
    f->dev->im2col_chunk_bytes = sizeof(float);
    dt_net *net = conv_writer_net(f->dev, (uint64_t)tu_int(&f->rng, 0, 1 << 30));
    f->dev->im2col_chunk_bytes = saved;
    assert_true(net->layers[3]->workspace_floats < (size_t)2 * 4 * 9 * NH * NW);  // chunks
    const int want[13] = {0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1};
    assert_dsrc_set(net, want);
    check_whole_net_gradient(f, net);
    dt_net_free(net);
}

// Without col2im_set the im2col convs add into a zeroed buffer; the 1x1 stride-1 conv and
// the linears (plain gemms with beta 0) still overwrite. Gradients match finite differences.
static void test_convs_without_col2im_set_add_and_gradients_match_finite_differences(
    void **state) {
    fixture *f = *state;
    dt_device *plain = dt_device_cpu_create(2);
    plain->col2im_set = NULL;
    dt_net *net = conv_writer_net(plain, (uint64_t)tu_int(&f->rng, 0, 1 << 30));
    const int want[13] = {0, 1, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1};
    assert_dsrc_set(net, want);
    check_whole_net_gradient(f, net);
    dt_net_free(net);
    plain->destroy(plain);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inplace_relu_and_add_alias_and_gradients_match_finite_differences),
        cmocka_unit_test(
            test_relu_with_second_reader_does_not_alias_and_gradients_match_finite_differences),
        cmocka_unit_test(test_net_without_inplace_primitives_gives_same_loss_and_gradients),
        cmocka_unit_test(
            test_conv_and_linear_first_writers_overwrite_and_gradients_match_finite_differences),
        cmocka_unit_test(
            test_convs_without_col2im_set_add_and_gradients_match_finite_differences),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
