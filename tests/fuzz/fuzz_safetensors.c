// fuzz_safetensors.c — nn/safetensors.c, the reader of weights files and checkpoints (header
// length, JSON header, dtypes, shapes, offsets, CRC-32): a file is refused with exit-2 message
// naming it, or every tensor it hands out lies inside the data and has shape x dtype bytes.
#include <stdlib.h>

#include "fuzz.h"
#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("in.safetensors", NULL, 0, data, size);
    dt_error err = {0};
    dt_st_file *f = dt_st_open(path, &err);
    fuzz_verdict("dt_st_open", f ? 0 : -1, &err, path);
    if (!f) return 0;
    for (int i = 0; i < dt_st_count(f); i++) {
        const dt_st_tensor *t = dt_st_get(f, i);
        int64_t nb = dt_st_shape_bytes(t->ndim, t->shape, t->dtype);
        if (nb < 0 || (size_t)nb != t->nbytes || t->nbytes > size) abort();
        volatile unsigned char x = 0;  // every byte readable (ASan checks the bounds)
        for (size_t k = 0; k < t->nbytes; k++) x ^= ((const unsigned char *)t->data)[k];
        if (dt_st_find(f, t->name) == NULL) abort();
    }
    dt_st_close(f);
    return 0;
}
