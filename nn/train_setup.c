// train_setup.c — the trainer's set-up (nn/train.h): dt_trainer_init (the ranks' agreement
// on the network, rank 0's weights broadcast: Horovod's broadcast_parameters), the strategy
// (dt_trainer_set_shard: the checks every rank agrees on, then the registry entry's own
// set-up), accumulation, and the memory report. Not here: the step (train.c), the
// allreduce and its buckets (train_comm.c), the strategies themselves.
#include <string.h>

#include "kernels.h"
#include "train_pipe.h"
#include "train_strategy.h"

static void bcast_floats(float *buf, size_t n, int root, MPI_Comm comm) {
    while (n > 0) {  // (in pieces: train.h DT_TRAIN_MSG_MAX)
        int c = n > DT_TRAIN_MSG_MAX ? (int)DT_TRAIN_MSG_MAX : (int)n;
        MPI_Bcast(buf, c, MPI_FLOAT, root, comm);
        buf += c;
        n -= (size_t)c;
    }
}

// The strategy `stage` in place of the trainer's, if it had one (after every rank agreed)
static void use_strategy(dt_trainer *t, int stage, int had) {
    dt_strategy s;
    if (had && !dt_strategy_get(t->shard, &s)) s.free(t);
    DT_ASSERT(!dt_strategy_get(stage, &s));
    dt_norm_plan_free(t->norms);  // (its units change)
    t->norms = NULL;
    t->shard = stage;
    s.setup(t);
}

// MPI reads the cpu device's memory in place, and the model device's too (sim/: host
// memory, folded with SMPI_SHARED_MALLOC, so 1024 simulated ranks do not need 1024 copies).
// The cuda device's memory (device_memory) goes through host memory: here for the one
// broadcast, in the allreduce library (coll/coll.h: chunked, pinned) for every step.
int dt_trainer_init(dt_trainer *t, dt_net *net, dt_optim *opt, MPI_Comm comm, dt_error *err) {
    DT_ASSERT(t);
    memset(t, 0, sizeof *t);
    // Decide locally, then agree: a check that fails on one rank must fail on all, or the
    // others would wait forever in the broadcast below. The replicas must also agree on the
    // gradient length and the batch, or the allreduces would mix unrelated numbers.
    int bad = 0;
    if (!net || !net->finalized)
        bad = dt_fail(err, DT_EXIT_USAGE, "trainer: the network is %s (build it with "
                      "dt_model_create or dt_net_finalize first)", net ? "not finalized" : "NULL");
    else if (!opt || opt->n != net->n_trainable || opt->dev != net->dev)
        bad = dt_fail(err, DT_EXIT_USAGE, "trainer: the optimizer is %s", opt ?
                      "not the one made for this network (dt_optim_create(net, ...))" : "NULL");
    int pr, rr;
    MPI_Comm_size(comm, &pr);
    MPI_Comm_rank(comm, &rr);
    if (!bad && opt->sharded && (opt->shard_lo != dt_shard_lo(net->n_trainable, pr, rr) ||
                                 opt->shard_hi != dt_shard_lo(net->n_trainable, pr, rr + 1)))
        bad = dt_fail(err, DT_EXIT_USAGE, "trainer: rank %d's optimizer holds the shard [%zu, "
                      "%zu), not its own [%zu, %zu) (dt_shard_lo)", rr, opt->shard_lo,
                      opt->shard_hi, dt_shard_lo(net->n_trainable, pr, rr),
                      dt_shard_lo(net->n_trainable, pr, rr + 1));
    long long n = bad ? 0 : (long long)net->n_trainable, b = bad ? 0 : net->B;
    long long sh = bad ? 0 : opt->sharded;
    long long agree[7] = {bad ? 1 : 0, n, -n, b, -b, sh, -sh};  // max of -x is -(min of x)
    MPI_Allreduce(MPI_IN_PLACE, agree, 7, MPI_LONG_LONG, MPI_MAX, comm);
    if (agree[0]) {
        if (!bad) dt_fail(err, DT_EXIT_USAGE, "trainer: another rank rejected its network "
                          "or optimizer (see its message)");
        return -1;
    }
    if (agree[1] != -agree[2] || agree[3] != -agree[4])
        return dt_fail(err, DT_EXIT_USAGE, "trainer: the ranks' networks differ: %lld..%lld "
                       "trainable parameters, batch %lld..%lld (every rank must build the same "
                       "model with the same per-rank batch)", -agree[2], agree[1], -agree[4],
                       agree[3]);
    if (agree[5] != -agree[6])
        return dt_fail(err, DT_EXIT_USAGE, "trainer: some ranks shard the optimizer state and "
                       "some do not (every rank must make its optimizer alike)");
    t->net = net;
    t->opt = opt;
    t->accumulate = 1;
    t->comm = comm;
    MPI_Comm_rank(comm, &t->rank);
    MPI_Comm_size(comm, &t->size);

    // Each rank draws its own dropout masks (its samples differ from the other ranks').
    net->dropout_seed = dt_mix64(net->dropout_seed ^ dt_mix64((uint64_t)t->rank + 1));

    // Broadcast rank 0's parameters (and running statistics): identical replicas.
    dt_device *d = net->dev;
    if (!d->device_memory) {
        bcast_floats(net->params, net->n_total, 0, comm);
    } else {
        float *host = mallocCheck(net->n_total * sizeof(float));
        d->to_host(d, host, net->params, net->n_total * sizeof(float));
        bcast_floats(host, net->n_total, 0, comm);
        d->from_host(d, net->params, host, net->n_total * sizeof(float));
        free(host);
    }
    // Until told otherwise: replicate, or with a sharded optimizer its stage (ZeRO 1); the
    // MPI library's allreduce over one bucket, after backward.
    use_strategy(t, opt->sharded ? DT_SHARD_OPTIMIZER : DT_SHARD_NONE, 0);
    dt_coll_opts co = dt_coll_opts_default();
    co.algo = DT_ALGO_MPI;
    return dt_trainer_set_comm(t, &co, NULL, 0, err);
}

