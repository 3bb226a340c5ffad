// test_opt_table.c — the option tables (nn/opt_table.h) and the allreduce options every
// program shares (nn/coll/coll_cli.c). The references: numbers written by the test and read
// back, strtoll's own range; for the preloaded library's environment variables, the same
// value typed as the option (DTCOLL_GROUP=v against --group v) must give the same field and
// the same refusal; --help's layout measured column by column.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll_cli.h"
#include "opt_table.h"
#include "testutil.h"

static void test_numbers_read_back_in_range(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int i = 0; i < 1000; i++) {
        long long lo = tu_int(&r, -1000000, 1000000), hi = lo + tu_int(&r, 0, 1000000), v;
        long long x = lo + tu_int(&r, 0, (int)(hi - lo));
        char s[64];
        snprintf(s, sizeof s, "%lld", x);
        assert_int_equal(dt_parse_int(s, lo, hi, &v), 0);
        assert_true(v == x);
        snprintf(s, sizeof s, "%lld", lo - 1);
        assert_int_equal(dt_parse_int(s, lo, hi, &v), -1);
        snprintf(s, sizeof s, "%lld", hi + 1);
        assert_int_equal(dt_parse_int(s, lo, hi, &v), -1);
        snprintf(s, sizeof s, "%lldx", x);
        assert_int_equal(dt_parse_int(s, lo, hi, &v), -1);
        double d = tu_uniform(&r, -1e6, 1e6), back;
        snprintf(s, sizeof s, "%.17g", d);
        assert_int_equal(dt_parse_real(s, -1e6, 1e6, &back), 0);
        assert_true(back == d);
        assert_int_equal(dt_parse_real(s, d + 1, 2e6, &back), -1);
    }
    long long v;
    double d;
    const char *bad_int[] = {"", " ", " 3", "\t3", "1.5", "0x10", "99999999999999999999", "1e3",
                             "--1"};
    for (size_t i = 0; i < sizeof bad_int / sizeof *bad_int; i++)
        if (!dt_parse_int(bad_int[i], -(1LL << 62), 1LL << 62, &v))
            fail_msg("'%s' read", bad_int[i]);
    const char *bad_real[] = {"", "nan", "inf", "-inf", "1e999", "2x", "1,5", " 3", "0x10", "0x1p4"};
    for (size_t i = 0; i < sizeof bad_real / sizeof *bad_real; i++)
        if (!dt_parse_real(bad_real[i], -1e300, 1e300, &d)) fail_msg("'%s' read", bad_real[i]);
}

// The environment variables of the preloaded library (real/dtcoll_mpi.c and its docs) and
// the options they are
static const struct { const char *env, *option; } preload_env[] = {
    {"DTCOLL_ALGO", "algo"}, {"DTCOLL_INNER", "inner"}, {"DTCOLL_GROUP", "group"},
    {"DTCOLL_FP16", "fp16-grads"}};

static dt_coll_cli fresh(void) {
    dt_coll_cli c;
    memset(&c, 0, sizeof c);
    c.coll = dt_coll_opts_default();
    dt_coll_cli_table(&c, NULL);  // its rows written, as every parse writes them
    return c;
}

// The refusal without its subject ("option --group: " or "DTCOLL_GROUP: ")
static const char *after_subject(const char *msg) {
    const char *p = strstr(msg, ": ");
    return p ? p + 2 : msg;
}

static void test_environment_reads_like_the_option(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    dt_coll_cli c = fresh();
    dt_opt_table t = dt_coll_cli_table(&c, NULL);
    int with_env = 0;
    for (int i = 0; i < t.n; i++) with_env += t.opts[i].env != NULL;
    assert_int_equal(with_env, (int)(sizeof preload_env / sizeof *preload_env));
    char algo[32], group[32], big[32], negative[32];
    snprintf(algo, sizeof algo, "%s", dt_algo_name((dt_algo)tu_int(&r, 0, DT_ALGO_COUNT - 1)));
    snprintf(group, sizeof group, "%d", tu_int(&r, 1, 1 << 20));
    snprintf(big, sizeof big, "%d", (1 << 20) + tu_int(&r, 1, 1000));
    snprintf(negative, sizeof negative, "-%d", tu_int(&r, 0, 1000));
    const char *values[] = {algo, "bogus", "ring", "rhd", "dbtree", group, big, negative, "3x",
                            "0", "1", "2", "", "x"};
    for (size_t e = 0; e < sizeof preload_env / sizeof *preload_env; e++) {
        int i = dt_opt_find(&t, preload_env[e].option);
        assert_true(i >= 0);
        const dt_opt *d = &t.opts[i];
        assert_string_equal(d->env, preload_env[e].env);
        for (size_t k = 0; k < sizeof values / sizeof *values; k++) {
            const char *v = values[k];
            if (!*v) continue;  // an empty variable is an unset one
            dt_coll_cli by_opt = fresh(), by_env = fresh();
            dt_error eo = {0}, ee = {0};
            char what[64];
            snprintf(what, sizeof what, "--%s", d->name);
            // a switch typed as the option takes no value: "1" is the option given, "0" not
            int ro = !d->arg ? (strcmp(v, "1") && strcmp(v, "0") ? -2 : 0)
                             : dt_opt_set(d, what, v, &by_opt, &eo);
            if (!d->arg && !strcmp(v, "1")) dt_opt_set(d, what, NULL, &by_opt, &eo);
            setenv(d->env, v, 1);
            dt_opt_table te = dt_coll_cli_table(&by_env, NULL);
            int re = dt_opts_env(&te, &ee);
            unsetenv(d->env);
            if (ro == -2) {  // not a value of a switch: the variable says so
                assert_int_equal(re, -1);
                assert_int_equal(ee.code, DT_EXIT_USAGE);
                assert_non_null(strstr(ee.msg, "is not 0 or 1"));
                continue;
            }
            if (ro != re) fail_msg("%s='%s' gave %d, %s %s gave %d", d->env, v, re, what, v, ro);
            if (memcmp(&by_opt, &by_env, sizeof by_opt))
                fail_msg("%s='%s' and %s %s set different values", d->env, v, what, v);
            if (ro) {
                assert_int_equal(ee.code, DT_EXIT_USAGE);
                assert_string_equal(after_subject(ee.msg), after_subject(eo.msg));
                assert_true(!strncmp(ee.msg, d->env, strlen(d->env)));
                char subject[80];
                snprintf(subject, sizeof subject, "option %s: ", what);
                assert_true(!strncmp(eo.msg, subject, strlen(subject)));
            }
        }
    }
}

