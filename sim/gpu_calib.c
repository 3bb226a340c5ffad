// gpu_calib.c — the calibration table (sim/gpu_calib.h): published, measured single-GPU and
// single-node training throughput, one row per measurement with where it was published.
// Rows are data: add one by copying its publication's figure, never by fitting to a
// multi-node run that bench/HELDOUT.md scores (that run would no longer be held out).
//
// How dtsim uses a row (docs/formulas.md, "The roofline and its calibration"): it builds the
// row's network at the row's batch and precision on the modelled GPU, and scales every
// modelled kernel by the factor that makes that step take batch / per_gpu seconds (the
// host upload unscaled); the run, whatever its model and batch, keeps that factor. A node's
// figure (gpus 8) is taken per GPU: its allreduce inside NVLink/NVSwitch is charged to the
// kernels (1-3 %, the difference between the 1- and 8-GPU rows where both are published).
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "gpu_calib.h"
#include "zero.h"

#include "gpu_calib_rows.h"

const dt_gpu_calib *dt_gpu_calib_rows(int *n) {
    *n = (int)(sizeof rows / sizeof rows[0]);
    return rows;
}

const dt_gpu_calib *dt_gpu_calib_by_id(const char *id) {
    for (size_t i = 0; id && i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].id, id)) return &rows[i];
    return NULL;
}

dt_precision dt_gpu_calib_prec(const dt_gpu_calib *c) {
    return !strcmp(c->precision, "fp32") ? DT_PREC_FP32
         : !strcmp(c->precision, "tf32") ? DT_PREC_TF32 : DT_PREC_FP16;
}

// A row's likeness to the run: the same half precision (fp16 or bf16) counts most, then the
// same network, then the same sequence length, then a node's measurement over one GPU's (a
// multi-GPU run is more like a node: its framework's distributed step, a node's data pipeline
// and collectives, which the node's calibration models and takes out of the factor); the
// first row of the highest wins.
static int likeness(const dt_gpu_calib *c, const char *model, int seq_len, int bf16) {
    int half = dt_gpu_calib_prec(c) != DT_PREC_FP16 || !strcmp(c->precision, bf16 ? "bf16"
                                                                                 : "fp16");
    return 8 * half + 4 * (model && !strcmp(c->model, model)) + 2 * (c->seq_len == seq_len) +
           (c->gpus > 1);
}

const dt_gpu_calib *dt_gpu_calib_find(const char *gpu, const char *model, int seq_len,
                                      dt_precision prec, int bf16) {
    const dt_gpu_calib *best = NULL;
    int transformer = model && dt_sim_is_gpt(model), most = -1;
    for (size_t i = 0; gpu && i < sizeof rows / sizeof rows[0]; i++) {
        const dt_gpu_calib *c = &rows[i];
        if (strcasecmp(c->gpu, gpu) || dt_sim_is_gpt(c->model) != transformer ||
            dt_gpu_calib_prec(c) != prec)
            continue;
        int l = likeness(c, model, seq_len, bf16);
        if (l > most) best = c, most = l;
    }
    return best;
}
