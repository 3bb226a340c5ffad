// strategy_plus.c — the registry of the trainer's strategies (nn/train_strategy.c) with one
// more entry, strategy_blocking.h's, for the dtrain that tests/mpi builds beside the real
// one (mpi.strategy_one_entry_*). This copy overrides the library's weak one.
#define DT_STRATEGY_EXTRA "strategy_blocking.h"
#include "train_strategy.c"
