// plot.c — the PNG line-chart writer of plot.h: lay out the frame (margins sized by the
// title, the tick labels and the legend; "nice" ticks 1-2-5 × 10^k, or powers of two on a
// log2 axis), draw into an RGB buffer (gridlines, frame, ticks, series as 3-pixel lines with
// square markers, legend, title, labels with the 5×7 font of plot_font.c), and write it
// with libpng through a temporary file. Not here: what is plotted (dtsim's report code).
#include "plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "plot_font.h"
#ifdef DT_HAVE_PNG
#include <png.h>
#endif

#define TEXT 2          // scale of tick labels, axis labels and legend: 10×14-pixel glyphs
#define TITLE 3         // scale of the title
#define LEGEND_CHARS 24     // legend names are cut to this many characters
#define MAX_TICKS 40

static const unsigned char palette[DT_PLOT_MAX_SERIES][3] = {
    {31, 119, 180}, {255, 127, 14}, {44, 160, 44},  {214, 39, 40},
    {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {188, 189, 34},
};
static const unsigned char black[3] = {0, 0, 0}, grid[3] = {220, 220, 220},
                           frame_rgb[3] = {90, 90, 90};

void dt_plot_color(int i, unsigned char rgb[3]) {
    memcpy(rgb, palette[((i % DT_PLOT_MAX_SERIES) + DT_PLOT_MAX_SERIES) % DT_PLOT_MAX_SERIES], 3);
}

// ---- layout ----

typedef struct {
    double v[MAX_TICKS];
    char label[MAX_TICKS][24];
    int n, chars;  // count, widest label
} ticks;

static double nice_step(double range, int target) {
    double raw = range / target, mag = pow(10, floor(log10(raw))), m = raw / mag;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * mag;
}

// Linear axis over [lo, hi] widened to whole steps; labels with as many decimals as the step.
static void linear_ticks(double *lo, double *hi, int target, ticks *t) {
    double step = nice_step(*hi - *lo, target);
    *lo = floor(*lo / step + 1e-9) * step;
    *hi = ceil(*hi / step - 1e-9) * step;
    int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
    double big = fmax(fabs(*lo), fabs(*hi));
    t->n = t->chars = 0;
    for (int k = 0; t->n < MAX_TICKS && *lo + k * step <= *hi + step * 1e-6; k++) {
        double v = *lo + k * step;
        if (fabs(v) < step * 1e-9) v = 0;
        t->v[t->n] = v;
        if (big >= 1e7) snprintf(t->label[t->n], sizeof t->label[0], "%.3g", v);
        else snprintf(t->label[t->n], sizeof t->label[0], "%.*f", dec, v);
        int len = (int)strlen(t->label[t->n++]);
        if (len > t->chars) t->chars = len;
    }
}

// log2 axis: whole powers of two from floor(lo) to ceil(hi), at most 12 labelled.
static void log2_ticks(double *lo, double *hi, ticks *t) {
    *lo = floor(*lo), *hi = ceil(*hi);
    if (*hi - *lo < 1) *lo -= 1, *hi += 1;
    int stride = (int)ceil((*hi - *lo) / 12);
    t->n = t->chars = 0;
    for (double k = *lo; k <= *hi + 1e-9 && t->n < MAX_TICKS; k += stride) {
        t->v[t->n] = k;
        if (k >= 0) snprintf(t->label[t->n], sizeof t->label[0], "%.0f", pow(2, k));
        else snprintf(t->label[t->n], sizeof t->label[0], "%g", pow(2, k));
        int len = (int)strlen(t->label[t->n++]);
        if (len > t->chars) t->chars = len;
    }
}

// log10 axis: whole decades from floor(lo) to ceil(hi), labelled 1, 10, ..., 1e+06; within
// less than two decades, 2x and 5x of each decade too.
static void log10_ticks(double *lo, double *hi, ticks *t) {
    *lo = floor(*lo + 1e-9), *hi = ceil(*hi - 1e-9);
    if (*hi - *lo < 1) *hi = *lo + 1;
    int sub = *hi - *lo < 2;
    t->n = t->chars = 0;
    for (double k = *lo; k <= *hi + 1e-9; k++)
        for (int m = 1; m <= (sub ? 5 : 1) && t->n < MAX_TICKS; m += m == 1 ? 1 : 3) {
            double v = k + log10(m);
            if (v > *hi + 1e-9) break;
            t->v[t->n] = v;
            double x = pow(10, v);
            if (x >= 1 && x < 1e6) snprintf(t->label[t->n], sizeof t->label[0], "%.0f", x);
            else snprintf(t->label[t->n], sizeof t->label[0], "%.0e", x);
            int len = (int)strlen(t->label[t->n++]);
            if (len > t->chars) t->chars = len;
        }
}

static int text_w(int chars, int scale) { return chars > 0 ? chars * 6 * scale - scale : 0; }

static int valid_point(const dt_plot_opts *o, double x, double y) {
    return isfinite(x) && isfinite(y) && (!o->log2_x || x > 0) && (!o->log10_y || y > 0);
}
static double px_x(const dt_plot_opts *o, double x) { return o->log2_x ? log2(x) : x; }
static double px_y(const dt_plot_opts *o, double y) { return o->log10_y ? log10(y) : y; }

// Everything dt_plot needs besides the pixels.
typedef struct {
    dt_plot_frame f;
    ticks xt, yt;
    int name_chars;
} layout;

static int do_layout(const dt_plot_opts *o, const dt_plot_series *s, int ns, layout *L,
                     dt_error *err) {
    memset(L, 0, sizeof *L);
    if (!o) return dt_fail(err, DT_EXIT_USAGE, "plot: no options given");
    int w = o->width ? o->width : 960, h = o->height ? o->height : 600;
    if (w < 320 || w > 8192 || h < 240 || h > 8192)
        return dt_fail(err, DT_EXIT_USAGE, "plot: size %dx%d; expected 320..8192 x 240..8192 "
                       "pixels", w, h);
    if (ns < 0 || ns > DT_PLOT_MAX_SERIES || (ns > 0 && !s))
        return dt_fail(err, DT_EXIT_USAGE, "plot: %d series; expected 0..%d", ns,
                       DT_PLOT_MAX_SERIES);
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    for (int i = 0; i < ns; i++) {
        if (s[i].n < 0 || (s[i].n > 0 && (!s[i].x || !s[i].y)))
            return dt_fail(err, DT_EXIT_USAGE, "plot: series %d (%s) has no points array", i,
                           s[i].name ? s[i].name : "unnamed");
        for (int k = 0; k < s[i].n; k++) {
            double x = s[i].x[k], y = s[i].y[k];
            if (o->log2_x && isfinite(x) && x <= 0)
                return dt_fail(err, DT_EXIT_USAGE, "plot: series %s point %d: x = %g is not "
                               "positive on a log2 axis", s[i].name ? s[i].name : "unnamed",
                               k, x);
            if (!valid_point(o, x, y)) continue;
            double X = px_x(o, x), Y = px_y(o, y);
            xlo = fmin(xlo, X), xhi = fmax(xhi, X), ylo = fmin(ylo, Y), yhi = fmax(yhi, Y);
        }
    }
    if (!(xlo <= xhi)) xlo = o->log2_x ? 0 : 0, xhi = o->log2_x ? 3 : 1;  // no data
    if (!(ylo <= yhi)) ylo = 0, yhi = 1;
    if (o->y_from_zero && !o->log10_y) ylo = fmin(ylo, 0), yhi = fmax(yhi, 0);
    if (yhi - ylo < 1e-12 * fmax(1, fabs(yhi))) {
        double d = fabs(yhi) > 0 ? fabs(yhi) * 0.1 : 1;
        if (!(o->y_from_zero && ylo == 0)) ylo -= d;
        yhi += d;
    }
    if (!o->log2_x && xhi - xlo < 1e-12 * fmax(1, fabs(xhi))) xlo -= 1, xhi += 1;
    if (o->log2_x) log2_ticks(&xlo, &xhi, &L->xt);
    else linear_ticks(&xlo, &xhi, 8, &L->xt);
    if (o->log10_y) log10_ticks(&ylo, &yhi, &L->yt);
    else linear_ticks(&ylo, &yhi, 6, &L->yt);

    // margins: title on top; y label, tick labels on the left; tick labels and x label at
    // the bottom; the legend on the right (names cut if the plot would get too narrow)
    int top = o->title && *o->title ? 14 + 7 * TITLE + 14 : 20;
    int left = 12 + (o->ylabel && *o->ylabel ? 7 * TEXT + 12 : 0) + text_w(L->yt.chars, TEXT) + 12;
    int bottom = 10 + 7 * TEXT + (o->xlabel && *o->xlabel ? 12 + 7 * TEXT : 0) + 12;
    int chars = 0;
    for (int i = 0; i < ns; i++) {
        int len = s[i].name ? (int)strlen(s[i].name) : 0;
        chars = len > chars ? len : chars;
    }
    chars = chars > LEGEND_CHARS ? LEGEND_CHARS : chars;
    int right = 20;
    for (; ns > 0; chars--) {
        right = 16 + 24 + 8 + text_w(chars, TEXT) + 16;
        if (chars <= 3 || w - left - right >= w * 4 / 10) break;
    }
    L->name_chars = chars;
    L->f = (dt_plot_frame){.width = w, .height = h, .x0 = left, .y0 = top, .x1 = w - right - 1,
                           .y1 = h - bottom - 1, .xmin = xlo, .xmax = xhi, .ymin = ylo,
                           .ymax = yhi};
    if (L->f.x1 - L->f.x0 < 40 || L->f.y1 - L->f.y0 < 40)
        return dt_fail(err, DT_EXIT_USAGE, "plot: %dx%d pixels leave no room for the data "
                       "(labels too long?)", w, h);
    return 0;
}

int dt_plot_layout(const dt_plot_opts *o, const dt_plot_series *s, int nseries,
                   dt_plot_frame *f, dt_error *err) {
    layout L;
    if (do_layout(o, s, nseries, &L, err) != 0) return -1;
    *f = L.f;
    return 0;
}

// ---- drawing ----

typedef struct {
    int w, h;
    unsigned char *px;  // RGB rows
    int cx0, cy0, cx1, cy1;  // clip rectangle, inclusive
} image;

static void put(image *im, int x, int y, const unsigned char c[3]) {
    if (x < im->cx0 || x > im->cx1 || y < im->cy0 || y > im->cy1) return;
    memcpy(im->px + ((size_t)y * im->w + x) * 3, c, 3);
}

static void rect(image *im, int x, int y, int w, int h, const unsigned char c[3]) {
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++) put(im, i, j, c);
}

