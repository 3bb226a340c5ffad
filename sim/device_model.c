// device_model.c — the `model` device (sim/device_model.h): state, the arena that alloc
// carves untouched address space from, host transfers, sync and the roofline charge every
// primitive goes through, the gemm family and the statistics. No data is ever computed or
// read: a kernel only adds
//     t = max(flops/(peak·eff_gemm·w), bytes/(mem_bw·eff_mem))·s + launch
// (w: a gemm's wave quantization; s: the calibration's factor; the launch, the host's, not
// scaled) to the pending time, which the host hands to cfg.advance whenever it would wait for
// the GPU (docs/formulas.md, "GPU roofline"). Not here: the cost of the other primitives
// (device_model_nn.c), the profiles (gpu_profiles.c).
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "device_model_internal.h"
#include "layer.h"
#include "net.h"

#define ALIGN 256  // bytes: what cudaMalloc guarantees
// Self-reserved arena: 1 TiB of address space (MAP_NORESERVE, never touched, so it costs
// neither RAM nor commit charge), halved on failure down to 1 GiB.
#define ARENA_DEFAULT ((size_t)1 << 40)
#define ARENA_MIN ((size_t)1 << 30)

static dt_model_ctx *ctx_of(const dt_device *d) { return (dt_model_ctx *)d->ctx; }

double dt_model_act_bytes(const dt_device *d) { return ctx_of(d)->act_bytes; }
int dt_model_flash(const dt_device *d) { return ctx_of(d)->cfg.flash; }

// the calibration's factor for a kernel launched through handle d: a profile's factor for
// the current kind, or time_scale; 1 for the allreduce's (unscaled) handle
static double scale_of(const dt_device *d) {
    const dt_model_ctx *c = ctx_of(d);
    if (d == c->unscaled) return 1.0;
    return c->has_kind_scale ? c->kind_scale[c->kind] : c->time_scale;
}

void dt_device_model_set_kind(dt_device *d, int kind) {
    DT_ASSERT(kind >= 0 && kind < DT_MODEL_MAX_KINDS);
    ctx_of(d)->kind = kind;
}

void dt_device_model_set_slowdown(dt_device *d, double factor) {
    DT_ASSERT(isfinite(factor) && factor > 0);
    ctx_of(d)->slowdown = factor;
}

void dt_device_model_set_kind_scales(dt_device *d, const double *factor, int n) {
    dt_model_ctx *c = ctx_of(d);
    DT_ASSERT(n >= 0 && n <= DT_MODEL_MAX_KINDS);
    c->has_kind_scale = factor != NULL;
    for (int k = 0; k < DT_MODEL_MAX_KINDS; k++) {
        double f = factor && k < n ? factor[k] : 1.0;
        DT_ASSERT(isfinite(f) && f > 0);
        c->kind_scale[k] = f;
    }
}

static void charge_at(dt_device *d, double flops_s, double flops, double bytes) {
    dt_model_ctx *c = ctx_of(d);
    double t_math = flops / flops_s, t_mem = bytes / c->mem_bytes_s;
    double work = t_math > t_mem ? t_math : t_mem, launch = c->gpu->launch_s;
    double t;  // the launch is the host's: a calibration's factor scales the work alone
    if (c->has_kind_scale && d != c->unscaled) {  // a profile measured kernels whole
        t = (work + launch) * c->kind_scale[c->kind] * c->slowdown;
    } else {
        t = (work * scale_of(d) + launch) * c->slowdown;
        if (d != c->unscaled) c->stats.host_s += launch * c->slowdown;
    }
    c->pending += t;
    c->stats.seconds += t;
    if (d != c->unscaled) c->stats.kind_seconds[c->kind] += t;
    c->stats.flops += flops;
    c->stats.bytes += bytes;
    c->stats.kernels++;
}

void dt_model_charge_gemm(dt_device *d, double flops, double bytes) {
    charge_at(d, ctx_of(d)->gemm_flops_s, flops, bytes);
}

// Wave quantization (NVIDIA, "Matrix Multiplication Background User's Guide"): a gemm of
// `tiles` output tiles of TILE x TILE, each a reduction of length k_total, runs in waves of one
// tile per SM; a last wave part full costs a whole one. Under one wave the reduction is split
// (split-K, at least SPLIT_K_MIN of it a piece) to fill the SMs. The share of the waves' SM
// time that holds work multiplies the gemm's rate (docs/formulas.md, "GPU roofline").
#define TILE 128.0
#define SPLIT_K_MIN 512.0
static double wave_eff(const dt_model_ctx *c, double tiles, double k_total) {
    double sms = c->gpu->sms;
    if (!(sms > 0) || !(tiles > 0)) return 1.0;
    if (tiles < sms) {
        double split = floor(fmin(k_total / SPLIT_K_MIN, floor(sms / tiles)));
        if (split > 1) tiles *= split;
    }
    return tiles / (ceil(tiles / sms) * sms);
}

