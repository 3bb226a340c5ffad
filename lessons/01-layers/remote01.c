// remote01.c — lesson 01's grader asks the student's code instead of calling it (the
// judge's side of the split grader, lessons/kit/subject.h): the grader is linked with these
// functions, of layers01.h's signatures, in place of layers.c, which runs in the subject
// (subject01.c, another process), so that the process that checks and prints verdicts never
// holds the student's code. Each call is one request (subject01.h): the arguments by value,
// the inputs' arrays, and the outputs' current contents (the grader's stale values or the
// gradients a backward must add to); the outputs come back into the grader's own arrays.
// The device a conv2d takes is not sent: the subject has a cpu device of its own (one
// thread, as the grader's). `grader --time` is the subject's too (time_conv_exec).
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../kit/subject.h"
#include "grader.h"
#include "subject01.h"

static subject_buf req, rep;

static void start_request(void) { req.len = req.at = 0, req.bad = 0; }
static void put_int(long v) { sb_u64(&req, (uint64_t)v); }
static void put_floats(const float *x, size_t n) { sb_put(&req, x, n * sizeof *x); }

// The call, and the reply's check: exactly `want` bytes, read back by the caller with get.
static void call(uint32_t fn, const char *what, size_t want) {
    subject_call(fn, &req, &rep, what);
    if (rep.len != want) subject_malformed(what);
}
static void get(void *x, size_t bytes) { sb_get(&rep, x, bytes); }

static void conv_what(char *what, size_t cap, const char *fn, const conv_shape *s) {
    snprintf(what, cap, "%s(x (%d,%d,%d,%d), w (%d,%d,%d,%d), stride %d, pad %d)", fn, s->B,
             s->C, s->H, s->W, s->OC, s->C, s->KH, s->KW, s->stride, s->pad);
}

// im2col and col2im: the seven shape arguments, then the arrays
static void put_geometry(int C, int H, int W, int KH, int KW, int stride, int pad) {
    put_int(C), put_int(H), put_int(W), put_int(KH), put_int(KW), put_int(stride);
    put_int(pad);
}
static size_t col_floats(int C, int H, int W, int KH, int KW, int stride, int pad) {
    return (size_t)C * KH * KW * conv_out(H, KH, stride, pad) * conv_out(W, KW, stride, pad);
}

void im2col(const float *x, int C, int H, int W, int KH, int KW, int stride, int pad,
            float *col) {
    size_t nx = (size_t)C * H * W, ncol = col_floats(C, H, W, KH, KW, stride, pad);
    start_request();
    put_geometry(C, H, W, KH, KW, stride, pad);
    put_floats(x, nx), put_floats(col, ncol);
    char what[160];
    snprintf(what, sizeof what, "im2col(C %d, H %d, W %d, %dx%d kernel, stride %d, pad %d)", C,
             H, W, KH, KW, stride, pad);
    call(SUBJECT01_IM2COL, what, ncol * sizeof(float));
    get(col, ncol * sizeof(float));
}

void col2im(const float *col, int C, int H, int W, int KH, int KW, int stride, int pad,
            float *x) {
    size_t nx = (size_t)C * H * W, ncol = col_floats(C, H, W, KH, KW, stride, pad);
    start_request();
    put_geometry(C, H, W, KH, KW, stride, pad);
    put_floats(col, ncol), put_floats(x, nx);
    char what[160];
    snprintf(what, sizeof what, "col2im(C %d, H %d, W %d, %dx%d kernel, stride %d, pad %d)", C,
             H, W, KH, KW, stride, pad);
    call(SUBJECT01_COL2IM, what, nx * sizeof(float));
    get(x, nx * sizeof(float));
}

// The sizes of one convolution's tensors.
typedef struct {
    size_t x, w, b, y, work;
} conv_sizes;
static conv_sizes sizes_of(const conv_shape *s) {
    conv_sizes z = {(size_t)s->B * s->C * s->H * s->W, (size_t)s->OC * s->C * s->KH * s->KW,
                    (size_t)s->OC, (size_t)s->B * s->OC * s->OH * s->OW,
                    (size_t)conv_work_floats(s)};
    return z;
}

void conv2d_forward(dt_device *d, const conv_shape *s, const float *x, const float *w,
                    const float *bias, float *y, float *work) {
    (void)d;  // the subject's own cpu device runs the student's gemm calls
    conv_sizes z = sizes_of(s);
    start_request();
    sb_put(&req, s, sizeof *s);
    put_floats(x, z.x), put_floats(w, z.w), put_floats(bias, z.b);
    put_floats(y, z.y), put_floats(work, z.work);
    char what[200];
    conv_what(what, sizeof what, "conv2d_forward", s);
    call(SUBJECT01_CONV_FORWARD, what, z.y * sizeof(float));
    get(y, z.y * sizeof(float));
}

