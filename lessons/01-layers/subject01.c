// subject01.c — the process that runs lesson 01's layers.c (lessons/kit/subject.h): a server
// that answers the grader's requests (subject01.h) with what the student's functions write
// and return. Each handler reads the call's arguments and arrays, calls the function on
// copies of its own, and replies with the outputs (outputs only: an input the call should
// only read is the grader's business, not this process's). conv2d_forward/backward run on
// this process's own cpu device (one thread), made once.
// `subject --time [BATCH]` is grader_time.c's measurement instead (the grader's --time
// runs this program: kit/subject.h keeps the student's code out of the grader).
// Linked with layers.c, grader_time.c, the kit's subject.c and, of dtlab's library, only
// what they reach (--gc-sections): the cpu device, not nn/'s conv or batch-norm layers.
#include <string.h>

#include "../kit/subject.h"
#include "grader.h"
#include "subject01.h"

static dt_device *cpu;

// A request the grader would never send: the server stops (the grader reports the crash).
static void require(int ok) {
    if (!ok) exit(2);
}

// The next n elements of `size` bytes of the request, in a buffer of their own (freed by
// the handler); an array longer than what is left is a malformed request.
static void *take(subject_buf *req, size_t n, size_t size) {
    require(!req->bad && n <= (req->len - req->at) / size);
    void *p = malloc(n > 0 ? n * size : 1);
    require(p != NULL);
    sb_get(req, p, n * size);
    return p;
}
static float *take_f(subject_buf *req, size_t n) { return take(req, n, sizeof(float)); }
static int take_int(subject_buf *req) {
    uint64_t v = sb_get_u64(req);
    require(!req->bad && v <= 1u << 20);  // the grader's shapes are small and positive
    return (int)v;
}
static void done(const subject_buf *req) { require(!req->bad && req->at == req->len); }
static void put_f(subject_buf *reply, const float *x, size_t n) {
    sb_put(reply, x, n * sizeof *x);
}

// ---- im2col, col2im ----

typedef struct {
    int C, H, W, KH, KW, stride, pad;
    size_t nx, ncol;
} geometry;

static geometry take_geometry(subject_buf *req) {
    geometry g;
    g.C = take_int(req), g.H = take_int(req), g.W = take_int(req), g.KH = take_int(req);
    g.KW = take_int(req), g.stride = take_int(req), g.pad = take_int(req);
    require(g.stride > 0 && g.KH > 0 && g.KW > 0);
    int oh = conv_out(g.H, g.KH, g.stride, g.pad), ow = conv_out(g.W, g.KW, g.stride, g.pad);
    require(oh > 0 && ow > 0);
    g.nx = (size_t)g.C * g.H * g.W, g.ncol = (size_t)g.C * g.KH * g.KW * oh * ow;
    return g;
}

static void serve_im2col(subject_buf *req, subject_buf *reply) {
    geometry g = take_geometry(req);
    float *x = take_f(req, g.nx), *col = take_f(req, g.ncol);
    done(req);
    im2col(x, g.C, g.H, g.W, g.KH, g.KW, g.stride, g.pad, col);
    put_f(reply, col, g.ncol);
    free(x), free(col);
}

static void serve_col2im(subject_buf *req, subject_buf *reply) {
    geometry g = take_geometry(req);
    float *col = take_f(req, g.ncol), *x = take_f(req, g.nx);
    done(req);
    col2im(col, g.C, g.H, g.W, g.KH, g.KW, g.stride, g.pad, x);
    put_f(reply, x, g.nx);
    free(col), free(x);
}

// ---- conv2d ----

typedef struct {
    conv_shape s;
    size_t x, w, b, y, work;
} conv_req;

static conv_req take_shape(subject_buf *req) {
    conv_req c;
    sb_get(req, &c.s, sizeof c.s);
    const conv_shape *s = &c.s;
    require(!req->bad && s->B > 0 && s->C > 0 && s->OC > 0 && s->stride > 0 && s->KH > 0 &&
            s->KW > 0 && s->OH == conv_out(s->H, s->KH, s->stride, s->pad) &&
            s->OW == conv_out(s->W, s->KW, s->stride, s->pad) && s->OH > 0 && s->OW > 0 &&
            s->B <= 1 << 10 && s->C <= 1 << 12 && s->OC <= 1 << 12 && s->H <= 1 << 12 &&
            s->W <= 1 << 12);
    c.x = (size_t)s->B * s->C * s->H * s->W, c.w = (size_t)s->OC * s->C * s->KH * s->KW;
    c.b = (size_t)s->OC, c.y = (size_t)s->B * s->OC * s->OH * s->OW;
    c.work = (size_t)conv_work_floats(s);
    return c;
}