// One refusal for every kind of row: the option, the value, what was expected
static void test_one_refusal_format(void **state) {
    (void)state;
    typedef struct { int n; int choice; double x; char s[8]; } T;
    const dt_opt rows[] = {
        {.name = "num", .arg = "N", .type = DT_OPT_INT, DT_OPT_AT(T, n), .lo = 1, .hi = 9,
         .want = "1..9", .help = "a count"},
        {.name = "pick", .arg = "P", .type = DT_OPT_CHOICE, DT_OPT_AT(T, choice),
         .choices = "red|green|blue", .help = "a colour"},
        {.name = "frac", .arg = "X", .type = DT_OPT_REAL, DT_OPT_AT(T, x), .lo = 0, .hi = 1,
         .want = "in [0, 1]", .help = "a fraction\nof one"},
        {.name = "str", .arg = "S", .type = DT_OPT_STRING, DT_OPT_AT(T, s), .help = "short"},
        {.name = "hidden", .type = DT_OPT_SWITCH, DT_OPT_AT(T, n)},
    };
    T v = {0};
    dt_error err;
    assert_int_equal(dt_opt_set(&rows[0], "--num", "10", &v, &err), -1);
    assert_string_equal(err.msg, "option --num: '10' is not 1..9");
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_int_equal(dt_opt_set(&rows[1], "--pick", "pink", &v, &err), -1);
    assert_string_equal(err.msg, "option --pick: 'pink' is not red, green or blue");
    assert_int_equal(dt_opt_set(&rows[1], "--pick", "blue", &v, &err), 0);
    assert_int_equal(v.choice, 2);
    assert_int_equal(dt_opt_set(&rows[2], "X_VAR", "2", &v, &err), -1);
    assert_string_equal(err.msg, "X_VAR: '2' is not in [0, 1]");
    assert_int_equal(dt_opt_set(&rows[3], "--str", "12345678", &v, &err), -1);
    assert_int_equal(dt_opt_set(&rows[3], "--str", "1234567", &v, &err), 0);
    assert_string_equal(v.s, "1234567");

    // --help: "  --name ARG" padded to column 24, continuation lines there too, no hidden row
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    dt_opts_usage(f, &(dt_opt_table){.opts = rows, .n = 5});
    fclose(f);
    assert_string_equal(buf, "  --num N               a count\n"
                             "  --pick P              a colour\n"
                             "  --frac X              a fraction\n"
                             "                        of one\n"
                             "  --str S               short\n");
    free(buf);

    // the parser: values set, `given` marked, --help, an unknown option, a stray argument
    unsigned char given[5] = {0};
    dt_opt_table t = {.opts = rows, .n = 5, .base = &v, .given = given};
    char *ok[] = {"prog", "--num", "7", "--pick=green", "--hidden", NULL};
    assert_int_equal(dt_opts_parse(5, ok, &t, 1, "prog", 1), 0);
    assert_int_equal(v.n, 1);  // --hidden (a switch on the same field) came last
    assert_int_equal(v.choice, 1);
    assert_true(given[0] && given[1] && !given[2] && !given[3] && given[4]);
    assert_true(dt_opt_given(&t, "pick") && !dt_opt_given(&t, "frac"));
    char *help[] = {"prog", "--help", NULL}, *unknown[] = {"prog", "--bogus", NULL},
         *stray[] = {"prog", "word", NULL}, *missing[] = {"prog", "--num", NULL},
         *bad[] = {"prog", "--num", "0", NULL};
    assert_int_equal(dt_opts_parse(2, help, &t, 1, "prog", 1), 1);
    assert_int_equal(dt_opts_parse(2, unknown, &t, 1, "prog", 1), 2);
    assert_int_equal(dt_opts_parse(2, stray, &t, 1, "prog", 1), 2);
    assert_int_equal(dt_opts_parse(2, missing, &t, 1, "prog", 1), 2);
    assert_int_equal(dt_opts_parse(3, bad, &t, 1, "prog", 1), 2);
}