void conv2d_backward(dt_device *d, const conv_shape *s, const float *x, const float *w,
                     const float *dy, float *dx, float *dw, float *db, float *work) {
    (void)d;
    conv_sizes z = sizes_of(s);
    start_request();
    sb_put(&req, s, sizeof *s);
    put_floats(x, z.x), put_floats(w, z.w), put_floats(dy, z.y);
    put_floats(dx, z.x), put_floats(dw, z.w), put_floats(db, z.b), put_floats(work, z.work);
    char what[200];
    conv_what(what, sizeof what, "conv2d_backward", s);
    call(SUBJECT01_CONV_BACKWARD, what, (z.x + z.w + z.b) * sizeof(float));
    get(dx, z.x * sizeof(float)), get(dw, z.w * sizeof(float)), get(db, z.b * sizeof(float));
}

void bn_forward_train(int B, int C, int HW, const float *x, const float *gamma,
                      const float *beta, float eps, float *y, float *mean, float *invstd) {
    size_t n = (size_t)B * C * HW;
    start_request();
    put_int(B), put_int(C), put_int(HW);
    sb_put(&req, &eps, sizeof eps);
    put_floats(x, n), put_floats(gamma, C), put_floats(beta, C);
    put_floats(y, n), put_floats(mean, C), put_floats(invstd, C);
    char what[120];
    snprintf(what, sizeof what, "bn_forward_train(B %d, C %d, HW %d)", B, C, HW);
    call(SUBJECT01_BN_FORWARD, what, (n + 2 * (size_t)C) * sizeof(float));
    get(y, n * sizeof(float)), get(mean, C * sizeof(float)), get(invstd, C * sizeof(float));
}

void bn_backward(int B, int C, int HW, const float *x, const float *dy, const float *gamma,
                 const float *mean, const float *invstd, float *dx, float *dgamma,
                 float *dbeta) {
    size_t n = (size_t)B * C * HW;
    start_request();
    put_int(B), put_int(C), put_int(HW);
    put_floats(x, n), put_floats(dy, n), put_floats(gamma, C), put_floats(mean, C);
    put_floats(invstd, C), put_floats(dx, n), put_floats(dgamma, C), put_floats(dbeta, C);
    char what[120];
    snprintf(what, sizeof what, "bn_backward(B %d, C %d, HW %d)", B, C, HW);
    call(SUBJECT01_BN_BACKWARD, what, (n + 2 * (size_t)C) * sizeof(float));
    get(dx, n * sizeof(float)), get(dgamma, C * sizeof(float)), get(dbeta, C * sizeof(float));
}

float softmax_xent_forward(int B, int K, const float *logits, const int32_t *labels,
                           float *probs) {
    size_t n = (size_t)B * K;
    start_request();
    put_int(B), put_int(K);
    put_floats(logits, n);
    sb_put(&req, labels, (size_t)B * sizeof *labels);
    put_floats(probs, n);
    char what[120];
    snprintf(what, sizeof what, "softmax_xent_forward(B %d, K %d)", B, K);
    call(SUBJECT01_XENT_FORWARD, what, (1 + n) * sizeof(float));
    float loss;
    get(&loss, sizeof loss), get(probs, n * sizeof(float));
    return loss;
}

void softmax_xent_backward(int B, int K, const float *probs, const int32_t *labels,
                           float *dlogits) {
    size_t n = (size_t)B * K;
    start_request();
    put_int(B), put_int(K);
    put_floats(probs, n);
    sb_put(&req, labels, (size_t)B * sizeof *labels);
    put_floats(dlogits, n);
    char what[120];
    snprintf(what, sizeof what, "softmax_xent_backward(B %d, K %d)", B, K);
    call(SUBJECT01_XENT_BACKWARD, what, n * sizeof(float));
    get(dlogits, n * sizeof(float));
}

// `grader --time [BATCH]`: a measurement of the student's im2col and col2im, not a grade,
// and timed in the process that runs them: the grader becomes the subject with the same
// arguments (LESSON_SUBJECT when set, else the subject beside the grader).
int time_conv_exec(int argc, char **argv) {
    char path[PATH_MAX];
    const char *env = getenv("LESSON_SUBJECT");
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
    } else {
        ssize_t k = readlink("/proc/self/exe", path, sizeof path - 16);
        if (k <= 0) {
            perror("grader --time: /proc/self/exe");
            return 2;
        }
        path[k] = '\0';
        char *slash = strrchr(path, '/');
        snprintf(slash ? slash + 1 : path, 16, "subject");
    }
    char *args[4] = {path, "--time", argc > 1 ? argv[1] : NULL, NULL};
    fflush(stdout);
    execv(path, args);
    fprintf(stderr, "grader --time: cannot run %s (the subject that holds your layers.c): ",
            path);
    perror(NULL);
    return 2;
}
