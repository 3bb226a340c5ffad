// fuzz_json.c — nn/json.c, the JSON reader under safetensors headers, dtsim profiles and
// every --json consumer: any bytes parse into a tree or fail with a message; never a crash,
// a read past the input (the input is not NUL-terminated) or unbounded recursion.
#include <stdlib.h>

#include "fuzz.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char msg[256] = "";
    dt_json *v = dt_json_parse((const char *)data, size, msg, sizeof msg);
    if (!v && !msg[0]) abort();  // a rejection always says why
    dt_json_free(v);
    return 0;
}
