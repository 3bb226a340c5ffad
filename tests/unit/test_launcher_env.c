// test_launcher_env.c — ranks per node from the launcher's environment (nn/coll/coll.c:
// dt_coll_local_size, dt_slurm_tasks_on_node), so that `srun dtrain` works like `mpirun
// dtrain` without Slurm installed here. The reference: random per-node task counts, written
// in Slurm's compressed form ("C(xK)" for K equal nodes in a row, as SLURM_TASKS_PER_NODE
// does) by this test, then read back node by node.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "testutil.h"

static void test_compressed_lists_read_back_node_by_node(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    for (int trial = 0; trial < 200; trial++) {
        int nodes = tu_int(&r, 1, 40), count[40];
        for (int i = 0; i < nodes; i++)  // runs of equal counts, as real allocations have
            count[i] = i > 0 && tu_int(&r, 0, 2) ? count[i - 1] : tu_int(&r, 1, 128);
        char spec[1024];
        size_t k = 0;
        for (int i = 0; i < nodes;) {
            int j = i;
            while (j < nodes && count[j] == count[i]) j++;
            k += (size_t)snprintf(spec + k, sizeof spec - k, "%s%d", i ? "," : "", count[i]);
            if (j - i > 1) k += (size_t)snprintf(spec + k, sizeof spec - k, "(x%d)", j - i);
            i = j;
        }
        for (int i = 0; i < nodes; i++)
            if (dt_slurm_tasks_on_node(spec, i) != count[i])
                fail_msg("'%s' node %d: got %d, expected %d", spec, i,
                         dt_slurm_tasks_on_node(spec, i), count[i]);
        assert_int_equal(dt_slurm_tasks_on_node(spec, nodes), 0);  // no such node
    }
}

static void test_malformed_lists_give_zero(void **state) {
    (void)state;
    const char *bad[] = {"", "x", "8(x)", "8(4)", "8(x4", "0", "-2", "8,,2", "8(x0)",
                         "8(x2)3", "8;2", "2(x3),a"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (dt_slurm_tasks_on_node(bad[i], 0) != 0)
            fail_msg("'%s': got %d, expected 0", bad[i], dt_slurm_tasks_on_node(bad[i], 0));
    assert_int_equal(dt_slurm_tasks_on_node(NULL, 0), 0);
    assert_int_equal(dt_slurm_tasks_on_node("4", -1), 0);
}

static void clear(void) {
    const char *v[] = {"DT_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                       "SLURM_NODEID", "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) unsetenv(v[i]);
}

static void test_environment_order(void **state) {
    (void)state;
    tu_rng r = tu_rng_new(tu_seed());
    int a = tu_int(&r, 1, 16), b = a + tu_int(&r, 1, 16), c = b + tu_int(&r, 1, 16);
    char s[64];
    clear();
    assert_int_equal(dt_coll_local_size(), 0);  // no launcher: unknown
    // srun: this node's entry, by SLURM_NODEID; the step's list before the job's
    setenv("SLURM_NODEID", "2", 1);
    snprintf(s, sizeof s, "%d(x2),%d", a, b);
    setenv("SLURM_TASKS_PER_NODE", s, 1);
    assert_int_equal(dt_coll_local_size(), b);
    snprintf(s, sizeof s, "%d(x3)", c);
    setenv("SLURM_STEP_TASKS_PER_NODE", s, 1);
    assert_int_equal(dt_coll_local_size(), c);
    setenv("SLURM_NODEID", "3", 1);  // outside the list: unknown
    assert_int_equal(dt_coll_local_size(), 0);
    // mpirun's own figure wins over Slurm's (mpirun inside an allocation), ours over both
    snprintf(s, sizeof s, "%d", a);
    setenv("MPI_LOCALNRANKS", s, 1);
    assert_int_equal(dt_coll_local_size(), a);
    snprintf(s, sizeof s, "%d", b);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", s, 1);
    assert_int_equal(dt_coll_local_size(), b);
    snprintf(s, sizeof s, "%d", c);
    setenv("DT_LOCAL_SIZE", s, 1);
    assert_int_equal(dt_coll_local_size(), c);
    setenv("DT_LOCAL_SIZE", "lots", 1);  // not a number: the next source
    assert_int_equal(dt_coll_local_size(), b);
    clear();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compressed_lists_read_back_node_by_node),
        cmocka_unit_test(test_malformed_lists_give_zero),
        cmocka_unit_test(test_environment_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