static const unsigned char *glyph(char ch) {
    unsigned char u = (unsigned char)ch;
    return dt_font5x7[(u < 32 || u > 126 ? '?' : u) - 32];
}

static int drop(char ch) { return ch && strchr(DT_FONT_DESCENDERS, ch) ? 2 : 0; }

// Text with its top-left corner at (x, y), at most max characters (-1: all).
static void text(image *im, int x, int y, const char *s, int max, int scale,
                 const unsigned char c[3]) {
    for (int k = 0; s[k] && k != max; k++) {
        const unsigned char *g = glyph(s[k]);
        for (int r = 0; r < DT_FONT_H; r++)
            for (int col = 0; col < DT_FONT_W; col++)
                if (g[r] & (0x10 >> col))
                    rect(im, x + (k * 6 + col) * scale, y + (r + drop(s[k])) * scale, scale,
                         scale, c);
    }
}

// Text turned 90° counter-clockwise (read bottom to top), its box's bottom-left at (x, y).
static void text_up(image *im, int x, int y, const char *s, int scale, const unsigned char c[3]) {
    for (int k = 0; s[k]; k++) {
        const unsigned char *g = glyph(s[k]);
        for (int r = 0; r < DT_FONT_H; r++)
            for (int col = 0; col < DT_FONT_W; col++)
                if (g[r] & (0x10 >> col))
                    rect(im, x + (r + drop(s[k])) * scale, y - (k * 6 + col + 1) * scale + 1,
                         scale, scale, c);
    }
}

