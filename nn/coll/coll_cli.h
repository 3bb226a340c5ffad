// coll_cli.h — the allreduce options as users type them, described once (nn/opt_table.h):
// --algo, --inner, --group, --hier-rs, --torus, --fp16-grads, --fusion, --no-overlap. dtsim
// and dtrain take all of them, dtcoll-bench those it measures, and the preloaded library
// (real/dtcoll_mpi.c) reads the ones with an environment variable (DTCOLL_ALGO, ...), so each
// has one name, one range, one message and one help text everywhere.
#ifndef DT_COLL_CLI_H
#define DT_COLL_CLI_H

#include "../opt_table.h"
#include "coll.h"
#include "fusion.h"

// What the options set: a program copies its defaults in, parses, and copies the result out
typedef struct {
    dt_coll_opts coll;      // --algo --inner --group --hier-rs --torus --fp16-grads
    dt_fusion_opts fusion;  // --fusion
    int overlap;            // --no-overlap clears it
} dt_coll_cli;

extern const dt_opt dt_coll_cli_opts[];
extern const int dt_coll_cli_count;

// The table over cli (given: room for dt_coll_cli_count flags, or NULL)
dt_opt_table dt_coll_cli_table(dt_coll_cli *cli, unsigned char *given);

#endif
