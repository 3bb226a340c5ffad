// opt_table.h — command-line options described once, as data: a table of each option's name,
// type, range, place in the program's options struct and help text, from which one parser
// reads argv (and, for options that have one, an environment variable), one formatter writes
// `--help`, and one function words every refusal ("option --group: 'x' is not a positive
// group size").
// The tables: the allreduce options shared by dtsim, dtrain, dtcoll-bench and the preloaded
// library (nn/coll/coll_cli.c), and each program's own (sim/dtsim_opts.c,
// real/dtrain_opts.c, bench/dtcoll_bench.c). How to add an option: docs/options.md.
#ifndef DT_OPT_TABLE_H
#define DT_OPT_TABLE_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

#include "dt.h"

typedef enum {
    DT_OPT_SECTION,  // not an option: `help` is a heading line of --help
    DT_OPT_SWITCH,   // int set to 1 by --name (no value); from the environment: 0 or 1
    DT_OPT_CLEAR,    // int set to 0 by --name (no value): --no-overlap
    DT_OPT_INT,      // int in [lo, hi]
    DT_OPT_I64,      // int64_t in [lo, hi]
    DT_OPT_U64,      // uint64_t in [lo, hi]
    DT_OPT_REAL,     // double in [lo, hi], finite
    DT_OPT_FLOAT,    // float in [lo, hi], finite
    DT_OPT_STRING,   // char[size], copied
    DT_OPT_TEXT,     // const char *: the value as typed (argv outlives the options)
    DT_OPT_CHOICE,   // an int-sized enum: the position of the value in `choices`
    DT_OPT_CUSTOM,   // `parse` reads it
} dt_opt_type;

typedef struct dt_opt dt_opt;
struct dt_opt {
    const char *name;     // --name (NULL for a section); a name of one letter is the short
                          // option -j alone, as getopt reads it ("-j 4", "-j4")
    const char *arg;      // the value's name in --help ("N", "NAME"); NULL: takes no value
    dt_opt_type type;
    size_t offset, size;  // of the value in the struct the table fills (DT_OPT_FIELD)
    double lo, hi;        // a number's range
    const char *want;     // what a value must be, for messages ("a positive group size");
                          // a choice's is its choices, "sgd or lars", when NULL
    const char *choices;  // DT_OPT_CHOICE: "sgd|lars" (the first is 0)
    // DT_OPT_CUSTOM: read s into value (the field at offset); `what` names the option in
    // messages ("--torus" or "DTCOLL_..."). 0, or -1 with err (DT_EXIT_USAGE).
    int (*parse)(const dt_opt *d, const char *what, const char *s, void *value, dt_error *err);
    const char *help;     // --help's text; "\n" starts a continuation line; with help_arg,
                          // its one "%s" is that function's text (the registry's names)
    const char *(*help_arg)(char *buf, size_t n);
    const char *env;      // the environment variable that sets it too (preload), or NULL
    const void *data;     // DT_OPT_CUSTOM: the row's own constants for `parse` (a list's
                          // length and range), or NULL
};

// A row's offset and size: member of struct type T, in a designated initializer:
//   {.name = "group", .arg = "N", .type = DT_OPT_INT, DT_OPT_AT(T, coll.group), .lo = 1, ...}
#define DT_OPT_AT(T, member) .offset = offsetof(T, member), .size = sizeof(((T *)0)->member)

// One table and the struct its values go into. `given`, when not NULL, has room for n flags:
// the parser sets given[i] when option i was on the command line (a preset's defaults yield
// to what the user typed), to its place among the options read (1, 2, ..., at most 255:
// the order the user typed them). `typed`, when not NULL, has room for n: the value of
// option i as typed (its last one). `only`, when not NULL: the comma-separated names used of
// it; then the table's sections are not printed (another program's headings).
typedef struct {
    const dt_opt *opts;
    int n;
    void *base;
    unsigned char *given;
    const char **typed;
    const char *only;
} dt_opt_table;

// The one number parser of the command lines: the whole of s, in [lo, hi]. 0, or -1.
int dt_parse_int(const char *s, long long lo, long long hi, long long *out);
int dt_parse_real(const char *s, double lo, double hi, double *out);

// The one refusal: "option --NAME: 'S' is not WANT" (what = "--NAME" or "-j"), or "VAR: 'S' is not
// WANT" for an environment variable. Returns -1 with DT_EXIT_USAGE.
int dt_opt_bad(dt_error *err, const char *what, const char *s, const char *want);

// Read s as the value of d into base's struct; `what` names it in messages. 0, or -1.
int dt_opt_set(const dt_opt *d, const char *what, const char *s, void *base, dt_error *err);

// getopt_long over the nt tables from argv[1]. Returns 0; 1 for --help (nothing printed); 2
// with the message on stderr as "PROG: ... (see PROG --help)", printed only when `quiet`
// is 0 (MPI ranks but the first). An argument that is not an option is refused.
int dt_opts_parse(int argc, char **argv, const dt_opt_table *t, int nt, const char *prog,
                  int quiet);

// The tables' environment variables, each one read like its option. 0, or -1 with err.
int dt_opts_env(const dt_opt_table *t, dt_error *err);

// --help's lines of table t: "  --name ARG" (or "  -j ARG"), then the help from column 25 in lines of at
// most 100 columns (broken at spaces, and where the text says "\n"); a section's heading as
// it is; a row without help (testing, an old name) not at all.
void dt_opts_usage(FILE *f, const dt_opt_table *t);

// The option of t named name (without "--"): its index, or -1
int dt_opt_find(const dt_opt_table *t, const char *name);
// Whether the option named name was on the command line (t->given)
int dt_opt_given(const dt_opt_table *t, const char *name);

#endif
