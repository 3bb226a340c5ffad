// globals_bad.c — a deliberately bad object for the self-test of
// check_no_writable_globals.sh: each variable below is one kind of writable global that the
// check must report (.bss, .data, a function-local static, thread-local), and `names` is the
// kind it must accept (a const table of pointers, .data.rel.ro under -fPIC). Never linked
// into anything; not part of nn/.
static const char *const names[] = {"weight", "bias"};
int bad_counter;                 // .bss, global
static int bad_initialised = 5;  // .data, file-local
_Thread_local int bad_tls;       // .tbss: one per OS thread, but SMPI ranks share a thread

const char *globals_bad_name(int i) {
    static int calls;            // .bss, function-local static
    calls++;
    bad_counter++;
    bad_initialised++;
    bad_tls++;
    return names[i & 1];
}
