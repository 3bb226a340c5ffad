// preload_requests.c — every MPI completion call on MPI_Iallreduce requests that
// libdtcoll_mpi.so (real/dtcoll_mpi_wait.c) owns, mixed with requests it does not own, run
// under LD_PRELOAD by tests/coll/preload.cmake for each algorithm. The program knows nothing of
// dtlab. Each scenario starts 2-5 operations in flight, in one request array in the order
// started: MPI_Iallreduce of float or double sums (ours, or the MPI library's when count is
// 0), an MPI_INT sum (the MPI library's), and a ring exchange Isend/Irecv of the program's own;
// a blocking MPI_Allreduce among them now and then; on MPI_COMM_WORLD, a duplicate, and a
// split (one rank per part at np 2). Then one completion call drives the array:
//   wait  waitany  waitsome  waitall  test  testany  testsome  testall  get_status  free
// in one order: oldest first, newest first, or a random order of each rank's own (ranks then
// complete the same allreduces in different orders). `free` calls MPI_Request_free on the
// allreduces at once (they complete in the background; checked after MPI_Finalize). Besides:
// MPI_Cancel on an allreduce in flight (cancelling a nonblocking collective is erroneous,
// MPI-3.1 §5.12: MPI_ERR_REQUEST or no error; it completes, MPI_Test_cancelled false);
// a duplicate freed while its allreduces are in flight, then waited on; allreduces left in
// flight at MPI_Finalize (checked after it).
// Checked: every sum equals the MPI library's own (PMPI_Allreduce, not intercepted, on the
// same inputs: small random integers, exact in any order); every received value; a received
// message's status (source, tag) where the call returns one per index; each completed request
// is MPI_REQUEST_NULL; MPI_Request_get_status's flag is followed by an immediate MPI_Test
// flag. Prints "PASS preload_requests" on rank 0; "FAIL: ..." and exit 1 on any rank.
// usage: preload_requests [ROUNDS [multiple]]   (10 calls x 3 orders x ROUNDS scenarios, default
// 3; `multiple`: MPI initialised with MPI_THREAD_MULTIPLE, where the library never blocks)
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CALLS = 10, ORDERS = 3, MAXOPS = 8 };
static const char *call_name[CALLS] = {"wait", "waitany", "waitsome", "waitall", "test",
                                       "testany", "testsome", "testall", "get_status", "free"};
static const char *order_name[ORDERS] = {"oldest first", "newest first", "random"};

static int rank, nprocs;
static uint64_t shared, mine;  // one sequence the same on every rank, one per rank

