// grader_bn_xent.c — lesson 01's batch-norm and softmax cross-entropy checks, on fresh random
// shapes (C = 1, B = 1, one pixel per channel, one drawn at random; one row, two classes).
// References, independent of your code:
//  - batch norm: Ioffe & Szegedy's Algorithm 1 in float64 (forward), central differences in
//    float64 of L = sum(dy * bn(x)) through the batch statistics (backward: the statistics
//    given to your backward are the batch's own, rounded to fp32), and nn/'s cpu device's
//    bn_backward (nn/device_cpu_nn.c) on the same inputs;
//  - softmax cross-entropy: log-sum-exp in float64 (forward), central differences of the
//    float64 mean loss (backward), and logits near +-1000 (stability).
#include "grader.h"

// ---- batch normalisation ----

typedef struct {
    char what[64];
    int B, C, HW;
} bn_case;

// Training-mode batch norm in float64; mean and var (biased) per channel when not NULL.
static void ref_bn(int B, int C, int HW, const double *x, const double *gamma,
                   const double *beta, double eps, double *y, double *mean, double *var) {
    double n = (double)B * HW;
    for (int c = 0; c < C; c++) {
        double s = 0, ss = 0;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++) s += x[((size_t)b * C + c) * HW + i];
        double m = s / n;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++) {
                double t = x[((size_t)b * C + c) * HW + i] - m;
                ss += t * t;
            }
        double v = ss / n;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++) {
                size_t k = ((size_t)b * C + c) * HW + i;
                y[k] = gamma[c] * (x[k] - m) / sqrt(v + eps) + beta[c];
            }
        if (mean) mean[c] = m;
        if (var) var[c] = v;
    }
}

typedef struct {
    int B, C, HW;
    double *x, *gamma, *beta, *r, *y;
} bn_loss_ctx;

static double bn_loss(const bn_loss_ctx *L) {  // sum(r * bn(x))
    ref_bn(L->B, L->C, L->HW, L->x, L->gamma, L->beta, 1e-5, L->y, NULL, NULL);
    double s = 0;
    for (size_t i = 0; i < (size_t)L->B * L->C * L->HW; i++) s += L->r[i] * L->y[i];
    return s;
}

static void bn_fd(const bn_loss_ctx *L, double *v, size_t n, double *fd) {
    for (size_t i = 0; i < n; i++) {
        double keep = v[i];
        v[i] = keep + FD_H;
        double lp = bn_loss(L);
        v[i] = keep - FD_H;
        double lm = bn_loss(L);
        v[i] = keep;
        fd[i] = (lp - lm) / (2 * FD_H);
    }
}

// The sums of |terms| (close_enough) of what batch norm computes, from the float64
// statistics: mean (C), y (n), dx (n), dgamma and dbeta (C).
typedef struct {
    double *mean, *y, *dx, *dgamma, *dbeta;
} bn_mags;

static bn_mags bn_mags_of(int B, int C, int HW, const double *x, const double *gamma,
                          const double *beta, const double *dy, const double *mean,
                          const double *invstd) {
    size_t n = (size_t)B * C * HW;
    bn_mags m = {dalloc(C), dalloc(n), dalloc(n), dalloc(C), dalloc(C)};
    double cnt = (double)B * HW;
    for (int c = 0; c < C; c++) {
        double g = fabs(gamma[c]) * invstd[c], sx = 0, sdy = 0, sdyx = 0;
        // xhat = x*invstd - mean*invstd: its terms are (|x| + |mean|)*invstd
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++) {
                size_t k = ((size_t)b * C + c) * HW + i;
                double xhat = (fabs(x[k]) + fabs(mean[c])) * invstd[c];
                sx += fabs(x[k]), sdy += fabs(dy[k]), sdyx += fabs(dy[k]) * xhat;
                m.y[k] = fabs(gamma[c]) * xhat + fabs(beta[c]);
            }
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++) {
                size_t k = ((size_t)b * C + c) * HW + i;
                double xhat = (fabs(x[k]) + fabs(mean[c])) * invstd[c];
                m.dx[k] = g * (fabs(dy[k]) + sdy / cnt + xhat * sdyx / cnt);
            }
        m.mean[c] = sx / cnt, m.dgamma[c] = sdyx, m.dbeta[c] = sdy;
    }
    return m;
}

