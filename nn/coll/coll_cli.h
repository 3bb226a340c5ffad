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

#define DT_COLL_CLI_COUNT 8  // the rows

// What the options set: a program copies its defaults in, parses, and copies the result out.
// The rows live here too, written by dt_coll_cli_table: nn/ keeps no static table of
// pointers (no writable or relocated data in libdtnn, docs/architecture.md).
typedef struct {
    dt_coll_opts coll;      // --algo --inner --group --hier-rs --torus --fp16-grads
    dt_fusion_opts fusion;  // --fusion
    int overlap;            // --no-overlap clears it
    dt_opt rows[DT_COLL_CLI_COUNT];
} dt_coll_cli;

// The table over cli, its rows written into cli->rows (given: room for DT_COLL_CLI_COUNT
// flags, or NULL)
dt_opt_table dt_coll_cli_table(dt_coll_cli *cli, unsigned char *given);

#endif
