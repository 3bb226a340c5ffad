// grader_conv.c — lesson 01's conv2d checks. Every case is a fresh random shape of a kind
// that catches its own class of bug (1x1 stride 1, which nn/ runs without im2col; stride 2
// with padding and odd sizes; overlapping 3x3 windows; C = 1 and B = 1; a 3x1 kernel; a
// stride that leaves the last row unread; one shape drawn at random), with random x, w,
// bias and dy. References, all independent of your code:
//  - im2col, col2im: the index formula of layers01.h, element by element, in float64;
//  - forward: a direct 7-loop convolution in float64, and nn/'s own conv layer
//    (nn/layer_conv.c through dt_net_add_conv: the cpu device's im2col + gemm, or no
//    im2col at all for 1x1 stride 1), which also gives dx, dw, db to compare with;
//  - backward: central differences in float64 of L = sum(dy * conv(x, w, bias)), one
//    input at a time (L is linear, so the differences are exact up to rounding).
#include "grader.h"
#include "net.h"  // nn/net.h: dt_net_new, dt_net_add_conv, the layer's forward and backward

typedef struct {
    char what[96];
    conv_shape s;
} conv_case;

static conv_shape shape(int B, int C, int H, int W, int OC, int KH, int KW, int S, int P) {
    conv_shape s = {B, C, H, W, OC, KH, KW, S, P, conv_out(H, KH, S, P), conv_out(W, KW, S, P)};
    return s;
}

// The cases of one run: each kind once, its sizes drawn from r.
static int make_cases(uint64_t *r, conv_case *c) {
    int n = 0;
#define ODD(lo, hi) (2 * grade_int(r, (lo) / 2, (hi) / 2) + 1)
    c[n++].s = shape(grade_int(r, 1, 3), grade_int(r, 1, 4), grade_int(r, 2, 7),
                     grade_int(r, 2, 7), grade_int(r, 1, 5), 1, 1, 1, 0);
    c[n++].s = shape(grade_int(r, 1, 3), grade_int(r, 1, 3), ODD(5, 9), ODD(5, 9),
                     grade_int(r, 1, 4), 3, 3, 2, 1);
    c[n++].s = shape(grade_int(r, 2, 3), grade_int(r, 2, 3), grade_int(r, 3, 8),
                     grade_int(r, 3, 8), grade_int(r, 2, 4), 3, 3, 1, 1);
    c[n++].s = shape(1, 1, grade_int(r, 4, 10), grade_int(r, 4, 10), grade_int(r, 1, 3), 5, 5,
                     3, 2);
    c[n++].s = shape(grade_int(r, 1, 3), grade_int(r, 1, 4), grade_int(r, 3, 8),
                     grade_int(r, 3, 8), grade_int(r, 1, 4), 1, 1, 2, 0);
    c[n++].s = shape(grade_int(r, 1, 2), grade_int(r, 1, 3), grade_int(r, 3, 7),
                     grade_int(r, 3, 7), grade_int(r, 1, 3), 3, 1, grade_int(r, 1, 2), 1);
    c[n++].s = shape(grade_int(r, 1, 3), grade_int(r, 1, 3), ODD(5, 9), ODD(5, 9),
                     grade_int(r, 1, 3), 2, 2, 2, 0);
    int k = grade_int(r, 1, 4), p = grade_int(r, 0, k - 1);
    c[n++].s = shape(grade_int(r, 1, 3), grade_int(r, 1, 4), grade_int(r, k, 9),
                     grade_int(r, k, 9), grade_int(r, 2, 5), k, k, grade_int(r, 1, 3), p);
#undef ODD
    for (int i = 0; i < n; i++) {
        const conv_shape *s = &c[i].s;
        snprintf(c[i].what, sizeof c[i].what, "x (%d,%d,%d,%d), w (%d,%d,%d,%d), stride %d, pad %d",
                 s->B, s->C, s->H, s->W, s->OC, s->C, s->KH, s->KW, s->stride, s->pad);
    }
    return n;
}

// ---- float64 references ----

