// coll_fp16.c — fp16 on the wire (an extension of the core runner through its hooks, coll_run.h): float32 data
// travels as IEEE binary16 and is accumulated in float32 (Micikevicius et al. 2018; Jia et
// al. 2018 §3.2, half the bytes of every message). Two things keep every rank's result
// bit-identical: a received message is widened before it is added or installed, and the
// owner of a finished chunk rounds its own copy to binary16 (the schedule's QUANT op)
// before sending it, so it holds exactly what its receivers will hold.
#include "../kernels.h"
#include "coll_hooks.h"

static void to_f16(dt_device *d, uint16_t *y, const float *x, size_t n) {
    if (d) d->f32_to_f16(d, x, y, n);
    else for (size_t i = 0; i < n; i++) y[i] = dt_f32_to_f16(x[i]);
}

static void from_f16(dt_device *d, float *y, const uint16_t *x, size_t n) {
    if (d) d->f16_to_f32(d, x, y, n);
    else for (size_t i = 0; i < n; i++) y[i] = dt_f16_to_f32(x[i]);
}

// Before the round is posted: the QUANT ops round their range in place (through x->stage
// as scratch), then every send is converted into x->stage, one after the other in op
// order — where the core runner will send them from.
void dt_fp16_before_post(dt_run *x) {
    const dt_lane *l = x->lane;
    int first = l->round_start[x->cur], end = l->round_start[x->cur + 1];
    for (int i = first; i < end; i++) {
        const dt_op *op = &l->ops[i];
        if (op->kind != DT_OP_QUANT) continue;
        float *v = (float *)(x->buf + op->off * x->esize);
        to_f16(x->dev, (uint16_t *)x->stage, v, op->count);
        from_f16(x->dev, v, (const uint16_t *)x->stage, op->count);
    }
    size_t spos = 0;
    for (int i = first; i < end; i++) {
        const dt_op *op = &l->ops[i];
        if (op->kind != DT_OP_SEND) continue;
        to_f16(x->dev, (uint16_t *)(x->stage + spos * x->wsize),
               (const float *)(x->buf + op->off * x->esize), op->count);
        spos += op->count;
    }
}

// A received binary16 message: added (RECV_ADD) or installed (RECV_COPY) in float32.
void dt_fp16_land(dt_run *x, const dt_op *op, char *dst, const char *src) {
    dt_device *d = x->dev;
    const uint16_t *h = (const uint16_t *)src;
    if (op->kind == DT_OP_RECV_COPY) {
        from_f16(d, (float *)dst, h, op->count);
    } else if (d) {
        d->add_f16(d, (float *)dst, h, op->count);
    } else {
        for (size_t i = 0; i < op->count; i++) ((float *)dst)[i] += dt_f16_to_f32(h[i]);
    }
}