static void serve_conv_forward(subject_buf *req, subject_buf *reply) {
    conv_req c = take_shape(req);
    float *x = take_f(req, c.x), *w = take_f(req, c.w), *bias = take_f(req, c.b);
    float *y = take_f(req, c.y), *work = take_f(req, c.work);
    done(req);
    conv2d_forward(cpu, &c.s, x, w, bias, y, work);
    put_f(reply, y, c.y);
    free(x), free(w), free(bias), free(y), free(work);
}

static void serve_conv_backward(subject_buf *req, subject_buf *reply) {
    conv_req c = take_shape(req);
    float *x = take_f(req, c.x), *w = take_f(req, c.w), *dy = take_f(req, c.y);
    float *dx = take_f(req, c.x), *dw = take_f(req, c.w), *db = take_f(req, c.b);
    float *work = take_f(req, c.work);
    done(req);
    conv2d_backward(cpu, &c.s, x, w, dy, dx, dw, db, work);
    put_f(reply, dx, c.x), put_f(reply, dw, c.w), put_f(reply, db, c.b);
    free(x), free(w), free(dy), free(dx), free(dw), free(db), free(work);
}

// ---- batch norm ----

static void serve_bn_forward(subject_buf *req, subject_buf *reply) {
    int B = take_int(req), C = take_int(req), HW = take_int(req);
    float eps;
    sb_get(req, &eps, sizeof eps);
    size_t n = (size_t)B * C * HW;
    float *x = take_f(req, n), *gamma = take_f(req, C), *beta = take_f(req, C);
    float *y = take_f(req, n), *mean = take_f(req, C), *invstd = take_f(req, C);
    done(req);
    bn_forward_train(B, C, HW, x, gamma, beta, eps, y, mean, invstd);
    put_f(reply, y, n), put_f(reply, mean, C), put_f(reply, invstd, C);
    free(x), free(gamma), free(beta), free(y), free(mean), free(invstd);
}

static void serve_bn_backward(subject_buf *req, subject_buf *reply) {
    int B = take_int(req), C = take_int(req), HW = take_int(req);
    size_t n = (size_t)B * C * HW;
    float *x = take_f(req, n), *dy = take_f(req, n), *gamma = take_f(req, C);
    float *mean = take_f(req, C), *invstd = take_f(req, C);
    float *dx = take_f(req, n), *dgamma = take_f(req, C), *dbeta = take_f(req, C);
    done(req);
    bn_backward(B, C, HW, x, dy, gamma, mean, invstd, dx, dgamma, dbeta);
    put_f(reply, dx, n), put_f(reply, dgamma, C), put_f(reply, dbeta, C);
    free(x), free(dy), free(gamma), free(mean), free(invstd), free(dx), free(dgamma);
    free(dbeta);
}

// ---- softmax cross-entropy ----

static void serve_xent_forward(subject_buf *req, subject_buf *reply) {
    int B = take_int(req), K = take_int(req);
    size_t n = (size_t)B * K;
    float *logits = take_f(req, n), *probs;
    int32_t *labels = take(req, (size_t)B, sizeof *labels);
    probs = take_f(req, n);
    done(req);
    float loss = softmax_xent_forward(B, K, logits, labels, probs);
    put_f(reply, &loss, 1), put_f(reply, probs, n);
    free(logits), free(labels), free(probs);
}

static void serve_xent_backward(subject_buf *req, subject_buf *reply) {
    int B = take_int(req), K = take_int(req);
    size_t n = (size_t)B * K;
    float *probs = take_f(req, n), *dlogits;
    int32_t *labels = take(req, (size_t)B, sizeof *labels);
    dlogits = take_f(req, n);
    done(req);
    softmax_xent_backward(B, K, probs, labels, dlogits);
    put_f(reply, dlogits, n);
    free(probs), free(labels), free(dlogits);
}

int main(int argc, char **argv) {
    cpu = dt_device_cpu_create(1);  // one thread, as the grader's
    if (argc > 1 && strcmp(argv[1], "--time") == 0) return time_conv(cpu, argc - 1, argv + 1);
    const subject_handler h[SUBJECT01_N] = {
        serve_im2col,      serve_col2im,      serve_conv_forward, serve_conv_backward,
        serve_bn_forward,  serve_bn_backward, serve_xent_forward, serve_xent_backward};
    return subject_serve(h, SUBJECT01_N);
}
