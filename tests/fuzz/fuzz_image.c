// fuzz_image.c — real/data_decode.c, the images of `dtrain --data-dir` folders, built twice:
// fuzz_png (-DDT_FUZZ_PNG, libpng) and fuzz_jpeg (libjpeg-turbo). The input is one such file
// (the format's signature is put in front when it is missing, so the fuzzer's mutations stay
// in that decoder). Refused with exit 2 naming the file, or decoded into an h x w RGB image
// of positive size whose every byte can be read; never an allocation sized by an untrusted
// header beyond the decoder's limits.
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "fuzz.h"

#ifdef DT_FUZZ_PNG
static const uint8_t sig[] = {0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A};
#define NAME "in.png"
#else
static const uint8_t sig[] = {0xFF, 0xD8, 0xFF};
#define NAME "in.jpg"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    int has = size >= sizeof sig && memcmp(data, sig, sizeof sig) == 0;
    const char *path = fuzz_file(NAME, has ? NULL : sig, has ? 0 : sizeof sig, data, size);
    uint8_t *rgb = NULL;
    int h = 0, w = 0;
    dt_error err = {0};
    int rc = dt_image_decode(path, &rgb, &h, &w, &err);
    fuzz_verdict("dt_image_decode", rc, &err, path);
    if (rc == 0) {
        if (!rgb || h <= 0 || w <= 0) abort();
        volatile uint8_t x = 0;
        for (size_t k = 0; k < (size_t)h * w * 3; k++) x ^= rgb[k];
    }
    free(rgb);
    return 0;
}
