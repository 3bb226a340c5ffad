// dtsim_run.c — one simulated run: the single-GPU baseline on the model device (natively,
// no SimGrid: one GPU has nobody to talk to), the platform and hostfile in a temporary
// directory, SimGrid's smpirun on the rank program (sim/rank.c) with the options that make it
// fast and exact (no privatization, no benchmarked host code, no time injected into
// MPI_Test, the plain latency + size/bandwidth network model), and the rank program's result.
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "device_model.h"
#include "dtsim.h"
#include "net.h"
#include "optim.h"

#ifndef DT_SMPIRUN
#define DT_SMPIRUN "smpirun"
#endif
#ifndef DT_RANK_SO
#define DT_RANK_SO "dtsim_rank.so"
#endif

static double wall_now(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec * 1e-6;
}

static void model_shape(const char *model, dt_model_config *cfg) {
    if (dt_model_is_cifar(model)) {  // CIFAR ResNets: 32x32, 10 classes
        cfg->in_h = cfg->in_w = 32;
        cfg->num_classes = 10;
    }
}

// One training step of one GPU (forward, loss, backward, optimizer) on the model device:
// its simulated seconds, and the device memory the rank program's arena must hold per rank.
static int single_gpu(const dtsim_opts *o, double *seconds, size_t *arena, size_t *params) {
    dt_error err = {0};
    dt_modeldev_config mc = {dt_gpu_find(o->cluster.gpu), o->prec, NULL, NULL, NULL, 0};
    dt_device *dev = dt_device_model_create(&mc, &err);
    if (!dev) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        return 2;
    }
    dt_model_config cfg = dt_model_config_default();
    cfg.batch = o->per_gpu_batch;
    model_shape(o->model, &cfg);
    dt_net *net = dt_model_create(o->model, dev, &cfg, &err);
    dt_optim_config oc = dt_optim_config_default(o->lars ? DT_OPT_LARS : DT_OPT_SGD);
    dt_optim *opt = net ? dt_optim_create(net, &oc, &err) : NULL;
    if (!opt) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        if (net) dt_net_free(net);
        dev->destroy(dev);
        return 2;
    }
    float *x = callocCheck(1, sizeof(float));  // the model device never reads it
    int32_t *y = callocCheck((size_t)cfg.batch, sizeof(int32_t));
    (void)x;
    dt_device_model_reset_stats(dev);
    dt_net_forward(net, 1);
    dt_net_loss(net);
    dt_net_backward(net, 1.0f, NULL, NULL);
    dt_optim_step(opt, net, 0.1f);
    dev->sync(dev);
    dt_model_stats ms = dt_device_model_stats(dev);
    *seconds = ms.seconds;
    // the arena: every buffer, plus the allreduce's scratch (the buckets in flight: at most
    // the gradients and a quarter more)
    *arena = ms.arena_used + net->n_trainable * sizeof(float) * 5 / 4 + ((size_t)16 << 20);
    *params = net->n_trainable;
    free(x), free(y);
    dt_optim_free(opt);
    dt_net_free(net);
    dev->destroy(dev);
    return 0;
}

// Automatic coarsening: ring phases of more than 16 steps are cut to about 16 rounds. It
// keeps the simulated time (tests/coll: coarsened schedules match the cost model) and cuts
// SimGrid's work, which grows with the number of messages times the flows in flight.
static int auto_coarsen(int gpus) { return gpus > 16 ? (gpus + 15) / 16 : 1; }

static double field(const char *line, const char *key) {
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(line, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

// A file installed next to the dtsim executable, else the build's copy.
static char *beside_dtsim(const char *name, const char *fallback) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 64);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            strcpy(slash + 1, name);
            if (access(self, R_OK) == 0) return strdup(self);
        }
    }
    return strdup(fallback);
}

static char *rank_program_path(void) {
    const char *env = getenv("DTSIM_RANK_SO");
    if (env && *env) return strdup(env);
    return beside_dtsim("dtsim_rank.so", DT_RANK_SO);
}

// SimGrid runs with sim/cputime_shim.c preloaded (its comment says why); a missing shim
// only costs speed. DTSIM_CPUTIME_SHIM=0 turns it off, a path replaces it.
static void preload_cputime_shim(void) {
    const char *env = getenv("DTSIM_CPUTIME_SHIM");
    if (env && !strcmp(env, "0")) return;
    char *shim = env && *env ? strdup(env) : beside_dtsim("dtsim_cputime.so", DT_CPUTIME_SO);
    if (access(shim, R_OK) == 0) {
        const char *old = getenv("LD_PRELOAD");
        char *v = mallocCheck(strlen(shim) + (old ? strlen(old) : 0) + 2);
        sprintf(v, "%s%s%s", shim, old && *old ? ":" : "", old && *old ? old : "");
        setenv("LD_PRELOAD", v, 1);
        free(v);
    } else if (env && *env) {
        fprintf(stderr, "dtsim: DTSIM_CPUTIME_SHIM=%s: cannot read it; running without the "
                "shim (slower, same results)\n", env);
    }
    free(shim);
}

