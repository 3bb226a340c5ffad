// fuzz_idx.c — real/data_idx.c, Fashion-MNIST's idx files, plain or gzip (zlib reads both):
// the input is split into an images file and a labels file (its first two bytes, little
// endian, are the images file's length), written as DIR/train-{images-idx3,labels-idx1}-
// ubyte.gz and loaded as `dtrain --data-dir DIR` would. Refused with exit 2 naming the
// directory, or a dataset whose every example can be read.
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    size_t li = (size_t)data[0] | (size_t)data[1] << 8;
    data += 2, size -= 2;
    if (li > size) li = size;
    fuzz_file("train-images-idx3-ubyte.gz", NULL, 0, data, li);
    fuzz_file("train-labels-idx1-ubyte.gz", NULL, 0, data + li, size - li);
    dt_error err = {0};
    dt_dataset *ds = dt_dataset_load_idx(fuzz_dir(), "train", &err);
    fuzz_verdict("dt_dataset_load_idx", ds ? 0 : -1, &err, fuzz_dir());
    if (!ds) return 0;
    float *x = malloc((size_t)ds->c * ds->h * ds->w * sizeof(float));
    for (int64_t i = 0; i < ds->n; i += ds->n > 1 ? ds->n - 1 : 1) {  // the first and last
        int32_t y;
        if (dt_dataset_get(ds, i, 0, x, &y, &err) != 0) abort();
        if (y < 0 || y >= ds->num_classes) abort();
    }
    free(x);
    dt_dataset_free(ds);
    return 0;
}