// Bresenham's line, each pixel a 3×3 square.
static void line3(image *im, int xa, int ya, int xb, int yb, const unsigned char c[3]) {
    int dx = abs(xb - xa), dy = -abs(yb - ya), sx = xa < xb ? 1 : -1, sy = ya < yb ? 1 : -1;
    int e = dx + dy;
    for (;;) {
        rect(im, xa - 1, ya - 1, 3, 3, c);
        if (xa == xb && ya == yb) break;
        int e2 = 2 * e;
        if (e2 >= dy) e += dy, xa += sx;
        if (e2 <= dx) e += dx, ya += sy;
    }
}

static int map_x(const dt_plot_frame *f, double X) {
    return (int)lround(f->x0 + (X - f->xmin) / (f->xmax - f->xmin) * (f->x1 - f->x0));
}
static int map_y(const dt_plot_frame *f, double y) {
    return (int)lround(f->y1 - (y - f->ymin) / (f->ymax - f->ymin) * (f->y1 - f->y0));
}

static void draw_axes(image *im, const layout *L, const dt_plot_opts *o) {
    const dt_plot_frame *f = &L->f;
    for (int k = 0; k < L->yt.n; k++) {
        int y = map_y(f, L->yt.v[k]);
        rect(im, f->x0, y, f->x1 - f->x0 + 1, 1, grid);
        rect(im, f->x0 - 5, y, 5, 1, frame_rgb);
        int len = (int)strlen(L->yt.label[k]);
        text(im, f->x0 - 10 - text_w(len, TEXT), y - 7 * TEXT / 2, L->yt.label[k], -1, TEXT, black);
    }
    for (int k = 0; k < L->xt.n; k++) {
        int x = map_x(f, L->xt.v[k]);
        rect(im, x, f->y0, 1, f->y1 - f->y0 + 1, grid);
        rect(im, x, f->y1 + 1, 1, 5, frame_rgb);
        int len = (int)strlen(L->xt.label[k]);
        text(im, x - text_w(len, TEXT) / 2, f->y1 + 10, L->xt.label[k], -1, TEXT, black);
    }
    rect(im, f->x0, f->y0, f->x1 - f->x0 + 1, 1, frame_rgb);
    rect(im, f->x0, f->y1, f->x1 - f->x0 + 1, 1, frame_rgb);
    rect(im, f->x0, f->y0, 1, f->y1 - f->y0 + 1, frame_rgb);
    rect(im, f->x1, f->y0, 1, f->y1 - f->y0 + 1, frame_rgb);
    if (o->title && *o->title) {
        int len = (int)strlen(o->title);
        text(im, (f->width - text_w(len, TITLE)) / 2, 14, o->title, -1, TITLE, black);
    }
    if (o->xlabel && *o->xlabel) {
        int len = (int)strlen(o->xlabel);
        text(im, (f->x0 + f->x1 - text_w(len, TEXT)) / 2, f->height - 12 - 7 * TEXT, o->xlabel,
             -1, TEXT, black);
    }
    if (o->ylabel && *o->ylabel) {
        int len = (int)strlen(o->ylabel);
        text_up(im, 12, (f->y0 + f->y1 + text_w(len, TEXT)) / 2, o->ylabel, TEXT, black);
    }
}