static void push(char **argv, int *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void push(char **argv, int *n, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    argv[(*n)++] = strdup(buf);
}

int dtsim_run_one(const dtsim_opts *o, dtsim_result *r) {
    memset(r, 0, sizeof *r);
    double t_wall = wall_now();
    size_t arena, params;
    int rc = single_gpu(o, &r->single_iter_s, &arena, &params);
    if (rc) return rc;
    char dir[] = "/tmp/dtsim_XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "dtsim: cannot create a temporary directory: %s\n", strerror(errno));
        return 1;
    }
    char xml[600], hosts[600], out_path[600];
    snprintf(xml, sizeof xml, "%s/platform.xml", dir);
    snprintf(hosts, sizeof hosts, "%s/hostfile", dir);
    snprintf(out_path, sizeof out_path, "%s/rank.out", dir);
    dt_error err = {0};
    dt_cluster c = o->cluster;
    const char *platform = xml;
    if (o->platform_file[0]) {  // the user's platform: SMPI places ranks on its hosts in turn
        platform = o->platform_file;
    } else if (dt_cluster_write(&c, xml, hosts, &err)) {
        fprintf(stderr, "dtsim: %s\n", err.msg);
        return err.code ? err.code : 1;
    }
    dt_coll_opts co = o->coll;
    if (!o->platform_file[0])
        dt_cluster_cost(&c, &co.cost.alpha, &co.cost.beta, &co.cost.alpha_intra, &co.cost.beta_intra);
    if (co.group == 0) co.group = o->platform_file[0] ? 1 : c.gpus_per_node;
    // a node's GPUs share its NICs (dt_cost_params.share): what rhd's cost must know
    co.cost.share = o->platform_file[0] ? 1 : c.gpus_per_node;
    int coarsen = o->coarsen >= 0 ? o->coarsen : auto_coarsen(o->gpus);

    char *argv[96];
    int n = 0;
    char *rank_so = rank_program_path();
    char fusion[64];
    dt_fusion_format(&o->fusion, fusion, sizeof fusion);
    push(argv, &n, "%s", getenv("DTSIM_SMPIRUN") ? getenv("DTSIM_SMPIRUN") : DT_SMPIRUN);
    push(argv, &n, "-np");
    push(argv, &n, "%d", o->gpus);
    push(argv, &n, "-platform");
    push(argv, &n, "%s", platform);
    if (!o->platform_file[0]) {
        push(argv, &n, "-hostfile");
        push(argv, &n, "%s", hosts);
    }
    push(argv, &n, "-no-privatize");
    push(argv, &n, "--cfg=smpi/simulate-computation:no");
    push(argv, &n, "--cfg=smpi/test:0");
    // MPI_Wtime is a clock read, not a 10 ns sleep (SMPI's default smpi/wtime:1e-8 makes
    // every call a simcall and a new event for the solver: the trainer reads it per layer)
    push(argv, &n, "--cfg=smpi/wtime:0");
    push(argv, &n, "--cfg=network/model:CM02");
    push(argv, &n, "--cfg=network/crosstraffic:0");
    // no detached ("eager") sends: SimGrid shares a link fairly between a rank's concurrent
    // sends, so a detached send below 64 KB slowed the previous round's message (a binomial
    // broadcast of 8 KB took one message longer than on a NIC that sends in order)
    push(argv, &n, "--cfg=smpi/send-is-detached-thresh:0");
    push(argv, &n, "--cfg=smpi/shared-malloc-blocksize:%d", 1 << 24);
    push(argv, &n, "--cfg=smpi/tmpdir:%s", dir);
    push(argv, &n, "--log=root.thres:critical");
    if (co.algo == DT_ALGO_MPI)  // SMPI's own MPI_Allreduce; DTSIM_SMPI_ALLREDUCE picks which
        push(argv, &n, "--cfg=smpi/allreduce:%s",
             getenv("DTSIM_SMPI_ALLREDUCE") ? getenv("DTSIM_SMPI_ALLREDUCE") : "lr");
    push(argv, &n, "%s", rank_so);
    push(argv, &n, "--model=%s", o->model);
    push(argv, &n, "--gpu=%s", c.gpu);
    push(argv, &n, "--precision=%s", dt_precision_name(o->prec));
    push(argv, &n, "--batch=%d", o->per_gpu_batch);
    push(argv, &n, "--iters=%d", o->iters);
    push(argv, &n, "--warmup=%d", o->warmup);
    push(argv, &n, "--algo=%s", dt_algo_name(co.algo));
    push(argv, &n, "--fusion=%s", fusion);
    push(argv, &n, "--group=%d", co.group);
    push(argv, &n, "--inner=%s", dt_algo_name(co.inner));
    push(argv, &n, "--coarsen=%d", coarsen);
    push(argv, &n, "--alpha=%.9g", co.cost.alpha);
    push(argv, &n, "--beta=%.9g", co.cost.beta);
    push(argv, &n, "--alpha-intra=%.9g", co.cost.alpha_intra);
    push(argv, &n, "--beta-intra=%.9g", co.cost.beta_intra);
    push(argv, &n, "--share=%.9g", co.cost.share);
    push(argv, &n, "--gamma=%.9g", 1.0 / (dt_gpu_find(c.gpu)->mem_bw * dt_gpu_find(c.gpu)->eff_mem / 3));
    push(argv, &n, "--arena=%zu", arena);
    if (co.tx) push(argv, &n, "--tx=%d", co.tx), push(argv, &n, "--ty=%d", co.ty);
    if (co.hier_rs) push(argv, &n, "--hier-rs");
    if (co.wire_f16) push(argv, &n, "--fp16-grads");
    if (o->lars) push(argv, &n, "--lars");
    if (!o->overlap) push(argv, &n, "--no-overlap");
    if (!o->quiet && isatty(STDERR_FILENO) && !o->cpu) push(argv, &n, "--progress");
    if (o->cpu) {
        push(argv, &n, "--device=cpu");
        push(argv, &n, "--seed=%llu", o->seed);
        push(argv, &n, "--lr=%.9g", o->lr);
        push(argv, &n, "--image-size=%d", o->image_size);
        push(argv, &n, "--classes=%d", o->classes);
        push(argv, &n, "--synthetic-examples=%ld", o->synthetic_n);
    }
    if (o->trace[0]) {
        push(argv, &n, "--trace=%s", o->trace);
        push(argv, &n, "--trace-ranks=%d", o->trace_ranks);
    }
    argv[n] = NULL;
    if (getenv("DTSIM_VERBOSE")) {  // the exact SimGrid command, to rerun it by hand
        for (int i = 0; i < n; i++) fprintf(stderr, "%s%s", i ? " " : "dtsim: running ", argv[i]);
        fprintf(stderr, "\n");
    }

    fflush(stdout);  // or the child would write our buffered lines again
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        preload_cputime_shim();
        FILE *f = freopen(out_path, "w", stdout);
        (void)f;
        execvp(argv[0], argv);
        fprintf(stderr, "dtsim: cannot run %s: %s (install simgrid, or set DTSIM_SMPIRUN)\n",
                argv[0], strerror(errno));
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    for (int i = 0; i < n; i++) free(argv[i]);
    free(rank_so);
    FILE *f = fopen(out_path, "r");
    char line[4096];
    int found = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (o->cpu && (!strncmp(line, "step ", 5) || !strncmp(line, "epoch ", 6)))
            fputs(line, stdout);  // --device cpu: the real losses
        if (!strncmp(line, "DTSIM_RESULT ", 13)) {
            found = 1;
            break;
        }
    }
    if (f) fclose(f);
    if (!o->keep) {
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd)) {}
    } else if (!o->quiet) {
        fprintf(stderr, "dtsim: platform, hostfile and rank program output kept in %s\n", dir);
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (!found) {
        fprintf(stderr, "dtsim: the simulation of %d GPUs failed (SimGrid exit %d)\n", o->gpus, code);
        return code == 2 ? 2 : 1;
    }
    r->gpus = o->gpus;
    r->per_gpu_batch = o->per_gpu_batch;
    r->global_batch = o->per_gpu_batch * o->gpus;
    r->iter_s = field(line, "iter_s");
    r->compute_s = field(line, "compute_s");
    r->comm_s = field(line, "comm_s");
    r->exposed_s = field(line, "exposed_s");
    r->buckets = (int)field(line, "buckets");
    r->model_comm_s = field(line, "model_comm_s");
    const char *a = strstr(line, "\"algo\": \"");
    snprintf(r->algo, sizeof r->algo, "%s", a ? a + 9 : "?");
    char *q = strchr(r->algo, '"');
    if (q) *q = 0;
    r->images_s = r->global_batch / r->iter_s;
    r->efficiency = r->images_s / (o->gpus * o->per_gpu_batch / r->single_iter_s);
    r->epoch_s = o->dataset / r->images_s;
    r->train_s = r->epoch_s * o->epochs;
    r->wall_s = wall_now() - t_wall;
    return 0;
}
