// dtsim_opts_values.h — the parsers of dtsim's option values (sim/dtsim_opts_values.c), as
// sim/dtsim_opts.c's table names them; each a dt_opt_parse_fn (nn/opt_table.h).
#ifndef DT_SIM_DTSIM_OPTS_VALUES_H
#define DT_SIM_DTSIM_OPTS_VALUES_H

#include "opt_table.h"

// The most GPUs dtsim simulates: SimGrid's ranks are threads of one process, and the
// memory of a run grows as the square of its ranks (bench/DTSIM-SPEED.md)
#define MAX_GPUS (1 << 20)

int dtsim_parse_gpu_count(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
int dtsim_parse_gpu_list(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
int dtsim_parse_algo_list(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
int dtsim_parse_intra_bw(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
int dtsim_parse_net_bw(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
int dtsim_parse_oversub(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
int dtsim_parse_micros(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
int dtsim_parse_optimizer(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
int dtsim_parse_precision(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
int dtsim_parse_attention(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err);
int dtsim_parse_shard_units(const dt_opt *d, const char *what,
    const char *s, void *v, dt_error *err);
int dtsim_parse_zero_stage(const dt_opt *d, const char *what,
    const char *s, void *v, dt_error *err);

// --pp-schedule (into the dtsim_opts itself) and --recompute
int dtsim_parse_pp_schedule(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err);
int dtsim_parse_recompute(const dt_opt *d, const char *what, const char *s, void *v,
        dt_error *err);

#endif