static void draw_series(image *im, const layout *L, const dt_plot_opts *o,
                        const dt_plot_series *s, int ns) {
    const dt_plot_frame *f = &L->f;
    for (int i = 0; i < ns; i++) {
        const unsigned char *c = palette[i];
        int have = 0, px = 0, py = 0;
        im->cx0 = f->x0, im->cy0 = f->y0, im->cx1 = f->x1, im->cy1 = f->y1;  // lines: inside
        for (int k = 0; k < s[i].n && s[i].style != DT_PLOT_MARKERS; k++) {
            if (!valid_point(o, s[i].x[k], s[i].y[k])) {
                have = 0;  // a gap
                continue;
            }
            int x = map_x(f, px_x(o, s[i].x[k])), y = map_y(f, px_y(o, s[i].y[k]));
            if (have && s[i].style == DT_PLOT_DASHED) {  // 12 pixels on, 8 off
                int n = abs(x - px) > abs(y - py) ? abs(x - px) : abs(y - py);
                for (int a = 0; a < n; a += 20) {
                    int b = a + 12 < n ? a + 12 : n;
                    line3(im, px + (x - px) * a / n, py + (y - py) * a / n,
                          px + (x - px) * b / n, py + (y - py) * b / n, c);
                }
            } else if (have) {
                line3(im, px, py, x, y, c);
            }
            have = 1, px = x, py = y;
        }
        im->cx0 = im->cy0 = 0, im->cx1 = im->w - 1, im->cy1 = im->h - 1;  // markers: anywhere
        int m = s[i].style == DT_PLOT_MARKERS ? 13 : 7;
        for (int k = 0; k < s[i].n && s[i].style != DT_PLOT_DASHED; k++)
            if (valid_point(o, s[i].x[k], s[i].y[k]))
                rect(im, map_x(f, px_x(o, s[i].x[k])) - m / 2,
                     map_y(f, px_y(o, s[i].y[k])) - m / 2, m, m, c);
    }
    // legend, right of the plot area: the series' line, dashes or marker, then its name
    for (int i = 0; i < ns; i++) {
        int x = f->x1 + 16, y = f->y0 + 6 + i * (7 * TEXT + 10);
        if (s[i].style == DT_PLOT_DASHED) {
            rect(im, x, y + 7 * TEXT / 2 - 1, 9, 3, palette[i]);
            rect(im, x + 15, y + 7 * TEXT / 2 - 1, 9, 3, palette[i]);
        } else if (s[i].style == DT_PLOT_MARKERS) {
            rect(im, x + 6, y + 7 * TEXT / 2 - 6, 13, 13, palette[i]);
        } else {
            rect(im, x, y + 7 * TEXT / 2 - 1, 24, 3, palette[i]);
            rect(im, x + 9, y + 7 * TEXT / 2 - 3, 7, 7, palette[i]);
        }
        if (s[i].name) text(im, x + 32, y, s[i].name, L->name_chars, TEXT, black);
    }
}

