// dtsim_calib.c — which published figure calibrates a run's GPU (sim/gpu_calib.h): the
// user's own (--gpu-img-s), a preset's paper figure (fitted: bench/HELDOUT.md scores the
// presets both ways), a row of the calibration table (--calib ROW, or by default the row of
// the run's GPU, model family and precision), or none (the roofline alone, --calib none or
// where the table has no row). And `dtsim calibrations`, the table with its provenance.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtsim.h"
#include "pipe/pipe_sched.h"
#include "zero.h"

// The default row where the table has none of the run's GPU: a row of another GPU of its
// generation (P40 <- P100, H200 or H100 PCIe <- H100 SXM, A100 40GB <- 80GB), the same
// rules of likeness; and on a GPU without tensor cores (Pascal), whose half precision runs on
// the CUDA cores at their fp32 efficiency (docs/hardware.md), an fp32 row for a half run.
// Its factor is that GPU's measured fraction of its roofline, taken as the run's GPU's: a
// sibling measured, not the run's own (the status says which).
static const dt_gpu_calib *sibling_row(const dtsim_opts *o) {
    const char *gen = dtsim_generation(o->cluster.gpu);
    int n, pascal = !strcmp(gen, "pascal");
    const dt_gpu_calib *rows = dt_gpu_calib_rows(&n);
    dt_precision precs[2] = {o->prec, DT_PREC_FP32};
    for (int p = 0; p < 1 + (pascal && o->prec == DT_PREC_FP16); p++) {
        if (p) {  // the run's own GPU first
            const dt_gpu_calib *c = dt_gpu_calib_find(o->cluster.gpu, o->model, o->seq_len,
                                                      precs[p], o->bf16);
            if (c) return c;
        }
        for (int i = 0; i < n; i++) {
            if (!strcmp(rows[i].gpu, o->cluster.gpu) || strcmp(dtsim_generation(rows[i].gpu), gen))
                continue;
            const dt_gpu_calib *c = dt_gpu_calib_find(rows[i].gpu, o->model, o->seq_len,
                                                      precs[p], o->bf16);
            if (c) return c;
        }
    }
    return NULL;
}

int dtsim_calib_choose(dtsim_opts *o, int user_figure) {
    const char *a = o->calib_arg;
    o->calib_row = NULL;
    if (a[0] && (o->has_profile || o->cpu || user_figure)) {
        fprintf(stderr, "dtsim: --calib %s: %s already calibrates this run\n", a,
                o->has_profile ? "--profile" : o->cpu ? "--device cpu (real numbers)"
                                                      : "--gpu-img-s");
        return 2;
    }
    if (o->has_profile || o->cpu || user_figure) return 0;
    if (!a[0] && o->gpu_img_s > 0) {  // a preset's paper figure
        o->calib_fitted = 1;
        return 0;
    }
    o->gpu_img_s = 0, o->calib_batch = 0;  // the roofline unless a row is found
    if (!strcmp(a, "none")) return 0;
    const dt_gpu_calib *row;
    if (!a[0] || !strcmp(a, "table")) {
        row = dt_gpu_calib_find(o->cluster.gpu, o->model, o->seq_len, o->prec, o->bf16);
        if (!row) row = sibling_row(o);
    } else {
        row = dt_gpu_calib_by_id(a);
        if (!row) {
            fprintf(stderr, "dtsim: option --calib %s: not a row of the calibration table "
                            "(`dtsim calibrations` lists them), table or none\n", a);
            return 2;
        }
        if (strcmp(row->gpu, o->cluster.gpu)) {
            fprintf(stderr, "dtsim: option --calib %s: that row measured the %s, and this run "
                            "simulates the %s\n", a, row->gpu, o->cluster.gpu);
            return 2;
        }
        if (dt_sim_is_gpt(row->model) != dt_sim_is_gpt(o->model)) {
            fprintf(stderr, "dtsim: option --calib %s: that row measured %s, a %s, and this "
                            "run trains %s\n", a, row->model,
                    dt_sim_is_gpt(o->model) ? "CNN" : "transformer", o->model);
            return 2;
        }
    }
    if (!row) return 0;
    o->calib_row = row;
    o->gpu_img_s = row->per_gpu;
    o->calib_batch = row->batch;
    o->calib_prec = dt_gpu_calib_prec(row);
    return 0;
}