// A program that takes some of the shared rows (dtcoll-bench) accepts only those
static void test_only_some_rows(void **state) {
    (void)state;
    dt_coll_cli c = fresh();
    dt_opt_table t = dt_coll_cli_table(&c, NULL);
    t.only = "group,inner";
    char *ok[] = {"p", "--group", "3", "--inner", "rhd", NULL};
    char *no[] = {"p", "--algo", "ring", NULL};
    assert_int_equal(dt_opts_parse(5, ok, &t, 1, "p", 1), 0);
    assert_int_equal(c.coll.group, 3);
    assert_int_equal(c.coll.inner, DT_ALGO_RHD);
    assert_int_equal(dt_opts_parse(3, no, &t, 1, "p", 1), 2);
    assert_int_equal(dt_opt_find(&t, "algo"), -1);
    assert_true(dt_opt_find(&t, "inner") >= 0);
}

// A row of one letter is the short option alone (-j 4, -j4); `given` keeps the order the
// options were typed in, `typed` each one's last text; a table used in part (`only`) prints
// none of its headings
static void test_short_order_typed(void **state) {
    (void)state;
    typedef struct { int j; const char *name; int flag; } T;
    const dt_opt rows[] = {
        {.type = DT_OPT_SECTION, .help = "a heading"},
        {.name = "j", .arg = "N", .type = DT_OPT_INT, DT_OPT_AT(T, j), .lo = 1, .hi = 9,
         .want = "1..9", .help = "jobs"},
        {.name = "name", .arg = "S", .type = DT_OPT_TEXT, DT_OPT_AT(T, name), .help = "a name"},
        {.name = "flag", .type = DT_OPT_SWITCH, DT_OPT_AT(T, flag), .help = "a flag"},
    };
    T v = {0};
    unsigned char given[4] = {0};
    const char *typed[4] = {0};
    dt_opt_table t = {.opts = rows, .n = 4, .base = &v, .given = given, .typed = typed};
    // the values and their order drawn at random: -j K (as "-j K" or "-jK"), --name, --flag
    unsigned seed = (unsigned)time(NULL);
    srand(seed);
    char k[2][16], *argv[8] = {"p"};
    int order = rand() % 2, argc = 1, kj = 1 + rand() % 9;
    snprintf(k[0], sizeof k[0], "%d", kj);
    snprintf(k[1], sizeof k[1], "-j%d", kj);
    for (int i = 0; i < 2; i++) {
        if (i == order && rand() % 2) argv[argc++] = "-j", argv[argc++] = k[0];
        else if (i == order) argv[argc++] = k[1];
        else argv[argc++] = "--name", argv[argc++] = "abc";
    }
    argv[argc++] = "--flag";
    if (dt_opts_parse(argc, argv, &t, 1, "p", 1)) fail_msg("seed %u: refused", seed);
    assert_int_equal(v.j, kj);
    assert_string_equal(v.name, "abc");
    assert_int_equal(given[1], order ? 2 : 1);
    assert_int_equal(given[2], order ? 1 : 2);
    assert_int_equal(given[3], 3);
    assert_string_equal(typed[1], k[0]);
    assert_string_equal(typed[2], "abc");
    assert_null(typed[3]);
    char *no_long[] = {"p", "--j", "3", NULL}, *bad[] = {"p", "-j", "0", NULL},
         *unknown[] = {"p", "-k", NULL};
    assert_int_equal(dt_opts_parse(3, no_long, &t, 1, "p", 1), 2);
    assert_int_equal(dt_opts_parse(3, bad, &t, 1, "p", 1), 2);
    assert_int_equal(dt_opts_parse(2, unknown, &t, 1, "p", 1), 2);
    dt_error err;
    assert_int_equal(dt_opt_set(&rows[1], "-j", "10", &v, &err), -1);
    assert_string_equal(err.msg, "option -j: '10' is not 1..9");

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    dt_opts_usage(f, &t);
    t.only = "j,flag";
    dt_opts_usage(f, &t);
    fclose(f);
    assert_string_equal(buf, "a heading\n"
                             "  -j N                  jobs\n"
                             "  --name S              a name\n"
                             "  --flag                a flag\n"
                             "  -j N                  jobs\n"
                             "  --flag                a flag\n");
    free(buf);
    char *other[] = {"p", "--name", "x", NULL};
    assert_int_equal(dt_opts_parse(3, other, &t, 1, "p", 1), 2);  // not a row of this part
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numbers_read_back_in_range),
        cmocka_unit_test(test_environment_reads_like_the_option),
        cmocka_unit_test(test_one_refusal_format),
        cmocka_unit_test(test_only_some_rows),
        cmocka_unit_test(test_short_order_typed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