// im2col of one image, straight from the formula in layers01.h
static void ref_im2col(const conv_shape *s, const double *x, double *col) {
    size_t N = (size_t)s->OH * s->OW;
    for (int c = 0; c < s->C; c++)
        for (int kh = 0; kh < s->KH; kh++)
            for (int kw = 0; kw < s->KW; kw++)
                for (int oh = 0; oh < s->OH; oh++)
                    for (int ow = 0; ow < s->OW; ow++) {
                        int ih = oh * s->stride - s->pad + kh, iw = ow * s->stride - s->pad + kw;
                        size_t row = ((size_t)c * s->KH + kh) * s->KW + kw;
                        int in = ih >= 0 && ih < s->H && iw >= 0 && iw < s->W;
                        col[row * N + (size_t)oh * s->OW + ow] =
                            in ? x[((size_t)c * s->H + ih) * s->W + iw] : 0.0;
                    }
}

// Direct convolution: y[b][o][i][j] = bias[o] + sum_{c,u,v} w[o][c][u][v] x[b][c][i*S-P+u][j*S-P+v]
static void ref_conv(const conv_shape *s, const double *x, const double *w, const double *bias,
                     double *y) {
    for (int b = 0; b < s->B; b++)
        for (int o = 0; o < s->OC; o++)
            for (int i = 0; i < s->OH; i++)
                for (int j = 0; j < s->OW; j++) {
                    double acc = bias[o];
                    for (int c = 0; c < s->C; c++)
                        for (int u = 0; u < s->KH; u++)
                            for (int v = 0; v < s->KW; v++) {
                                int hi = i * s->stride - s->pad + u;
                                int wi = j * s->stride - s->pad + v;
                                if (hi < 0 || hi >= s->H || wi < 0 || wi >= s->W) continue;
                                acc += w[((o * s->C + c) * s->KH + u) * s->KW + v] *
                                       x[((size_t)(b * s->C + c) * s->H + hi) * s->W + wi];
                            }
                    y[((size_t)(b * s->OC + o) * s->OH + i) * s->OW + j] = acc;
                }
}

typedef struct {
    const conv_shape *s;
    double *x, *w, *b, *r, *y;
    size_t ny;
} loss_ctx;

static double loss(const loss_ctx *L) {  // sum(r * conv(x, w, b))
    ref_conv(L->s, L->x, L->w, L->b, L->y);
    double sum = 0;
    for (size_t i = 0; i < L->ny; i++) sum += L->r[i] * L->y[i];
    return sum;
}

// Central differences of the loss in every element of v (one of L's x, w, b) into fd.
static void fd_grad(const loss_ctx *L, double *v, size_t n, double *fd) {
    for (size_t i = 0; i < n; i++) {
        double keep = v[i];
        v[i] = keep + FD_H;
        double lp = loss(L);
        v[i] = keep - FD_H;
        double lm = loss(L);
        v[i] = keep;
        fd[i] = (lp - lm) / (2 * FD_H);
    }
}

// ---- nn/'s conv layer: a one-layer dt_net on the cpu device ----

// y, and dx, dw, db for the upstream gradient dy, from nn/layer_conv.c. 0, or -1 with the
// builder's message in err.
static int nn_conv(dt_device *d, const conv_shape *s, const float *x, const float *w,
                   const float *bias, const float *dy, float *y, float *dx, float *dw,
                   float *db, char *err, size_t errlen) {
    dt_model_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.batch = s->B, cfg.in_c = s->C, cfg.in_h = s->H, cfg.in_w = s->W;
    cfg.num_classes = 10, cfg.seed = 1;
    dt_net *net = dt_net_new(d, "lesson01", &cfg);
    dt_error e;
    memset(&e, 0, sizeof e);
    int li = dt_net_add_conv(net, "conv", -1, s->OC, s->KH, s->stride, s->pad, 1);
    if (li < 0 || dt_net_finalize(net, &e) != 0) {
        snprintf(err, errlen, "%s", e.msg[0] ? e.msg : net->build_err.msg);
        dt_net_free(net);
        return -1;
    }
    dt_layer *l = net->layers[li];
    size_t nx = (size_t)s->B * s->C * s->H * s->W, ny = (size_t)s->B * s->OC * s->OH * s->OW;
    size_t nw = (size_t)s->OC * s->C * s->KH * s->KW;
    const dt_param *pw = dt_net_find_param(net, "conv.weight");
    const dt_param *pb = dt_net_find_param(net, "conv.bias");
    d->from_host(d, net->params + pw->offset, w, nw * sizeof(float));
    d->from_host(d, net->params + pb->offset, bias, (size_t)s->OC * sizeof(float));
    dt_net_set_batch(net, x, NULL);
    l->forward(l, net, 1);
    d->to_host(d, y, l->out, ny * sizeof(float));
    d->fill(d, net->grads, 0.0f, net->n_trainable);
    d->fill(d, net->dinput, 0.0f, nx);
    d->from_host(d, l->dout, dy, ny * sizeof(float));
    l->backward(l, net);
    d->to_host(d, dx, net->dinput, nx * sizeof(float));
    d->to_host(d, dw, net->grads + pw->offset, nw * sizeof(float));
    d->to_host(d, db, net->grads + pb->offset, (size_t)s->OC * sizeof(float));
    dt_net_free(net);
    return 0;
}

