// train_strategy.c — the registry of the trainer's strategies: one entry each
// (train_strategy.h's dt_strategy: its name, flags and hooks), as coll_algos.c is the
// allreduce's. Everything that names a strategy reads this table: dt_shard_parse (dtrain
// --shard), its --help, dt_shard_name (dtrain's reports), dt_trainer_set_shard and the step.
// Adding a strategy is one entry here and its file of hooks.
#include <stdio.h>
#include <string.h>

#include "train_strategy.h"

// A build adds strategies without editing this table: compile this file into the program
// with -DDT_STRATEGY_EXTRA='"file.h"', a header that declares their hooks and defines
// DT_STRATEGY_EXTRA_ENTRIES as more entries like the ones below, each `{"name", flags,
// check, setup, free, begin, on_gradient_ready, progress, finish, update, memory, "help"},`
// (tests/mpi/strategy_blocking.h does). Their numbers follow DT_SHARD_COUNT. The library's
// own copy of this file is then overridden: its functions are weak symbols.
#ifdef DT_STRATEGY_EXTRA
#include DT_STRATEGY_EXTRA
#define DT_REGISTRY
#else
#define DT_REGISTRY __attribute__((weak))
#endif
#ifndef DT_STRATEGY_EXTRA_ENTRIES
#define DT_STRATEGY_EXTRA_ENTRIES
#endif

#define DT_SHARDED DT_STRATEGY_SHARDED
#define DT_EACH_MICRO DT_STRATEGY_EACH_MICRO

// The built-ins, one line each (Rajbhandari et al. 2020 §5: ZeRO's stages), each naming its
// place in train.h's dt_shard_stage, so the order of the lines does not matter.
//   enumerator            name          flags                       check                 setup                     free                     begin                 on_gradient_ready                 progress               finish                     update                     memory                 help
#define DT_STRATEGY_BUILTINS(X)                                                                                                                                                                                                                                                                                                                                                                                                                                                             \
    X(DT_SHARD_NONE,       {"none",       0,                          NULL,                 dt_replicate_setup,       dt_replicate_free,       dt_replicate_begin,   dt_replicate_on_gradient_ready,   dt_replicate_progress, dt_replicate_finish,       dt_replicate_update,       dt_replicate_memory,   "replicate (the default): every rank keeps everything; each fusion bucket allreduced during backward"})                                                                          \
    X(DT_SHARD_OPTIMIZER,  {"optimizer",  DT_SHARDED,                 NULL,                 dt_shard_optimizer_setup, dt_shard_optimizer_free, NULL,                 NULL,                             NULL,                  dt_shard_optimizer_finish, dt_shard_optimizer_update, dt_replicate_memory,   "ZeRO stage 1 (= --shard-optimizer): the gradient reduce-scattered after backward, each rank keeps and steps the optimizer state of its 1/P shard, the parameters allgathered"}) \
    X(DT_SHARD_GRADIENTS,  {"gradients",  DT_SHARDED | DT_EACH_MICRO, dt_shard_units_check, dt_shard_units_setup,     dt_shard_units_free,     dt_shard_units_begin, dt_shard_units_on_gradient_ready, NULL,                  dt_shard_units_finish,     dt_shard_units_update,     dt_shard_units_memory, "ZeRO stage 2: + each bucket reduce-scattered during backward, 1/P of the gradient kept"})                                                                                       \
    X(DT_SHARD_PARAMETERS, {"parameters", DT_SHARDED | DT_EACH_MICRO, dt_shard_units_check, dt_shard_units_setup,     dt_shard_units_free,     dt_shard_units_begin, dt_shard_units_on_gradient_ready, NULL,                  dt_shard_units_finish,     dt_shard_units_update,     dt_shard_units_memory, "ZeRO stage 3: + each layer's parameters gathered before its forward and its backward, 1/P kept"})

#define DT_STRATEGY_BIT(e, ...) | 1u << (e)
_Static_assert((0u DT_STRATEGY_BUILTINS(DT_STRATEGY_BIT)) == (1u << DT_SHARD_COUNT) - 1,
               "train.h's dt_shard_stage and DT_STRATEGY_BUILTINS must name the same strategies");

// Entry i into *out (when out is not NULL and i names an entry); returns the number of
// entries. The table is built in this function's frame, not kept in static storage: nn/
// keeps no storage that is written at run time, not even by the loader (coll_algos.c).
static int table(int i, dt_strategy *out) {
#define DT_STRATEGY_ENTRY(e, ...) [e] = __VA_ARGS__,
    const dt_strategy builtin[] = {DT_STRATEGY_BUILTINS(DT_STRATEGY_ENTRY)};
    // (a build's entries may leave out the help and the NULL hooks at the end)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
    const dt_strategy extra[] = {DT_STRATEGY_EXTRA_ENTRIES{NULL}};  // (NULL: the end)
#pragma GCC diagnostic pop
    _Static_assert(sizeof builtin / sizeof builtin[0] == DT_SHARD_COUNT, "a stage without entry");
    int n = (int)DT_SHARD_COUNT + (int)(sizeof extra / sizeof extra[0]) - 1;
    if (out && i >= 0 && i < n) *out = i < DT_SHARD_COUNT ? builtin[i] : extra[i - DT_SHARD_COUNT];
    return n;
}

DT_REGISTRY int dt_strategy_count(void) { return table(-1, NULL); }

DT_REGISTRY int dt_strategy_get(int i, dt_strategy *out) {
    if (i < 0 || i >= table(-1, NULL)) return -1;
    table(i, out);
    return 0;
}

DT_REGISTRY const char *dt_shard_name(int stage) {
    dt_strategy s;
    return dt_strategy_get(stage, &s) ? NULL : s.name;  // (a string literal: it outlives s)
}

DT_REGISTRY int dt_shard_parse(const char *s, int *stage) {
    for (int i = 0; s && i < dt_strategy_count(); i++)
        if (strcmp(s, dt_shard_name(i)) == 0) return *stage = i, 0;
    return -1;
}

DT_REGISTRY int dt_shard_sharded(int stage) {
    dt_strategy s;
    return !dt_strategy_get(stage, &s) && (s.flags & DT_STRATEGY_SHARDED);
}

// "optimizer, gradients or parameters": every entry but the default
DT_REGISTRY const char *dt_shard_choices(char *buf, size_t n) {
    size_t len = 0;
    buf[0] = 0;
    for (int i = 1, last = dt_strategy_count() - 1; i <= last && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i == 1 ? "" : i < last ? ", " :
                                " or ", dt_shard_name(i));
    return buf;
}

// Each entry on a line of its own, "NAME: help" (the default's first)
DT_REGISTRY const char *dt_shard_help(char *buf, size_t n) {
    size_t len = 0;
    buf[0] = 0;
    dt_strategy s;
    for (int i = 0; i < dt_strategy_count() && len < n; i++) {
        dt_strategy_get(i, &s);
        len += (size_t)snprintf(buf + len, n - len, "%s%s: %s", i ? "\n" : "", s.name,
                                s.help ? s.help : "");
    }
    return buf;
}
