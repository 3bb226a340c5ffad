// data_transform.c — the per-image transform of ImageNet training (Krizhevsky et al. 2012,
// §4.1; He et al. 2016, §3.4): resize so the shorter side is `resize`, take a crop x crop
// window (random in training, central in evaluation), mirror it left-right at random, and
// normalise per channel. The resize is bilinear, antialiased as PIL's Image.resize(BILINEAR)
// (libImaging/Resample.c): output pixel o of a (in -> out) resize averages the inputs k with
// weights tri((k + 0.5 - (o + 0.5)*s) / max(s, 1)), s = in/out, tri(t) = max(0, 1 - |t|),
// normalised to sum 1 — plain bilinear with half-pixel centres when enlarging, a widened
// triangle when shrinking. Only the crop window is ever computed.
// Not here: decoding (data_decode.c), choosing the random window (data_folder.c).
#include <math.h>
#include <string.h>

#include "data.h"

void dt_image_resized_size(int h, int w, int resize, int *rh, int *rw) {
    if (h <= w) {
        *rh = resize;
        *rw = (int)((int64_t)resize * w / h);
    } else {
        *rw = resize;
        *rh = (int)((int64_t)resize * h / w);
    }
    if (*rh < 1) *rh = 1;
    if (*rw < 1) *rw = 1;
}

// Filter taps for outputs o0..o0+len-1 of a resize in -> out: output i reads inputs
// first[i] .. first[i]+count[i]-1 with weights wt[i*kmax + t]. Returns kmax.
static int resample_taps(int in, int out, int o0, int len, int *first, int *count, float **wt) {
    double scale = (double)in / out;
    double fscale = scale > 1.0 ? scale : 1.0;
    double support = fscale;  // the triangle's support (1) widened by the scale
    int kmax = (int)ceil(support) * 2 + 1;
    *wt = mallocCheck(sizeof(float) * (size_t)len * kmax);
    for (int i = 0; i < len; i++) {
        double center = (o0 + i + 0.5) * scale;
        int lo = (int)floor(center - support + 0.5), hi = (int)floor(center + support + 0.5);
        if (lo < 0) lo = 0;
        if (hi > in) hi = in;
        float *wk = *wt + (size_t)i * kmax;
        double sum = 0.0;
        int n = hi - lo;
        for (int t = 0; t < n; t++) {
            double d = fabs((lo + t + 0.5 - center) / fscale);
            sum += d < 1.0 ? 1.0 - d : 0.0;
        }
        for (int t = 0; t < n; t++) {
            double d = fabs((lo + t + 0.5 - center) / fscale);
            wk[t] = (float)((d < 1.0 ? 1.0 - d : 0.0) / sum);
        }
        first[i] = lo;
        count[i] = n;
    }
    return kmax;
}

// rgb is (h,w,3) uint8; out is (3,crop,crop)
void dt_image_transform(const uint8_t *rgb, int h, int w, int resize, int crop, int oy, int ox,
                        int flip, const float *mean, const float *std, float *out) {
    int rh, rw;
    dt_image_resized_size(h, w, resize, &rh, &rw);
    DT_ASSERT(crop >= 1 && oy >= 0 && ox >= 0 && oy + crop <= rh && ox + crop <= rw);
    int *yfirst = mallocCheck(sizeof(int) * crop), *ycount = mallocCheck(sizeof(int) * crop);
    int *xfirst = mallocCheck(sizeof(int) * crop), *xcount = mallocCheck(sizeof(int) * crop);
    float *wy, *wx;
    int ky = resample_taps(h, rh, oy, crop, yfirst, ycount, &wy);
    int kx = resample_taps(w, rw, ox, crop, xfirst, xcount, &wx);
    // horizontal pass over the source rows the window needs: tmp is (rows, crop, 3)
    int r0 = yfirst[0], r1 = yfirst[crop - 1] + ycount[crop - 1];
    float *tmp = mallocCheck(sizeof(float) * (size_t)(r1 - r0) * crop * 3);
    for (int y = r0; y < r1; y++) {
        const uint8_t *src = rgb + (size_t)y * w * 3;
        float *dst = tmp + (size_t)(y - r0) * crop * 3;
        for (int j = 0; j < crop; j++) {
            const float *k = wx + (size_t)j * kx;
            const uint8_t *p = src + (size_t)xfirst[j] * 3;
            float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f;
            for (int t = 0; t < xcount[j]; t++) {
                a0 += k[t] * p[3 * t];
                a1 += k[t] * p[3 * t + 1];
                a2 += k[t] * p[3 * t + 2];
            }
            dst[3 * j] = a0;
            dst[3 * j + 1] = a1;
            dst[3 * j + 2] = a2;
        }
    }
    // vertical pass, mirror and normalise: out[c, i, flip ? crop-1-j : j]
    float scale[3], shift[3];
    for (int c = 0; c < 3; c++) {
        scale[c] = 1.0f / (255.0f * std[c]);
        shift[c] = mean[c] / std[c];
    }
    size_t plane = (size_t)crop * crop;
    for (int i = 0; i < crop; i++) {
        const float *k = wy + (size_t)i * ky;
        const float *rows = tmp + (size_t)(yfirst[i] - r0) * crop * 3;
        for (int j = 0; j < crop; j++) {
            float a0 = 0.0f, a1 = 0.0f, a2 = 0.0f;
            for (int t = 0; t < ycount[i]; t++) {
                const float *p = rows + ((size_t)t * crop + j) * 3;
                a0 += k[t] * p[0];
                a1 += k[t] * p[1];
                a2 += k[t] * p[2];
            }
            size_t o = (size_t)i * crop + (size_t)(flip ? crop - 1 - j : j);
            out[o] = a0 * scale[0] - shift[0];
            out[plane + o] = a1 * scale[1] - shift[1];
            out[2 * plane + o] = a2 * scale[2] - shift[2];
        }
    }
    free(tmp);
    free(wx);
    free(wy);
    free(yfirst);
    free(ycount);
    free(xfirst);
    free(xcount);
}