// ---- the checks ----

typedef struct {
    check_acc im2col, col2im, fwd, nn, dx, dw, db;
} conv_checks;

// im2col of one image (b) against the formula; col starts out stale.
static void check_im2col(conv_checks *k, const conv_case *c, const float *x, const double *xd,
                         int b) {
    const conv_shape *s = &c->s;
    size_t N = (size_t)s->OH * s->OW, ncol = (size_t)s->C * s->KH * s->KW * N;
    size_t ximg = (size_t)s->C * s->H * s->W;
    float *col = falloc(ncol);
    double *want = dalloc(ncol);
    fill_value(col, ncol, STALE);
    im2col(x + b * ximg, s->C, s->H, s->W, s->KH, s->KW, s->stride, s->pad, col);
    ref_im2col(s, xd + b * ximg, want);
    size_t at;
    double err;
    int ok = close_enough(col, want, NULL, ncol, 1e-7, &at, &err);
    int row = (int)(at / N), j = (int)(at % N);
    int ch = row / (s->KH * s->KW), kh = row / s->KW % s->KH, kw = row % s->KW;
    int oh = j / s->OW, ow = j % s->OW;
    int ih = oh * s->stride - s->pad + kh, iw = ow * s->stride - s->pad + kw;
    int pad = ih < 0 || ih >= s->H || iw < 0 || iw >= s->W;
    acc_case(&k->im2col, ok, err,
             "%s, image %d: col[row %d = (c %d, kh %d, kw %d)][column %d = (oh %d, ow %d)]: "
             "expected %.6g (x[%d][%d][%d]%s), got %.6g%s",
             c->what, b, row, ch, kh, kw, j, oh, ow, want[at], ch, ih, iw,
             pad ? ": the padding" : "", col[at], got_note(col[at]));
    free(col), free(want);
}

// col2im of random columns into a random x: x must come back as x + the scatter of col.
static void check_col2im(conv_checks *k, const conv_case *c, uint64_t *r) {
    const conv_shape *s = &c->s;
    size_t N = (size_t)s->OH * s->OW, ncol = (size_t)s->C * s->KH * s->KW * N;
    size_t nx = (size_t)s->C * s->H * s->W;
    float *col = falloc(ncol), *x = falloc(nx);
    double *want = dalloc(nx), *mag = dalloc(nx);  // mag: the same sums of |terms|
    fill_uniform(r, col, ncol, -1, 1);
    fill_uniform(r, x, nx, -1, 1);
    to_double(x, want, nx);
    for (size_t i = 0; i < nx; i++) mag[i] = fabs(want[i]);
    for (int ch = 0; ch < s->C; ch++)  // the scatter: every col entry back where it came from
        for (int kh = 0; kh < s->KH; kh++)
            for (int kw = 0; kw < s->KW; kw++)
                for (int oh = 0; oh < s->OH; oh++)
                    for (int ow = 0; ow < s->OW; ow++) {
                        int ih = oh * s->stride - s->pad + kh, iw = ow * s->stride - s->pad + kw;
                        if (ih < 0 || ih >= s->H || iw < 0 || iw >= s->W) continue;
                        size_t row = ((size_t)ch * s->KH + kh) * s->KW + kw;
                        size_t xi = ((size_t)ch * s->H + ih) * s->W + iw;
                        float v = col[row * N + (size_t)oh * s->OW + ow];
                        want[xi] += v;
                        mag[xi] += fabs(v);
                    }
    float *before = falloc(nx);
    memcpy(before, x, nx * sizeof(float));
    col2im(col, s->C, s->H, s->W, s->KH, s->KW, s->stride, s->pad, x);
    size_t at;
    double err;
    char w4[WHERE_LEN];
    int ok = close_enough(x, want, mag, nx, TOL_FWD, &at, &err);
    acc_case(&k->col2im, ok, err,
             "%s: x%s held %.6g before the call; expected %.6g (that plus every column entry "
             "im2col reads from it), got %.6g%s",
             c->what, where4(w4, at, s->H, s->W, 0), before[at], want[at], x[at],
             x[at] == before[at] ? " (unchanged)" : "");
    free(col), free(x), free(want), free(mag), free(before);
}