// A node's figure (row->gpus > 1) includes that node's own collectives (DDP's allreduce,
// FSDP's gathers and reduce-scatters over NVLink or NVSwitch). The factor of one GPU's step
// (sim/dtsim_run.c, calibrate) charges them to the kernels, and the run then pays them a
// second time in its own collectives. Here the factor is refined until the analytic model of
// that node (the row's network, batch, accumulation, precision and ZeRO stage; the run's
// GPU, link inside a node, allreduce and overlap) takes the measured time, its collectives
// included: s <- s * want / t(s), t increasing in s, until |t / want - 1| < 1e-9 (12 steps
// at most: a fixed count, the same bits on every CPU).
int dtsim_calib_node(const dtsim_opts *o, dtsim_result *r) {
    const dt_gpu_calib *row = o->calib_row;
    // (a sibling GPU's node is not the run's: its factor keeps that node's collectives, 1-3 %)
    if (!row || row->gpus < 2 || o->has_profile || o->cpu || o->platform_file[0] ||
        strcmp(row->gpu, o->cluster.gpu))
        return 0;
    dtsim_opts *m = mallocCheck(sizeof *m);
    *m = *o;
    snprintf(m->model, sizeof m->model, "%s", row->model);
    m->seq_len = row->seq_len, m->vocab = row->vocab, m->model_side = m->model_classes = 0;
    m->layers = m->hidden = m->heads = 0;  // the row's own shape and attention
    m->flash = dtsim_row_flash(o);
    // FSDP gathers and reduce-scatters every micro-batch: its node is modelled at one
    m->accumulate = row->accumulate > 1 && !row->shard ? row->accumulate : 1;
    m->per_gpu_batch = row->batch * m->accumulate, m->global_batch = 0;
    m->prec = dt_gpu_calib_prec(row), m->bf16 = !strcmp(row->precision, "bf16");
    m->shard = row->shard, m->shard_blocks = row->shard >= 3 || o->shard_blocks;  // FSDP's
    m->gpus = row->gpus, m->cluster.nodes = 1, m->cluster.gpus_per_node = row->gpus;
    m->analytic = 1, m->calib_row = NULL, m->gpu_img_s = 0, m->calib_batch = 0;
    m->tp = m->pp = m->micro_batch = m->pp_chunks = 1, m->pp_kind = DT_PIPE_1F1B;  // data
    m->recompute = 0;                                                              // parallel
    m->quiet = 1, m->json = 0, m->csv[0] = m->plot[0] = m->trace[0] = 0;
    double want = m->per_gpu_batch / row->per_gpu, s = r->time_scale;
    int rc = 0;
    for (int k = 0; k < 12 && !rc; k++) {
        dtsim_result q;
        if ((rc = dtsim_prepare(m, &q))) break;
        q.time_scale = s, q.single_iter_s = q.roofline_iter_s * s;
        if ((rc = dtsim_analytic(m, &q))) break;
        if (fabs(q.iter_s / want - 1) < 1e-9) break;
        s *= want / q.iter_s;
    }
    free(m);
    if (rc) return rc;
    r->time_scale = s, r->calib_node = row->gpus;
    return 0;
}

const char *dtsim_calib_status(const dtsim_opts *o, char *buf, size_t n) {
    if (o->has_profile) snprintf(buf, n, "measured profile");
    else if (o->calib_row && strcmp(o->calib_row->gpu, o->cluster.gpu))
        snprintf(buf, n, "calibrated: %s (a %s's: no %s row)", o->calib_row->id,
                 o->calib_row->gpu, o->cluster.gpu);
    else if (o->calib_row) snprintf(buf, n, "calibrated: %s", o->calib_row->id);
    else if (o->calib_fitted) snprintf(buf, n, "fitted: the preset's own paper figure");
    else if (o->gpu_img_s > 0) snprintf(buf, n, "calibrated: --gpu-img-s");
    else snprintf(buf, n, "uncalibrated (roofline)");
    return buf;
}

// `dtsim calibrations [--csv]`
int dtsim_calibrations_main(int argc, char **argv) {
    int csv = argc == 2 && !strcmp(argv[1], "--csv");
    if (argc > 2 || (argc == 2 && !csv)) {
        if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
            printf("usage: dtsim calibrations [--csv]\n"
                   "The calibration table: published single-GPU and single-node training "
                   "throughput,\none row per measurement with its source (sim/gpu_calib_rows.h). "
                   "A run takes the\nfirst row of its GPU, model family (CNN or transformer) and "
                   "precision; --calib ROW\nchooses another, --calib none the roofline alone.\n");
            return 0;
        }
        fprintf(stderr, "dtsim calibrations: takes only --csv (see dtsim calibrations --help)\n");
        return 2;
    }
    int n;
    const dt_gpu_calib *r = dt_gpu_calib_rows(&n);
    if (csv)
        printf("id,gpu,model,seq_len,vocab,precision,batch_per_gpu,accumulate,gpus,shard,"
               "per_gpu,framework,source,date,note\n");
    else
        printf("| id | GPU | model | precision | batch/GPU | GPUs | per GPU /s | framework | "
               "source | date |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++) {
        char model[64];
        if (r[i].seq_len || r[i].vocab)
            snprintf(model, sizeof model, "%s (seq %d, vocab %d)", r[i].model, r[i].seq_len,
                     r[i].vocab);
        else snprintf(model, sizeof model, "%s", r[i].model);
        if (csv)
            printf("%s,%s,%s,%d,%d,%s,%d,%d,%d,%d,%.17g,\"%s\",\"%s\",%s,\"%s\"\n", r[i].id,
                   r[i].gpu, r[i].model, r[i].seq_len, r[i].vocab, r[i].precision, r[i].batch,
                   r[i].accumulate, r[i].gpus, r[i].shard, r[i].per_gpu, r[i].framework,
                   r[i].source, r[i].date, r[i].note);
        else
            printf("| %s | %s | %s | %s | %d | %d | %g | %s | %s%s%s | %s |\n", r[i].id,
                   r[i].gpu, model, r[i].precision, r[i].batch, r[i].gpus, r[i].per_gpu,
                   r[i].framework, r[i].source, r[i].note[0] ? "; " : "", r[i].note,
                   r[i].date);
    }
    return 0;
}