#ifdef DT_HAVE_PNG
// libpng reports errors by longjmp; the pixels are written row by row.
static int write_png(FILE *f, const image *im) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)im->w, (png_uint_32)im->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < im->h; y++) png_write_row(png, im->px + (size_t)y * im->w * 3);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    return 0;
}
#endif

int dt_plot(const char *png_path, const dt_plot_opts *o, const dt_plot_series *s, int nseries,
            dt_error *err) {
    layout L;
    if (do_layout(o, s, nseries, &L, err) != 0) return -1;
#ifndef DT_HAVE_PNG
    (void)png_path;
    return dt_fail(err, DT_EXIT_USAGE, "plot %s: dtlab was built without libpng (apt-get "
                   "install libpng-dev, then rebuild)", png_path ? png_path : "");
#else
    image im = {.w = L.f.width, .h = L.f.height, .cx1 = L.f.width - 1, .cy1 = L.f.height - 1};
    im.px = mallocCheck((size_t)im.w * im.h * 3);
    memset(im.px, 255, (size_t)im.w * im.h * 3);
    draw_axes(&im, &L, o);
    draw_series(&im, &L, o, s, nseries);
    dt_atomic_file a;
    int rc = dt_atomic_open(&a, png_path, "plot", err);
    if (rc == 0 && write_png(a.f, &im) != 0) {
        dt_atomic_abort(&a);
        rc = dt_fail(err, DT_EXIT_RUNTIME, "plot %.300s: libpng failed to write the image",
                     png_path);
    } else if (rc == 0) {
        rc = dt_atomic_finish(&a, err);
        if (rc == 0) rc = dt_atomic_commit(&a, err);
    }
    free(im.px);
    return rc;
#endif
}
