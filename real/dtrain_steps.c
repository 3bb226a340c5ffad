// dtrain_steps.c — the curve per optimizer step, as nanoGPT and llm.c users read it: every
// step's loss (--log-steps FILE.csv and --json's train_loss_steps), the held-out loss every
// --eval-every-steps N steps, in nats and in bits per token (the tokens are bytes: bits per
// byte, the figure character-level language models report).
// Not here: the epoch lines and --log (dtrain_loop.c), the evaluation itself (dtrain_eval.c,
// dtrain_text.c).
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtrain.h"

int dtrain_steps_open(dtrain_run *r) {
    const dtrain_opts *o = r->o;
    if (!o->log_steps[0] || r->rank != 0) return dtrain_agree(0, &r->err, r->rank);
    int bad = 0, exists = access(o->log_steps, F_OK) == 0 && o->resume;
    r->steps_csv = fopen(o->log_steps, exists ? "a" : "w");
    if (!r->steps_csv) {
        dt_fail(&r->err, DT_EXIT_USAGE, "--log-steps %.400s: cannot write the file: %s "
                "(expected a writable path in an existing directory)", o->log_steps,
                strerror(errno));
        bad = DT_EXIT_USAGE;
    } else if (!exists && dtrain_log_row(r->steps_csv, r->text
                                         ? "step,epoch,lr,train_loss,val_loss,val_top1,"
                                           "val_bits_per_byte,seconds\n"
                                         : "step,epoch,lr,train_loss,test_loss,test_top1,"
                                           "seconds\n")) {
        dt_fail(&r->err, DT_EXIT_RUNTIME, "--log-steps %.400s: write failed: %s", o->log_steps,
                strerror(errno));
        bad = DT_EXIT_RUNTIME;
    }
    return dtrain_agree(bad, &r->err, r->rank);
}

int dtrain_steps_after(dtrain_run *r, float lr, float loss, double seconds) {
    const dtrain_opts *o = r->o;
    if (r->rank == 0 && o->json) {  // the curve for --json
        if (r->n_step_loss == r->cap_step_loss) {
            int64_t cap = r->cap_step_loss ? 2 * r->cap_step_loss : 1024;
            float *g = realloc(r->step_loss, (size_t)cap * sizeof *g);
            if (g) r->step_loss = g, r->cap_step_loss = cap;
        }
        if (r->n_step_loss < r->cap_step_loss) r->step_loss[r->n_step_loss++] = loss;
    }
    double vloss = NAN, vtop1 = NAN;
    if (o->eval_every_steps && r->test && r->st.step % o->eval_every_steps == 0) {
        dt_trainer_gather_params(&r->tr);  // ZeRO stage 3: the whole model, for the forward
        vtop1 = r->text ? dtrain_evaluate_text(dtrain_whole_net(r), r->test, MPI_COMM_WORLD,
                                               &vloss, &r->err)
                        : dtrain_evaluate(r->net, r->test, MPI_COMM_WORLD, &vloss, &r->err);
        int rc = dtrain_agree(vtop1 < 0 ? 1 : 0, &r->err, r->rank);
        if (rc) return rc;
        if (r->rank == 0 && r->text)
            printf("step %7lld  train loss %.4f  val loss %.4f (%.3f bits per byte)  val "
                   "next-token top-1 %5.2f %%\n", (long long)r->st.step, loss, vloss,
                   DTRAIN_BITS(vloss, r->bytes_per_token), 100 * vtop1);
        else if (r->rank == 0)
            printf("step %7lld  train loss %.4f  test loss %.4f  test top-1 %6.2f %%\n",
                   (long long)r->st.step, loss, vloss, 100 * vtop1);
        fflush(stdout);
    }
    int bad = 0;
    if (r->steps_csv) {
        char row[256], val[96];  // empty cells where this step was not evaluated
        snprintf(val, sizeof val, "%s", r->text ? ",," : ",");
        if (!isnan(vloss) && r->text)
            snprintf(val, sizeof val, "%.6f,%.6f,%.6f", vloss, vtop1,
                     DTRAIN_BITS(vloss, r->bytes_per_token));
        else if (!isnan(vloss))
            snprintf(val, sizeof val, "%.6f,%.6f", vloss, vtop1);
        snprintf(row, sizeof row, "%lld,%lld,%.6g,%.6f,%s,%.3f\n", (long long)r->st.step,
                 (long long)r->st.epoch + 1, lr, loss, val, seconds);  // 1-based
        if (dtrain_log_row(r->steps_csv, row)) {
            dt_fail(&r->err, DT_EXIT_RUNTIME, "--log-steps %.400s: write failed: %s (the file "
                    "keeps its complete rows)", o->log_steps, strerror(errno));
            bad = DT_EXIT_RUNTIME;
        }
    }
    return o->log_steps[0] ? dtrain_agree(bad, &r->err, r->rank) : 0;
}

void dtrain_steps_json(const dtrain_run *r, FILE *f) {
    fprintf(f, ", \"train_loss_steps\": [");
    for (int64_t i = 0; i < r->n_step_loss; i++)
        fprintf(f, "%s%.6g", i ? ", " : "", (double)r->step_loss[i]);
    fprintf(f, "]");
}

void dtrain_steps_close(dtrain_run *r) {
    if (r->steps_csv) fclose(r->steps_csv);
    free(r->step_loss);
    r->steps_csv = NULL, r->step_loss = NULL;
}
