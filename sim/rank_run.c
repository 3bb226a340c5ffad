// rank_run.c — the run description's file (rank_run.h): a header, then dt_rank_run's bytes.
#include "rank_run.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

// "dtsimrun", then the version and the size of dt_rank_run that follow
#define MAGIC "dtsimrun"
typedef struct {
    char magic[8];
    uint32_t version, size;
} header;

int dt_rank_run_write(const char *path, const dt_rank_run *r, dt_error *err) {
    header h = {.version = DT_RANK_RUN_VERSION, .size = (uint32_t)sizeof *r};
    memcpy(h.magic, MAGIC, sizeof h.magic);
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(&h, sizeof h, 1, f) == 1 && fwrite(r, sizeof *r, 1, f) == 1;
    if (f && fclose(f)) ok = 0;
    return ok ? 0 : dt_fail(err, DT_EXIT_RUNTIME, "the rank program's run description %s: %s",
                            path, strerror(errno));
}

// Whether the char[n] at s ends within itself.
static int terminated(const char *s, size_t n) { return memchr(s, 0, n) != NULL; }

int dt_rank_run_read(const char *path, dt_rank_run *r, dt_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return dt_fail(err, DT_EXIT_USAGE, "run description %s: %s (dtsim writes it; the rank "
                       "program takes its path alone)", path, strerror(errno));
    header h;
    char why[200] = "";
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, MAGIC, sizeof h.magic))
        snprintf(why, sizeof why, "not a dtsim run description");
    else if (h.version != DT_RANK_RUN_VERSION || h.size != sizeof *r)
        snprintf(why, sizeof why, "version %u of %u bytes, where this rank program reads "
                 "version %d of %zu: dtsim and dtsim_rank.so are of different builds",
                 (unsigned)h.version, (unsigned)h.size, DT_RANK_RUN_VERSION, sizeof *r);
    else if (fread(r, sizeof *r, 1, f) != 1 || fgetc(f) != EOF)
        snprintf(why, sizeof why, "truncated or too long");
    else if (!terminated(r->model, sizeof r->model) || !terminated(r->gpu, sizeof r->gpu) ||
             !terminated(r->trace, sizeof r->trace) || !terminated(r->result, sizeof r->result) ||
             r->n_kind_scales < 0 || r->n_kind_scales > DT_MODEL_MAX_KINDS ||
             r->straggler.n_fixed < 0 || r->straggler.n_fixed > DT_STRAGGLER_MAX_FIXED ||
             r->prec < DT_PREC_FP32 || r->prec > DT_PREC_FP16)
        snprintf(why, sizeof why, "damaged: a name, a count or a precision out of bounds");
    fclose(f);
    return why[0] ? dt_fail(err, DT_EXIT_USAGE, "run description %s: %s", path, why) : 0;
}