// got against want for one tensor of a case; dims for the hint.
// mag: the sums of |terms| (close_enough)
static void compare(check_acc *a, const conv_case *c, const char *name, const float *got,
                    const double *want, const double *mag, size_t n, double tol, int d1,
                    int d2, int d3, const char *against) {
    size_t at;
    double err;
    char w4[WHERE_LEN];
    int ok = close_enough(got, want, mag, n, tol, &at, &err);
    acc_case(a, ok, err, "%s: %s%s: expected %.6g (%s), got %.6g%s (relative error %.1e)",
             c->what, name, where4(w4, at, d1, d2, d3), want[at], against, got[at],
             got_note(got[at]), err);
}

static void run_case(conv_checks *k, check_acc *adds, dt_device *d, const conv_case *c,
                     uint64_t *r) {
    const conv_shape *s = &c->s;
    size_t nx = (size_t)s->B * s->C * s->H * s->W, ny = (size_t)s->B * s->OC * s->OH * s->OW;
    size_t nw = (size_t)s->OC * s->C * s->KH * s->KW, nb = (size_t)s->OC;
    size_t nwork = (size_t)conv_work_floats(s);
    float *x = falloc(nx), *w = falloc(nw), *bias = falloc(nb), *dy = falloc(ny);
    float *y = falloc(ny), *work = falloc(nwork);
    float *dx = falloc(nx), *dw = falloc(nw), *db = falloc(nb);
    fill_uniform(r, x, nx, -1, 1);
    fill_uniform(r, w, nw, -0.5, 0.5);
    fill_uniform(r, bias, nb, -0.5, 0.5);
    fill_uniform(r, dy, ny, -1, 1);
    double *xd = dalloc(nx), *wd = dalloc(nw), *bd = dalloc(nb), *rd = dalloc(ny);
    double *yd = dalloc(ny);
    to_double(x, xd, nx), to_double(w, wd, nw), to_double(bias, bd, nb), to_double(dy, rd, ny);

    check_im2col(k, c, x, xd, grade_int(r, 0, s->B - 1));
    check_col2im(k, c, r);

    // forward, into a stale y with stale scratch
    fill_value(y, ny, STALE);
    fill_value(work, nwork, STALE);
    conv2d_forward(d, s, x, w, bias, y, work);
    ref_conv(s, xd, wd, bd, yd);
    double *ma = dalloc(nx), *mw = dalloc(nw), *mb = dalloc(nb), *mr = dalloc(ny);
    double *my = dalloc(ny), *mdx = dalloc(nx), *mdw = dalloc(nw), *mdb = dalloc(nb);
    for (size_t i = 0; i < nx; i++) ma[i] = fabs(xd[i]);
    for (size_t i = 0; i < nw; i++) mw[i] = fabs(wd[i]);
    for (size_t i = 0; i < nb; i++) mb[i] = fabs(bd[i]);
    for (size_t i = 0; i < ny; i++) mr[i] = fabs(rd[i]);
    ref_conv(s, ma, mw, mb, my);  // the sums of |terms| of y
    compare(&k->fwd, c, "y", y, yd, my, ny, TOL_FWD, s->OC, s->OH, s->OW, "direct convolution");

    // backward into zeroed gradients
    fill_value(work, nwork, STALE);
    conv2d_backward(d, s, x, w, dy, dx, dw, db, work);
    double *fdx = dalloc(nx), *fdw = dalloc(nw), *fdb = dalloc(nb);
    loss_ctx L = {s, xd, wd, bd, rd, yd, ny};
    fd_grad(&L, xd, nx, fdx);
    fd_grad(&L, wd, nw, fdw);
    fd_grad(&L, bd, nb, fdb);
    loss_ctx La = {s, ma, mw, mb, mr, yd, ny};  // the same sums with |terms|
    fd_grad(&La, ma, nx, mdx);
    fd_grad(&La, mw, nw, mdw);
    fd_grad(&La, mb, nb, mdb);
    const char *fd = "finite differences";
    compare(&k->dx, c, "dx", dx, fdx, mdx, nx, TOL_GRAD, s->C, s->H, s->W, fd);
    compare(&k->dw, c, "dw", dw, fdw, mdw, nw, TOL_GRAD, s->C, s->KH, s->KW, fd);
    compare(&k->db, c, "db", db, fdb, mdb, nb, TOL_GRAD, 0, 0, 0, fd);

    // nn/'s layer (square kernels only: dt_net_add_conv takes one kernel size)
    if (s->KH == s->KW) {
        float *ny_ = falloc(ny), *ndx = falloc(nx), *ndw = falloc(nw), *ndb = falloc(nb);
        char err[512];
        if (nn_conv(d, s, x, w, bias, dy, ny_, ndx, ndw, ndb, err, sizeof err) != 0) {
            acc_case(&k->nn, 0, INFINITY, "%s: nn/ refused the shape: %s", c->what, err);
        } else {
            size_t nt = nx > ny ? nx : ny;
            double *t = dalloc(nt > nw ? nt : nw);
            check_acc one = acc_new("");
            const char *nn = "nn/layer_conv.c";
            to_double(ny_, t, ny);
            compare(&one, c, "y", y, t, my, ny, TOL_FWD, s->OC, s->OH, s->OW, nn);
            to_double(ndx, t, nx);
            compare(&one, c, "dx", dx, t, mdx, nx, TOL_GRAD, s->C, s->H, s->W, nn);
            to_double(ndw, t, nw);
            compare(&one, c, "dw", dw, t, mdw, nw, TOL_GRAD, s->C, s->KH, s->KW, nn);
            to_double(ndb, t, nb);
            compare(&one, c, "db", db, t, mdb, nb, TOL_GRAD, 0, 0, 0, nn);
            acc_case(&k->nn, !one.failed, one.worst, "%s", one.hint);
            free(t);
        }
        free(ny_), free(ndx), free(ndw), free(ndb);
    }

    // backward again, into gradients that already hold something: it must add
    float *px = falloc(nx), *pw = falloc(nw), *pb = falloc(nb);
    fill_uniform(r, px, nx, -1, 1), fill_uniform(r, pw, nw, -1, 1), fill_uniform(r, pb, nb, -1, 1);
    float *ax = falloc(nx), *aw = falloc(nw), *ab = falloc(nb);
    memcpy(ax, px, nx * sizeof(float)), memcpy(aw, pw, nw * sizeof(float));
    memcpy(ab, pb, nb * sizeof(float));
    conv2d_backward(d, s, x, w, dy, ax, aw, ab, work);
    adds_case(adds, "conv2d_backward", "dx", c->what, px, dx, ax, nx);
    adds_case(adds, "conv2d_backward", "dw", c->what, pw, dw, aw, nw);
    adds_case(adds, "conv2d_backward", "db", c->what, pb, db, ab, nb);

    free(px), free(pw), free(pb), free(ax), free(aw), free(ab);
    free(x), free(w), free(bias), free(dy), free(y), free(work), free(dx), free(dw), free(db);
    free(xd), free(wd), free(bd), free(rd), free(yd), free(fdx), free(fdw), free(fdb);
    free(ma), free(mw), free(mb), free(mr), free(my), free(mdx), free(mdw), free(mdb);
}