static void bn_compare(check_acc *a, const bn_case *c, const char *name, const float *got,
                       const double *want, const double *mag, size_t n, double tol,
                       int per_channel, const char *against) {
    size_t at;
    double err;
    char w4[WHERE_LEN];
    int ok = close_enough(got, want, mag, n, tol, &at, &err);
    acc_case(a, ok, err, "%s: %s%s: expected %.6g (%s), got %.6g%s (relative error %.1e)",
             c->what, name,
             per_channel ? (snprintf(w4, sizeof w4, "[c=%zu]", at), w4)
                         : where4(w4, at, c->C, c->HW, 0),
             want[at], against, got[at], got_note(got[at]), err);
}

typedef struct {
    check_acc fwd, dx, dgb, nn;
} bn_checks;

static void bn_run(bn_checks *k, check_acc *adds, dt_device *d, const bn_case *c, uint64_t *r) {
    int B = c->B, C = c->C, HW = c->HW;
    size_t n = (size_t)B * C * HW;
    float *x = falloc(n), *gamma = falloc(C), *beta = falloc(C), *dy = falloc(n);
    float *y = falloc(n), *mean = falloc(C), *invstd = falloc(C);
    for (int ch = 0; ch < C; ch++) {  // each channel its own offset and spread
        float shift = (float)(2 * grade_uniform(r));
        float spread = (float)(1.25 + 0.75 * grade_uniform(r));
        for (int b = 0; b < B; b++)
            for (int i = 0; i < HW; i++)
                x[((size_t)b * C + ch) * HW + i] = shift + spread * (float)grade_uniform(r);
    }
    fill_uniform(r, gamma, C, 0.5, 1.5);
    fill_uniform(r, beta, C, -0.5, 0.5);
    fill_uniform(r, dy, n, -1, 1);
    double *xd = dalloc(n), *gd = dalloc(C), *bd = dalloc(C), *rd = dalloc(n), *yd = dalloc(n);
    double *md = dalloc(C), *vd = dalloc(C), *invd = dalloc(C);
    to_double(x, xd, n), to_double(gamma, gd, C), to_double(beta, bd, C), to_double(dy, rd, n);

    // forward
    fill_value(y, n, STALE), fill_value(mean, C, STALE), fill_value(invstd, C, STALE);
    bn_forward_train(B, C, HW, x, gamma, beta, 1e-5f, y, mean, invstd);
    ref_bn(B, C, HW, xd, gd, bd, 1e-5, yd, md, vd);
    for (int ch = 0; ch < C; ch++) invd[ch] = 1.0 / sqrt(vd[ch] + 1e-5);
    check_acc one = acc_new("");
    const char *alg = "Algorithm 1 in float64";
    bn_mags mg = bn_mags_of(B, C, HW, xd, gd, bd, rd, md, invd);
    bn_compare(&one, c, "mean", mean, md, mg.mean, C, TOL_FWD, 1, alg);
    bn_compare(&one, c, "invstd", invstd, invd, NULL, C, TOL_FWD, 1,
               "1/sqrt(var + eps), var = sum (x - mean)^2 / n: two passes, or sums in "
               "double (one-pass E[x^2] - mean^2 in fp32 cancels)");
    bn_compare(&one, c, "y", y, yd, mg.y, n, TOL_FWD, 0, alg);
    acc_case(&k->fwd, !one.failed, one.worst, "%s", one.hint);

    // backward, given the batch's statistics (rounded to fp32), into zeros
    float *mf = falloc(C), *if_ = falloc(C);
    for (int ch = 0; ch < C; ch++) mf[ch] = (float)md[ch], if_[ch] = (float)invd[ch];
    float *dx = falloc(n), *dg = falloc(C), *db = falloc(C);
    bn_backward(B, C, HW, x, dy, gamma, mf, if_, dx, dg, db);
    double *fdx = dalloc(n), *fdg = dalloc(C), *fdb = dalloc(C);
    bn_loss_ctx L = {B, C, HW, xd, gd, bd, rd, yd};
    bn_fd(&L, xd, n, fdx);
    bn_fd(&L, gd, C, fdg);
    bn_fd(&L, bd, C, fdb);
    const char *fd = "finite differences";
    bn_compare(&k->dx, c, "dx", dx, fdx, mg.dx, n, TOL_GRAD, 0, fd);
    one = acc_new("");
    bn_compare(&one, c, "dgamma", dg, fdg, mg.dgamma, C, TOL_GRAD, 1, fd);
    bn_compare(&one, c, "dbeta", db, fdb, mg.dbeta, C, TOL_GRAD, 1, fd);
    acc_case(&k->dgb, !one.failed, one.worst, "%s", one.hint);

    // nn/'s bn_backward on the same inputs (the cpu device's memory is the host's)
    float *ndx = falloc(n), *ndg = falloc(C), *ndb = falloc(C);
    d->bn_backward(d, dy, x, B, C, HW, gamma, mf, if_, ndx, ndg, ndb);
    double *t = dalloc(n);
    const char *nn = "nn/'s bn_backward";
    one = acc_new("");
    to_double(ndx, t, n);
    bn_compare(&one, c, "dx", dx, t, mg.dx, n, TOL_GRAD, 0, nn);
    to_double(ndg, t, C);
    bn_compare(&one, c, "dgamma", dg, t, mg.dgamma, C, TOL_GRAD, 1, nn);
    to_double(ndb, t, C);
    bn_compare(&one, c, "dbeta", db, t, mg.dbeta, C, TOL_GRAD, 1, nn);
    acc_case(&k->nn, !one.failed, one.worst, "%s", one.hint);

    // again, on top of what the gradients already hold
    float *px = falloc(n), *pg = falloc(C), *pb = falloc(C);
    fill_uniform(r, px, n, -1, 1), fill_uniform(r, pg, C, -1, 1), fill_uniform(r, pb, C, -1, 1);
    float *ax = falloc(n), *ag = falloc(C), *ab = falloc(C);
    memcpy(ax, px, n * sizeof(float)), memcpy(ag, pg, C * sizeof(float));
    memcpy(ab, pb, C * sizeof(float));
    bn_backward(B, C, HW, x, dy, gamma, mf, if_, ax, ag, ab);
    adds_case(adds, "bn_backward", "dx", c->what, px, dx, ax, n);
    adds_case(adds, "bn_backward", "dgamma", c->what, pg, dg, ag, C);
    adds_case(adds, "bn_backward", "dbeta", c->what, pb, db, ab, C);

    free(x), free(gamma), free(beta), free(dy), free(y), free(mean), free(invstd);
    free(xd), free(gd), free(bd), free(rd), free(yd), free(md), free(vd), free(invd);
    free(mf), free(if_), free(dx), free(dg), free(db), free(fdx), free(fdg), free(fdb);
    free(ndx), free(ndg), free(ndb), free(t), free(px), free(pg), free(pb);
    free(ax), free(ag), free(ab);
    free(mg.mean), free(mg.y), free(mg.dx), free(mg.dgamma), free(mg.dbeta);
}