static double tiles_of(double m, double n) { return ceil(m / TILE) * ceil(n / TILE); }

void dt_model_charge_gemm_tiled(dt_device *d, double flops, double bytes, double tiles,
                                double k_total) {
    dt_model_ctx *c = ctx_of(d);
    charge_at(d, c->gemm_flops_s * wave_eff(c, tiles, k_total), flops, bytes);
}

void dt_model_charge(dt_device *d, double flops, double bytes) {
    charge_at(d, ctx_of(d)->cuda_flops_s, flops, bytes);
}

void dt_model_flush(dt_device *d) {
    dt_model_ctx *c = ctx_of(d);
    if (c->pending > 0.0 && c->cfg.advance) c->cfg.advance(c->cfg.advance_ctx, c->pending);
    c->pending = 0.0;
}

// ---- memory ----

// 256-byte aligned pieces of the arena (bump pointer; free is a no-op). Nothing is written:
// the arena's pages are untouched mmap'ed zero pages (or the rank program's folded region), so
// "zero-filled" holds without costing RAM. A full arena starts again at its base when
// cfg.reuse_arena is set; otherwise, or when one buffer is larger than the whole arena, a
// message naming the sizes and exit 1.
static void *model_alloc(dt_device *d, size_t bytes) {
    dt_model_ctx *c = ctx_of(d);
    size_t rounded = bytes == 0 ? ALIGN : (bytes + ALIGN - 1) / ALIGN * ALIGN;
    if (rounded >= bytes && rounded <= c->cap && rounded > c->cap - c->used &&
        c->cfg.reuse_arena)
        c->used = 0;  // alias the oldest buffers: nobody reads them
    if (rounded < bytes || rounded > c->cap - c->used) {
        fprintf(stderr,
                "dtlab: model device: arena exhausted allocating %zu bytes at %s:%d: %zu of "
                "%zu bytes in use; give the device a larger arena "
                "(dt_modeldev_config.arena_bytes)\n",
                bytes, __FILE__, __LINE__, c->used, c->cap);
        exit(DT_EXIT_RUNTIME);
    }
    void *p = c->base + c->used;
    c->used += rounded;
    c->stats.arena_used += rounded;
    if (rounded > c->stats.max_alloc) c->stats.max_alloc = rounded;
    return p;
}

static void model_free(dt_device *d, void *p) { (void)d, (void)p; }

// Host transfers cross PCIe (host_bw) and synchronise, as cudaMemcpy does. to_host writes
// zeros into the host buffer: the model device holds no values, and a caller that reads
// them (weights saving, checks) must not see garbage.
// bytes over PCIe at host_bw, plus a launch; then the host waits (flush)
static void charge_host(dt_device *d, size_t bytes) {
    dt_model_ctx *c = ctx_of(d);
    // PCIe: a calibration to images/s leaves it alone, a profile (which measured it) does not
    double t = (double)bytes / c->gpu->host_bw + c->gpu->launch_s;
    if (c->has_kind_scale) t *= c->kind_scale[c->kind];
    c->pending += t;
    c->stats.seconds += t;
    c->stats.host_s += t;
    c->stats.kind_seconds[c->kind] += t;
    c->stats.bytes += (double)bytes;
    c->stats.kernels++;
    dt_model_flush(d);
}

static void model_to_host(dt_device *d, void *dst_host, const void *src, size_t bytes) {
    (void)src;
    if (bytes) memset(dst_host, 0, bytes);
    charge_host(d, bytes);
}

static void model_from_host(dt_device *d, void *dst, const void *src_host, size_t bytes) {
    (void)dst, (void)src_host;
    charge_host(d, bytes);
}

// device to device: read + write
static void model_copy(dt_device *d, void *dst, const void *src, size_t bytes) {
    if (bytes && dst != src) dt_model_charge(d, 0.0, 2.0 * (double)bytes);
}

static void model_sync(dt_device *d) { dt_model_flush(d); }

// A coarsened allreduce's folded latencies (nn/coll): time passes, no kernel runs, so it is
// not counted in stats.seconds (compute).
static void model_delay(dt_device *d, double seconds) {
    if (seconds > 0) ctx_of(d)->pending += seconds;
}

static void model_destroy(dt_device *d) {
    if (!d) return;
    dt_model_ctx *c = ctx_of(d);
    if (c && c->mapped_bytes) munmap(c->base, c->mapped_bytes);
    free(c);
    free(d);
}