void dt_trainer_free(dt_trainer *t) {
    if (!t) return;
    dt_strategy s;
    if (t->net && !dt_strategy_get(t->shard, &s)) s.free(t);
    free(t->events);
    free(t->buckets);
    free(t->bucket_start);
    free(t->bucket_end);
    dt_norm_plan_free(t->norms);
    if (t->coll) dt_coll_free(t->coll);
    memset(t, 0, sizeof *t);
}

// This rank's reason to refuse the strategy `stage`, or 0: what every sharded strategy
// needs, then the entry's own check.
static int check(const dt_trainer *t, int stage, dt_error *err) {
    const dt_optim *opt = t->opt;
    dt_strategy s;
    if (dt_strategy_get(stage, &s))
        return dt_fail(err, DT_EXIT_USAGE, "trainer: ZeRO stage %d: expected 0..%d", stage,
                       dt_strategy_count() - 1);
    if (t->shard > DT_SHARD_OPTIMIZER)
        return dt_fail(err, DT_EXIT_USAGE, "trainer: sharded already (stage %d)", t->shard);
    if (!(s.flags & DT_STRATEGY_SHARDED))
        return opt->sharded ? dt_fail(err, DT_EXIT_USAGE, "trainer: the optimizer is sharded "
                                      "(dt_optim_create_shard) but the stage is %s", s.name)
                            : s.check ? s.check(t, stage, err) : 0;
    if (t->size < 2)
        return dt_fail(err, DT_EXIT_USAGE, "--shard %s needs 2 or more ranks: with one rank "
                       "there is no other to hold the rest (drop it, or run under mpirun -np "
                       "N)", s.name);
    if (!opt->sharded)
        return dt_fail(err, DT_EXIT_USAGE, "trainer: --shard %s needs the optimizer made by "
                       "dt_optim_create_shard for this rank's shard", s.name);
    return s.check ? s.check(t, stage, err) : 0;
}

int dt_trainer_set_shard(dt_trainer *t, int stage, dt_error *err) {
    DT_ASSERT(t && t->net && t->opt);
    int bad = check(t, stage, err) ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, t->comm);
    if (bad) {
        if (!err->code) dt_fail(err, DT_EXIT_USAGE, "trainer: another rank refused --shard "
                                "(see its message)");
        return -1;
    }
    if (stage == t->shard) {  // (init chose it)
        dt_norm_plan_free(t->norms);
        t->norms = NULL;
        return 0;
    }
    use_strategy(t, stage, 1);
    return 0;
}

int dt_trainer_set_accumulate(dt_trainer *t, int K, dt_error *err) {
    DT_ASSERT(t);
    if (K < 1)
        return dt_fail(err, DT_EXIT_USAGE, "trainer: accumulate %d micro-batches per step: "
                       "expected 1 or more", K);
    t->accumulate = K;
    return 0;
}

void dt_trainer_memory_report(const dt_trainer *t, dt_trainer_memory *m) {
    DT_ASSERT(t && t->net && m);
    size_t scratch = 0;
    memset(m, 0, sizeof *m);
    m->activations = dt_net_activation_bytes(t->net, &scratch) + scratch;
    m->optim = t->opt ? t->opt->state_bytes : 0;
    m->pipe = t->pipe ? t->pipe->buffer_bytes : 0;
    m->pipe_acts = t->pipe ? t->pipe->acts_bytes : 0;
    dt_strategy s;
    DT_ASSERT(!dt_strategy_get(t->shard, &s));
    s.memory(t, m);
}