void grade_bn(grade_t *g, dt_device *d, check_acc *adds) {
    uint64_t r = g->seed ^ 0xB47C4ull;
    if (!r) r = 1;  // xorshift never leaves 0
    grade_next(&r);
    bn_case cases[4];
    int h, w;
    h = grade_int(&r, 1, 5), w = grade_int(&r, 2, 5);
    cases[0] = (bn_case){"", grade_int(&r, 2, 4), 1, h * w};
    h = grade_int(&r, 2, 5), w = grade_int(&r, 1, 5);
    cases[1] = (bn_case){"", 1, grade_int(&r, 1, 4), h * w};
    cases[2] = (bn_case){"", grade_int(&r, 2, 6), grade_int(&r, 1, 4), 1};
    h = grade_int(&r, 1, 5), w = grade_int(&r, 1, 5);
    cases[3] = (bn_case){"", grade_int(&r, 2, 4), grade_int(&r, 1, 4), h * w};
    bn_checks k = {acc_new("batchnorm_forward_matches_float64"),
                   acc_new("batchnorm_backward_dx_matches_finite_differences"),
                   acc_new("batchnorm_backward_dgamma_dbeta_match_finite_differences"),
                   acc_new("batchnorm_backward_matches_nn_bn_backward")};
    for (int i = 0; i < 4; i++) {
        snprintf(cases[i].what, sizeof cases[i].what, "batchnorm x (B=%d, C=%d, HW=%d)",
                 cases[i].B, cases[i].C, cases[i].HW);
        bn_run(&k, adds, d, &cases[i], &r);
    }
    const char *shapes = "C = 1, B = 1, HW = 1, random";
    acc_report(g, &k.fwd, shapes);
    acc_report(g, &k.dx, shapes);
    acc_report(g, &k.dgb, shapes);
    acc_report(g, &k.nn, shapes);
}