// ---- dense linear algebra: 2MNK FLOPs, (MK + KN + MN) elements moved per gemm ----
// An operand with stride 0 (the weights shared by a batch) is read once: it stays in cache,
// as in the one large gemm a GPU convolution runs.

// C(M,N) = alpha*op(A)(M,K)*op(B)(K,N) + beta*C
static void model_gemm(dt_device *d, int ta, int tb, int M, int N, int K, float alpha,
                       const float *A, int lda, const float *B, int ldb, float beta, float *C,
                       int ldc) {
    (void)ta, (void)tb, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta;
    (void)C, (void)ldc;
    if (M <= 0 || N <= 0) return;
    double m = M, n = N, k = K > 0 ? K : 0;
    double elems = m * k + k * n + m * n;
    dt_model_charge_gemm_tiled(d, 2.0 * m * n * k, dt_model_act_bytes(d) * elems, tiles_of(m, n),
                               k);
}

// C_i(M,N) = alpha*op(A_i)*op(B_i) + beta*C_i, i < batch
static void model_gemm_batched(dt_device *d, int ta, int tb, int M, int N, int K, float alpha,
                               const float *A, int lda, size_t sa, const float *B, int ldb,
                               size_t sb, float beta, float *C, int ldc, size_t sc,
                               int batch) {
    (void)ta, (void)tb, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta;
    (void)C, (void)ldc, (void)sc;
    if (batch <= 0 || M <= 0 || N <= 0) return;
    double m = M, n = N, k = K > 0 ? K : 0, b = batch;
    double elems = m * k * (sa ? b : 1.0) + k * n * (sb ? b : 1.0) + m * n * b;
    // a shared operand makes the batch one gemm (a convolution's implicit gemm): its rows or
    // columns b times longer; otherwise b independent gemms
    double tiles = !sa ? tiles_of(m, b * n) : !sb ? tiles_of(b * m, n) : b * tiles_of(m, n);
    dt_model_charge_gemm_tiled(d, 2.0 * m * n * k * b, dt_model_act_bytes(d) * elems, tiles, k);
}

// C(M,N) = alpha * sum_i op(A_i)*op(B_i) + beta*C
static void model_gemm_batched_sum(dt_device *d, int ta, int tb, int M, int N, int K,
                                   float alpha, const float *A, int lda, size_t sa,
                                   const float *B, int ldb, size_t sb, float beta, float *C,
                                   int ldc, int batch) {
    (void)ta, (void)tb, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb, (void)beta;
    (void)C, (void)ldc;
    if (M <= 0 || N <= 0) return;
    double m = M, n = N, k = K > 0 ? K : 0, b = batch > 0 ? batch : 0;
    double elems = m * k * (sa ? b : 1.0) + k * n * (sb ? b : 1.0) + m * n;
    dt_model_charge_gemm_tiled(d, 2.0 * m * n * k * b, dt_model_act_bytes(d) * elems,
                               tiles_of(m, n), b * k);
}

// ---- whose work: the layer kinds ----

_Static_assert(DT_N_KINDS <= DT_MODEL_MAX_KINDS, "more layer kinds than the device keeps");

static void on_layer(void *ctx, const dt_net *net, int layer, int phase) {
    dt_device *d = ctx;
    int kind = layer < 0 ? DT_KIND_REST : 2 * (int)net->layers[layer]->type + phase;
    dt_device_model_set_kind(d, kind);
}

void dt_device_model_follow_layers(dt_device *d, struct dt_net *net) {
    net->on_layer = on_layer;
    net->on_layer_ctx = d;
    dt_device_model_set_kind(d, DT_KIND_REST);
}

// ---- the unscaled handle ----

static void unscaled_destroy(dt_device *d) {
    if (!d) return;
    dt_model_ctx *c = ctx_of(d);
    if (c->unscaled == d) c->unscaled = NULL;
    free(d);
}

dt_device *dt_device_model_unscaled(dt_device *d) {
    dt_model_ctx *c = ctx_of(d);
    DT_ASSERT(c->unscaled == NULL);  // one per device
    dt_device *u = mallocCheck(sizeof *u);
    *u = *d;  // the same primitives on the same state; only charge_at tells them apart
    u->destroy = unscaled_destroy;
    c->unscaled = u;
    return u;
}

// ---- statistics ----

dt_model_stats dt_device_model_stats(const dt_device *d) { return ctx_of(d)->stats; }