static uint64_t next(uint64_t *s) {  // splitmix64
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static char where[160];  // the scenario, for messages

static void fail(const char *what) {
    fprintf(stderr, "FAIL: rank %d, %s: %s\n", rank, where, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

typedef enum { SUM, INT_SUM, RECV, SEND } kind;

typedef struct {
    kind k;
    int count, f64, peer;
    void *buf;    // the result (SUM, INT_SUM) or the message
    void *send;   // SUM's send buffer (untouched until the allreduce completes)
    double *ref;  // the MPI library's sum (SUM)
    int want[2];  // INT_SUM's sum, RECV's message
    MPI_Comm comm;
} op;

static op *late[4096];  // allreduces whose results are checked after MPI_Finalize
static int n_late;

static int value(int r, int i, uint64_t salt) {  // in [-1000, 1000]
    uint64_t s = salt ^ ((uint64_t)r << 40) ^ (uint64_t)i;
    return (int)(next(&s) % 2001) - 1000;
}

// Start o (its fields set) into *req: a float/double sum compared with PMPI_Allreduce.
static void start_sum(op *o, MPI_Request *req, int blocking) {
    size_t es = o->f64 ? sizeof(double) : sizeof(float);
    uint64_t salt = next(&shared);
    int inplace = (int)(next(&shared) % 2);
    o->buf = malloc(es * (size_t)(o->count + 1));
    void *send = o->send = malloc(es * (size_t)(o->count + 1));
    double *orig = malloc(sizeof(double) * (size_t)(o->count + 1));
    o->ref = malloc(sizeof(double) * (size_t)(o->count + 1));
    for (int i = 0; i < o->count; i++) {
        orig[i] = value(rank, i, salt);
        if (o->f64) ((double *)send)[i] = orig[i];
        else ((float *)send)[i] = (float)orig[i];
    }
    PMPI_Allreduce(orig, o->ref, o->count, MPI_DOUBLE, MPI_SUM, o->comm);
    MPI_Datatype t = o->f64 ? MPI_DOUBLE : MPI_FLOAT;
    if (inplace) memcpy(o->buf, send, es * (size_t)o->count);
    const void *sb = inplace ? MPI_IN_PLACE : send;
    if (blocking) MPI_Allreduce(sb, o->buf, o->count, t, MPI_SUM, o->comm);
    else MPI_Iallreduce(sb, o->buf, o->count, t, MPI_SUM, o->comm, req);
    free(orig);
}

static void check(op *o) {
    if (o->k == SUM) {
        for (int i = 0; i < o->count; i++) {
            double got = o->f64 ? ((double *)o->buf)[i] : ((float *)o->buf)[i];
            if (got != o->ref[i]) {
                char m[200];
                snprintf(m, sizeof m, "%s sum of %d, element %d: %g, the MPI library's %g",
                         o->f64 ? "double" : "float", o->count, i, got, o->ref[i]);
                fail(m);
            }
        }
    } else if (o->k != SEND) {
        int *b = o->buf;
        if (b[0] != o->want[0] || b[1] != o->want[1]) fail("a plain operation's result is wrong");
    }
}

static void release(op *o) {
    free(o->buf), free(o->ref), free(o->send);
    o->buf = NULL, o->ref = NULL, o->send = NULL;
}

// The status of a completed array entry: a received message names its sender and tag; an
// allreduce of ours was not cancelled.
static void check_status(const op *o, const MPI_Status *st, int tag) {
    int c = 1;
    if (o->k == RECV && (st->MPI_SOURCE != o->peer || st->MPI_TAG != tag))
        fail("a receive's status names the wrong source or tag");
    if (o->k == SUM && o->count > 0 && (MPI_Test_cancelled(st, &c), c))
        fail("an allreduce's status says cancelled");
}

static void shuffle(int *a, int n, uint64_t *s) {
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(next(s) % (uint64_t)(i + 1)), t = a[i];
        a[i] = a[j], a[j] = t;
    }
}

static void scenario(int call, int order, MPI_Comm *comms, int n_comms, int tag) {
    op ops[MAXOPS];
    MPI_Request req[MAXOPS];
    int n = 0, n_sums = 2 + (int)(next(&shared) % 3);
    MPI_Comm fresh = MPI_COMM_NULL;  // a duplicate freed while its allreduces are in flight
    if (next(&shared) % 4 == 0) MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
    for (int k = 0; k < n_sums; k++) {
        op *o = &ops[n];
        *o = (op){.k = SUM, .f64 = (int)(next(&shared) % 2)};
        o->comm = fresh != MPI_COMM_NULL && k % 2 ? fresh : comms[next(&shared) % (uint64_t)n_comms];
        uint64_t size = next(&shared) % 8;
        o->count = size == 0 ? 0 : size < 5 ? 1 + (int)(next(&shared) % 7) : (int)(next(&shared) % 5000);
        start_sum(o, &req[n], 0);
        n++;
        if (k == 0) {  // a plain operation of the program's own in the array
            o = &ops[n];
            int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
            if (next(&shared) % 2) {
                *o = (op){.k = INT_SUM, .comm = MPI_COMM_WORLD, .buf = malloc(2 * sizeof(int))};
                ((int *)o->buf)[0] = rank, ((int *)o->buf)[1] = 1;
                o->want[0] = nprocs * (nprocs - 1) / 2, o->want[1] = nprocs;
                MPI_Iallreduce(MPI_IN_PLACE, o->buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[n++]);
            } else {
                *o = (op){.k = RECV, .peer = left, .buf = malloc(2 * sizeof(int))};
                o->want[0] = left * 1000 + tag, o->want[1] = -tag;
                MPI_Irecv(o->buf, 2, MPI_INT, left, tag, MPI_COMM_WORLD, &req[n++]);
                o = &ops[n];
                *o = (op){.k = SEND, .peer = right, .buf = malloc(2 * sizeof(int))};
                ((int *)o->buf)[0] = rank * 1000 + tag, ((int *)o->buf)[1] = -tag;
                MPI_Isend(o->buf, 2, MPI_INT, right, tag, MPI_COMM_WORLD, &req[n++]);
            }
        }
        if (next(&shared) % 3 == 0) {  // a blocking allreduce while these are in flight
            op b = {.k = SUM, .f64 = (int)(next(&shared) % 2), .count = 1 + (int)(next(&shared) % 300),
                    .comm = comms[next(&shared) % (uint64_t)n_comms]};
            start_sum(&b, NULL, 1);
            check(&b);
            release(&b);
        }
    }
    if (fresh != MPI_COMM_NULL) MPI_Comm_free(&fresh);
    int active = n;
    if (next(&shared) % 3 == 0 && ops[0].count > 0) {  // MPI_Cancel: erroneous, no effect
        int c = 1, cls = MPI_SUCCESS;
        MPI_Status st;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Cancel(&req[0]);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Error_class(rc, &cls);
        if (cls != MPI_SUCCESS && cls != MPI_ERR_REQUEST)  // (Open MPI: the latter, but
            fail("MPI_Cancel on an allreduce: neither MPI_SUCCESS nor MPI_ERR_REQUEST");  // 1 rank)
        MPI_Wait(&req[0], &st);
        MPI_Test_cancelled(&st, &c);
        if (c) fail("MPI_Cancel cancelled an allreduce");
        active--;
    }
    int idx[MAXOPS], pos[MAXOPS];  // pos: the array's order of the operations
    for (int i = 0; i < n; i++) pos[i] = order == 1 ? n - 1 - i : i;
    if (order == 2) shuffle(pos, n, &mine);
    MPI_Request arr[MAXOPS];
    MPI_Status sts[MAXOPS], st;
    for (int i = 0; i < n; i++) arr[i] = req[pos[i]];
    int flag = 0, out = 0, done = 0;
    switch (call) {
    case 0:  // wait
        for (int i = 0; i < n; i++) {
            MPI_Wait(&arr[i], &st);
            check_status(&ops[pos[i]], &st, tag);
        }
        break;
    case 1:  // waitany
        for (int i = 0; i < active; i++) {
            MPI_Waitany(n, arr, &idx[0], &st);
            if (idx[0] == MPI_UNDEFINED) fail("MPI_Waitany: MPI_UNDEFINED with requests active");
            check_status(&ops[pos[idx[0]]], &st, tag);
        }
        MPI_Waitany(n, arr, &idx[0], &st);
        if (idx[0] != MPI_UNDEFINED) fail("MPI_Waitany: an index with every request done");
        break;
    case 2:  // waitsome
        while (done < active) {
            MPI_Waitsome(n, arr, &out, idx, sts);
            if (out < 1) fail("MPI_Waitsome returned none with requests active");
            for (int i = 0; i < out; i++) check_status(&ops[pos[idx[i]]], &sts[i], tag);
            done += out;
        }
        MPI_Waitsome(n, arr, &out, idx, sts);
        if (out != MPI_UNDEFINED) fail("MPI_Waitsome: not MPI_UNDEFINED with every request done");
        break;
    case 3:  // waitall
        MPI_Waitall(n, arr, sts);
        for (int i = 0; i < n; i++) check_status(&ops[pos[i]], &sts[i], tag);
        break;
    case 4:  // test
        for (int i = 0; i < n; i++) {
            for (flag = 0; !flag;) MPI_Test(&arr[i], &flag, &st);
            check_status(&ops[pos[i]], &st, tag);
        }
        break;
    case 5:  // testany
        for (;;) {
            MPI_Testany(n, arr, &idx[0], &flag, &st);
            if (flag && idx[0] == MPI_UNDEFINED) break;
            if (flag) check_status(&ops[pos[idx[0]]], &st, tag), done++;
        }
        if (done != active) fail("MPI_Testany: not every request completed once");
        break;
    case 6:  // testsome
        for (;;) {
            MPI_Testsome(n, arr, &out, idx, sts);
            if (out == MPI_UNDEFINED) break;
            for (int i = 0; i < out; i++) check_status(&ops[pos[idx[i]]], &sts[i], tag);
            done += out;
        }
        if (done != active) fail("MPI_Testsome: not every request completed once");
        break;
    case 7:  // testall
        for (flag = 0; !flag;) MPI_Testall(n, arr, &flag, sts);
        for (int i = 0; i < n; i++) check_status(&ops[pos[i]], &sts[i], tag);
        break;
    case 8:  // get_status: poll, then the request must complete at once
        for (int i = 0; i < n; i++) {
            for (flag = 0; !flag;) MPI_Request_get_status(arr[i], &flag, &st);
            if (arr[i] == MPI_REQUEST_NULL && req[pos[i]] != MPI_REQUEST_NULL)
                fail("MPI_Request_get_status freed the request");
            MPI_Test(&arr[i], &flag, &st);
            if (!flag) fail("MPI_Test: not complete after MPI_Request_get_status said so");
            check_status(&ops[pos[i]], &st, tag);
        }
        break;
    case 9:  // free: the allreduces at once, the rest waited for
        for (int i = 0; i < n; i++)
            if (ops[pos[i]].k == SUM && arr[i] != MPI_REQUEST_NULL) MPI_Request_free(&arr[i]);
        MPI_Waitall(n, arr, MPI_STATUSES_IGNORE);
        break;
    }
    for (int i = 0; i < n; i++)
        if (arr[i] != MPI_REQUEST_NULL) fail("a completed request is not MPI_REQUEST_NULL");
    for (int i = 0; i < n; i++) {
        if (call == 9 && ops[i].k == SUM) {  // checked after MPI_Finalize
            late[n_late] = malloc(sizeof(op));
            *late[n_late++] = ops[i];
            continue;
        }
        check(&ops[i]);
        release(&ops[i]);
    }
}

int main(int argc, char **argv) {
    int want = argc > 2 && strcmp(argv[2], "multiple") == 0 ? MPI_THREAD_MULTIPLE
                                                             : MPI_THREAD_SINGLE, got;
    MPI_Init_thread(&argc, &argv, want, &got);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (got < want) {
        if (rank == 0) printf("SKIPPED: this MPI library gives no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (rank == 0) {
        FILE *u = fopen("/dev/urandom", "rb");
        if (!u || fread(&shared, sizeof shared, 1, u) != 1) shared = 12345;
        if (u) fclose(u);
        printf("# seed %llu, %d ranks, %d rounds\n", (unsigned long long)shared, nprocs, rounds);
    }
    PMPI_Bcast(&shared, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    mine = shared ^ ((uint64_t)rank << 32);
    MPI_Comm comms[3] = {MPI_COMM_WORLD};
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, nprocs - rank, &comms[2]);
    int tag = 0, finals = 0;
    for (int r = 0; r < rounds; r++)
        for (int call = 0; call < CALLS; call++)
            for (int order = 0; order < ORDERS; order++) {
                snprintf(where, sizeof where, "round %d, %s, %s", r, call_name[call],
                         order_name[order]);
                scenario(call, order, comms, 3, ++tag);
            }
    snprintf(where, sizeof where, "left in flight at MPI_Finalize");
    for (int k = 0; k < 3; k++) {  // never waited for: MPI_Finalize completes them
        op *o = malloc(sizeof *o);
        MPI_Request req;
        *o = (op){.k = SUM, .f64 = k % 2, .count = 1 + 700 * k, .comm = comms[k]};
        start_sum(o, &req, 0);
        late[n_late++] = o;
        finals++;
    }
    MPI_Comm_free(&comms[1]);  // with an allreduce in flight
    MPI_Comm_free(&comms[2]);
    MPI_Finalize();
    snprintf(where, sizeof where, "after MPI_Finalize (freed requests, pending at MPI_Finalize)");
    int checked = 0;
    for (int i = 0; i < n_late; i++) {
        if (late[i]->k == SUM && late[i]->ref) {
            for (int j = 0; j < late[i]->count; j++) {
                double got = late[i]->f64 ? ((double *)late[i]->buf)[j] : ((float *)late[i]->buf)[j];
                if (got != late[i]->ref[j]) {
                    fprintf(stderr, "FAIL: rank %d, %s: element %d: %g, the MPI library's %g\n",
                            rank, where, j, got, late[i]->ref[j]);
                    return 1;
                }
            }
            checked++;
            release(late[i]);
        }
        free(late[i]);
    }
    if (rank == 0)
        printf("PASS preload_requests: %d scenarios, %d allreduces checked after MPI_Finalize "
               "(%d of them left in flight)\n", rounds * CALLS * ORDERS, checked, finals);
    return 0;
}