// ---- softmax cross-entropy ----

// float64 log-sum-exp: probs (B,K) and the mean loss
static double ref_xent(int B, int K, const double *z, const int32_t *labels, double *probs) {
    double total = 0;
    for (int b = 0; b < B; b++) {
        const double *zb = z + (size_t)b * K;
        double m = zb[0], s = 0;
        for (int k = 1; k < K; k++) m = zb[k] > m ? zb[k] : m;
        for (int k = 0; k < K; k++) s += exp(zb[k] - m);
        for (int k = 0; k < K; k++)
            if (probs) probs[(size_t)b * K + k] = exp(zb[k] - m) / s;
        total += m + log(s) - zb[labels[b]];
    }
    return total / B;
}

typedef struct {
    check_acc fwd, bwd, stable;
} xent_checks;

// backward from the float64 probabilities (rounded), into zeros, against central
// differences of the float64 mean loss; then again on top of random values (it must add)
static void xent_backward(xent_checks *k, check_acc *adds, int B, int K, double *zd,
                          const double *pd, const int32_t *labels, const char *what,
                          uint64_t *r) {
    size_t n = (size_t)B * K, at;
    double err;
    char w4[WHERE_LEN];
    float *pf = falloc(n), *dz = falloc(n);
    double *fd = dalloc(n);
    for (size_t i = 0; i < n; i++) pf[i] = (float)pd[i];
    softmax_xent_backward(B, K, pf, labels, dz);
    for (size_t i = 0; i < n; i++) {
        double keep = zd[i];
        zd[i] = keep + FD_H;
        double lp = ref_xent(B, K, zd, labels, NULL);
        zd[i] = keep - FD_H;
        double lm = ref_xent(B, K, zd, labels, NULL);
        zd[i] = keep;
        fd[i] = (lp - lm) / (2 * FD_H);
    }
    double *mag = dalloc(n);  // |p| + |onehot|, over B
    for (size_t i = 0; i < n; i++) mag[i] = (pd[i] + ((int)(i % K) == labels[i / K])) / B;
    int ok = close_enough(dz, fd, mag, n, TOL_GRAD, &at, &err);
    acc_case(&k->bwd, ok, err,
             "%s: dlogits%s (label of that row %d): expected %.6g (finite differences of the "
             "mean loss), got %.6g%s", what, where4(w4, at, K, 0, 0), labels[at / K], fd[at],
             dz[at], got_note(dz[at]));
    float *pre = falloc(n), *after = falloc(n);
    fill_uniform(r, pre, n, -1, 1);
    memcpy(after, pre, n * sizeof(float));
    softmax_xent_backward(B, K, pf, labels, after);
    adds_case(adds, "softmax_xent_backward", "dlogits", what, pre, dz, after, n);
    free(pf), free(dz), free(fd), free(pre), free(after), free(mag);
}