void grade_conv(grade_t *g, dt_device *d, check_acc *adds) {
    uint64_t r = g->seed ^ 0xC0417ull;
    if (!r) r = 1;  // xorshift never leaves 0
    grade_next(&r);
    conv_case cases[16];
    int n = make_cases(&r, cases);
    conv_checks k = {acc_new("im2col_matches_direct_indexing"),
                     acc_new("col2im_adds_the_adjoint_of_im2col"),
                     acc_new("conv2d_forward_matches_float64_direct_convolution"),
                     acc_new("conv2d_matches_nn_conv_layer"),
                     acc_new("conv2d_backward_dx_matches_finite_differences"),
                     acc_new("conv2d_backward_dw_matches_finite_differences"),
                     acc_new("conv2d_backward_db_matches_finite_differences")};
    for (int i = 0; i < n; i++) run_case(&k, adds, d, &cases[i], &r);
    const char *shapes = "1x1 s1, 3x3 s2 p1 odd, 3x3 s1 p1, C=B=1 5x5 s3 p2, 1x1 s2, 3x1 p1, "
                         "2x2 s2 odd, random";
    acc_report(g, &k.im2col, shapes);
    acc_report(g, &k.col2im, shapes);
    acc_report(g, &k.fwd, shapes);
    acc_report(g, &k.nn, "the square kernels: y, dx, dw, db");
    acc_report(g, &k.dx, shapes);
    acc_report(g, &k.dw, shapes);
    acc_report(g, &k.db, shapes);
}
