// dtsim_jobs.h — independent simulations (the points of `dtsim sweep`, the confirmations of
// `dtsim plan`) run in parallel processes on this machine's cores (-j N), or in slices over
// a cluster with its own scheduler: dtsim writes a Slurm job array (or srun tasks) script
// whose task K of N simulates the runs i with i % N == K and saves each result in a
// directory, and the same command with --gather DIR reads them back into the one table the
// single-machine run prints (the same bytes). No scheduler of dtsim's own.
#ifndef DT_SIM_DTSIM_JOBS_H
#define DT_SIM_DTSIM_JOBS_H

#include <stdio.h>

#include "opt_table.h"

typedef struct {
    int jobs;              // -j N: simulations at a time on this machine (1)
    int slice_k, slice_n;  // --slice K/N: only the runs i with i % N == K (slice_n 0: all)
    char results[512];     // --results DIR: where a slice saves each run's result
    char gather[512];      // --gather DIR: the results read back instead of simulated
    char slurm[512];       // --slurm DIR: write the job script there, simulate nothing
    int slurm_tasks;       // --slurm-tasks N: the array's tasks (0: one per run)
    int submit;            // --submit: hand the script to sbatch
} dtsim_jobs_opts;

// The rows of their options (-j, --slurm, --slice, ...) into j (given as in dt_opt_table,
// may be NULL): dtsim's and `dtsim plan`'s
#define DTSIM_JOBS_ROWS 8
dt_opt_table dtsim_jobs_table(dtsim_jobs_opts *j, unsigned char *given);
// Their combinations, once the command line is read: 0, or 2 with a message
int dtsim_jobs_check(const dtsim_jobs_opts *j, const char *prog);

// n independent runs. prepare (parent, before the run): 0 to run i, 1 to skip it (already
// answered, or refused with its message: done() gets rc 2), or an exit code. simulate
// (a child process with -j > 1, else in this one): run i into *r, 0 or an exit code.
// started (parent, may be NULL): a progress line. done (parent, in index order, once per
// run of this slice): rc 0 with r the result, else the run's exit code; nonzero stops.
// key(i): what run i is, stored with its result and checked when gathered.
typedef struct {
    void *ctx;
    const char *what;  // "sweep", "plan": the result files' prefix
    int (*prepare)(void *ctx, int i);
    int (*simulate)(void *ctx, int i, void *r);
    void (*started)(void *ctx, int i);
    int (*done)(void *ctx, int i, int rc, const void *r);
    void (*key)(void *ctx, int i, char *buf, size_t n);
} dtsim_job_set;

// Runs (or with --gather reads) the n runs, run i's result of size bytes at res + i * stride:
// 0, or
// the first failed run's exit code, or done()'s. With --slice only its share runs, and each
// result is saved under --results DIR.
int dtsim_jobs_run(const dtsim_jobs_opts *j, int n, const dtsim_job_set *set, void *res,
                   size_t size, size_t stride);

// --slurm DIR: the job-array script DIR/dtsim.sbatch and DIR/dtsim-srun.sh of the command
// argv[0..argc) (its subcommand sub: "sweep" or "plan") for n runs, the gather command on
// stdout, and with --submit sbatch run on it; 0 or an exit code with a message
int dtsim_slurm_write(const dtsim_jobs_opts *j, const char *sub, int argc, char **argv, int n);

#endif
