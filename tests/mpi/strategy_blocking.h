// strategy_blocking.h — a throwaway strategy registered the way any new one is: one entry
// (tests/mpi/CMakeLists.txt compiles nn/train_strategy.c with
// -DDT_STRATEGY_EXTRA='"strategy_blocking.h"' into a dtrain of its own, strategy_plus.c). It
// proves that an entry and its file are all it takes: `--shard blocking` then trains, listed
// in --help, with the step's accumulation, loss scaling and clipping
// (mpi.strategy_one_entry_*).
#include "train_strategy.h"

void test_blocking_setup(dt_trainer *t);
void test_blocking_free(dt_trainer *t);
double test_blocking_finish(dt_trainer *t);
void test_blocking_update(dt_trainer *t, float lr);

#define DT_STRATEGY_EXTRA_ENTRIES                                                         \
    {"blocking", 0, NULL, test_blocking_setup, test_blocking_free, NULL, NULL, NULL,     \
     test_blocking_finish, test_blocking_update, dt_replicate_memory,                    \
     "(a test) one blocking allreduce of the whole gradient after backward"},