static void xent_run(xent_checks *k, check_acc *adds, int B, int K, uint64_t *r, int big) {
    size_t n = (size_t)B * K;
    float *z = falloc(n), *p = falloc(n);
    int32_t *labels = calloc((size_t)B, sizeof(int32_t));
    double *zd = dalloc(n), *pd = dalloc(n);
    char what[128];
    if (big) {  // rows near +1000, near -1000, one far below the rest, and a +-1000 mix
        for (int b = 0; b < B; b++)
            for (int j = 0; j < K; j++) {
                double u = 10 * grade_uniform(r), sign = grade_int(r, 0, 1) ? 1 : -1;
                double v = b % 4 == 0 ? 1000 + u : b % 4 == 1 ? -1000 + u
                         : b % 4 == 2 ? (j == 0 ? -1000 + u : 1000 + u) : sign * 1000 + u;
                z[(size_t)b * K + j] = (float)v;
            }
        snprintf(what, sizeof what, "logits (%d,%d) near +-1000", B, K);
    } else {
        fill_uniform(r, z, n, -4, 4);
        snprintf(what, sizeof what, "logits (%d,%d) in [-4,4]", B, K);
    }
    for (int b = 0; b < B; b++) labels[b] = grade_int(r, 0, K - 1);
    to_double(z, zd, n);
    double want = ref_xent(B, K, zd, labels, pd);
    fill_value(p, n, STALE);
    float loss = softmax_xent_forward(B, K, z, labels, p);
    size_t at;
    double err, err2;
    char w4[WHERE_LEN];
    int ok_p = close_enough(p, pd, NULL, n, big ? 1e-4 : TOL_FWD, &at, &err);
    // the loss's terms: per row max z, log sum exp(z - max), z[label]
    double lmag = 0;
    for (int b = 0; b < B; b++) {
        double m = zd[(size_t)b * K], s = 0;
        for (int j = 1; j < K; j++) m = zd[(size_t)b * K + j] > m ? zd[(size_t)b * K + j] : m;
        for (int j = 0; j < K; j++) s += exp(zd[(size_t)b * K + j] - m);
        lmag += (fabs(m) + log(s) + fabs(zd[(size_t)b * K + labels[b]])) / B;
    }
    int ok_l = close_enough(&loss, &want, &lmag, 1, TOL_FWD, &(size_t){0}, &err2);
    check_acc *a = big ? &k->stable : &k->fwd;
    if (!ok_l)
        acc_case(a, 0, err2, "%s: the mean loss: expected %.7g (float64 log-sum-exp), got %.7g%s",
                 what, want, loss, got_note(loss));
    else
        acc_case(a, ok_p, err > err2 ? err : err2,
                 "%s: probs%s: expected %.6g (float64), got %.6g%s", what,
                 where4(w4, at, K, 0, 0), pd[at], p[at], got_note(p[at]));
    if (!big) xent_backward(k, adds, B, K, zd, pd, labels, what, r);
    free(z), free(p), free(labels), free(zd), free(pd);
}

void grade_xent(grade_t *g, check_acc *adds) {
    uint64_t r = g->seed ^ 0x5E7ull;
    if (!r) r = 1;  // xorshift never leaves 0
    grade_next(&r);
    xent_checks k = {acc_new("softmax_xent_forward_matches_float64"),
                     acc_new("softmax_xent_backward_matches_finite_differences"),
                     acc_new("softmax_xent_is_stable_for_large_logits")};
    xent_run(&k, adds, 1, grade_int(&r, 2, 10), &r, 0);
    xent_run(&k, adds, grade_int(&r, 2, 5), 2, &r, 0);
    xent_run(&k, adds, grade_int(&r, 2, 6), grade_int(&r, 3, 12), &r, 0);
    xent_run(&k, adds, 4, grade_int(&r, 2, 6), &r, 1);
    xent_run(&k, adds, 8, grade_int(&r, 3, 10), &r, 1);
    acc_report(g, &k.fwd, "B = 1; K = 2; random");
    acc_report(g, &k.bwd, "B = 1; K = 2; random");
    acc_report(g, &k.stable, "rows near +1000, near -1000, one logit far below, a mix");
}
