// dtsim_plan.h — `dtsim plan`: the search's pieces shared by its parts. dtsim_plan.c reads
// the command line, builds every candidate's dtsim flags, answers each with --analytic,
// rejects and ranks; dtsim_plan_out.c confirms the top ones with SimGrid (in parallel
// processes) and writes the table, the CSV and the JSON.
#ifndef DT_SIM_DTSIM_PLAN_H
#define DT_SIM_DTSIM_PLAN_H

#include "dtsim.h"

#define PLAN_MAX_ARGS 64
#define PLAN_MAX_LIST 32
#define PLAN_MAX_POINTS 20000  // a search larger than this is refused (a typo, not a plan)

typedef struct {
    char gpu[16];
    int gpus, gpn, nics, pgb;
    char prec[8], algo[16], fusion[32];
    char topo[16];              // "" : dtsim's (fat tree)
    char frate[24], ckint[24];  // --fail-rate, --ckpt-interval ("": not searched)
    char shard[12];             // --shard: a ZeRO stage ("": not searched, dtsim's 0)
} plan_cand;

typedef struct {
    plan_cand c;
    char flags[512];        // the candidate as dtsim's own flags (rerun it with them)
    char reason[200];       // "" when feasible; else why it was rejected
    double price;           // USD per GPU-hour of its GPU type
    dtsim_result a;         // --analytic
    double time_s, cost;    // time-to-train (with goodput when failures are given), USD
    int meets;              // meets the deadline and the budget
    int confirmed;          // 1: simulated; -1: the simulation failed or was refused
    dtsim_result s;         // the simulation (confirmed)
    double sim_time_s, sim_cost;
} plan_row;

typedef struct {
    // the space
    char model[32], gpus_l[PLAN_MAX_LIST][8], prec_l[4][8];
    char gpu_l[8][16], algo_l[8][16], fusion_l[8][32];
    int gpus_n[PLAN_MAX_LIST], gpn_n[PLAN_MAX_LIST], nics_n[8], pgb_n[PLAN_MAX_LIST];
    int n_gpus, n_gpn, n_nics, n_pgb, n_prec, n_gpu, n_algo, n_fusion;
    char topo_l[4][16], frate_l[PLAN_MAX_LIST][24], ckint_l[PLAN_MAX_LIST][24];
    int n_topo, n_frate, n_ckint;  // 0: not searched (dtsim's, or as given)
    char shard_l[4][12];        // --shard LIST: ZeRO stages to search (sim/zero.h)
    int n_shard;
    // --price TYPE=USD per GPU-hour; --price-node TYPE[:GPN]=USD per node-hour (node_gpn 0:
    // a node of any size; else only nodes of that many GPUs)
    char price_gpu[8][16];
    double price[8];
    int n_price, price_node[8], node_gpn[8];
    double dataset, epochs;     // 0: dtsim's defaults
    double deadline_h, budget;  // 0: none
    // failures and checkpoints, passed to every candidate as given
    char fault_args[16][2][64];
    int n_fault;
    int confirm, top, json, quiet;
    int simulate;           // --simulate: --offer answered by SimGrid (sim/dtsim_offers.c)
    dtsim_jobs_opts par;        // -j, --slurm, --slice, --gather (sim/dtsim_jobs.h)
    char csv[512], plot[512];
    int csv_stdout;
} plan_opts;

// The dtsim command line of candidate c (argv[0] "dtsim"); analytic adds --analytic and
// --no-memory-check (the search answers without SimGrid at any count). Its argc.
int plan_argv(const plan_opts *p, const plan_cand *c, int analytic, char store[][64],
              char **argv);
// Confirms rows[0..k) in parallel processes (-j), or a slice of them, or gathers them
// (sim/dtsim_jobs.h), progress on stderr; 0 or an exit code
int plan_confirm(const plan_opts *p, plan_row *rows, int k);
// The ranked table (rows[0..n) ranked; rejected after them, n_all in all) on f
// The rows in the order they are shown: feasible before rejected, meeting the targets
// first, then by cost (by time under a budget alone), the nearest misses next
void plan_rank(const plan_opts *p, plan_row *rows, int n);
void plan_print(FILE *f, const plan_opts *p, const plan_row *rows, int n, int n_all);
int plan_write_csv(const plan_opts *p, const plan_row *rows, int n, int n_all);
void plan_print_json(const plan_opts *p, const plan_row *rows, int n, int n_all);
// --plot (sim/dtsim_plan_plot.c): the top rows' time and cost; 0, or 1 with a message
int plan_plot(const plan_opts *p, const plan_row *rows, int n);

#endif