void dt_device_model_reset_stats(dt_device *d) {
    dt_model_ctx *c = ctx_of(d);
    size_t used = c->stats.arena_used, max_alloc = c->stats.max_alloc;
    memset(&c->stats, 0, sizeof c->stats);
    c->stats.arena_used = used;  // pending time stays pending: cfg.advance still gets it
    c->stats.max_alloc = max_alloc;
}

// ---- the device ----

// The arena: the caller's, aligned up to 256 bytes, or a fresh MAP_NORESERVE reservation.
static int setup_arena(dt_model_ctx *c, const dt_modeldev_config *cfg, dt_error *err) {
    if (cfg->arena) {
        uintptr_t b = (uintptr_t)cfg->arena, a = (b + ALIGN - 1) / ALIGN * ALIGN;
        if (cfg->arena_bytes < a - b + ALIGN)
            return dt_fail(err, DT_EXIT_USAGE,
                           "model device: the arena given (%zu bytes at %p) is too small: "
                           "expected at least %zu bytes",
                           cfg->arena_bytes, cfg->arena, (size_t)(a - b + ALIGN));
        c->base = (char *)a;
        c->cap = (cfg->arena_bytes - (a - b)) / ALIGN * ALIGN;
        return 0;
    }
    size_t want = cfg->arena_bytes ? cfg->arena_bytes : ARENA_DEFAULT;
    for (size_t n = want; n >= ARENA_MIN || n == want; n /= 2) {
        void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            c->base = p;
            c->cap = c->mapped_bytes = n;
            return 0;
        }
        if (cfg->arena_bytes) break;  // the caller asked for this size: no smaller
    }
    return dt_fail(err, DT_EXIT_RUNTIME,
                   "model device: cannot reserve %zu bytes of address space (mmap "
                   "MAP_NORESERVE) for the arena",
                   want);
}

dt_device *dt_device_model_create(const dt_modeldev_config *cfg, dt_error *err) {
    if (!cfg || !cfg->gpu) {
        dt_fail(err, DT_EXIT_USAGE, "model device: no GPU profile given (valid: %s)",
                dt_gpu_names());
        return NULL;
    }
    if (cfg->precision != DT_PREC_FP32 && cfg->precision != DT_PREC_TF32 &&
        cfg->precision != DT_PREC_FP16) {
        dt_fail(err, DT_EXIT_USAGE, "model device: unknown precision %d (fp32, tf32, fp16)",
                (int)cfg->precision);
        return NULL;
    }
    const dt_gpu_profile *g = cfg->gpu;
    double pk = dt_gpu_peak(g, cfg->precision), ek = dt_gpu_eff_gemm(g, cfg->precision);
    if (!(pk > 0 && ek > 0 && g->peak_fp32 > 0 && g->eff_gemm > 0 && g->mem_bw > 0 &&
          g->eff_mem > 0 && g->host_bw > 0 && g->launch_s >= 0)) {
        dt_fail(err, DT_EXIT_USAGE,
                "model device: GPU profile '%s' has a non-positive peak, bandwidth or "
                "efficiency",
                g->name);
        return NULL;
    }
    if (!isfinite(cfg->time_scale) || cfg->time_scale < 0) {
        dt_fail(err, DT_EXIT_USAGE, "model device: time_scale %g: expected a finite factor > 0 "
                "(0 = none)", cfg->time_scale);
        return NULL;
    }
    dt_model_ctx *c = callocCheck(1, sizeof *c);
    c->cfg = *cfg;
    c->time_scale = cfg->time_scale > 0 ? cfg->time_scale : 1.0;
    c->slowdown = 1.0;
    c->gpu = g;
    c->act_bytes = cfg->precision == DT_PREC_FP16 ? 2.0 : 4.0;
    c->gemm_flops_s = pk * ek;
    c->cuda_flops_s = g->peak_fp32 * g->eff_gemm;
    c->mem_bytes_s = g->mem_bw * g->eff_mem;
    if (setup_arena(c, cfg, err) != 0) {
        free(c);
        return NULL;
    }
    dt_device *d = callocCheck(1, sizeof *d);
    d->name = "model";
    d->ctx = c;
    d->threads = 1;
    d->im2col_chunk_bytes = 0;  // no preference: the conv layer's own limit

    d->alloc = model_alloc;
    d->free = model_free;
    d->to_host = model_to_host;
    d->from_host = model_from_host;
    d->copy = model_copy;
    d->sync = model_sync;
    d->delay = model_delay;
    d->destroy = model_destroy;

    d->gemm = model_gemm;
    d->gemm_batched = model_gemm_batched;
    d->gemm_batched_sum = model_gemm_batched_sum;
    dt_model_install_nn(d);
    dt_model_install_gpt(d);
    return d;
}
