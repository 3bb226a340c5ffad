// plot.h — a small PNG line-chart writer for dtsim's --plot (scaling curves: throughput or
// efficiency against GPU count): one chart per call, up to 8 series of (x, y) points, a
// title, axis labels, ticks with numbers, gridlines, a legend, an optional log2 x axis. It
// needs only libpng and draws text with a built-in 5×7 bitmap font. Not a plotting library:
// no second axis, no panels, no anti-aliasing (every pixel of a series is exactly its
// colour, which is what the test checks). Without libpng, dt_plot fails with a message.
#ifndef DT_SIM_PLOT_H
#define DT_SIM_PLOT_H

#include "dt.h"

#define DT_PLOT_MAX_SERIES 8

// How a series is drawn: a line through square markers (the default), a dashed line without
// markers (a reference such as ideal scaling), or markers alone, larger (published points).
typedef enum { DT_PLOT_LINE, DT_PLOT_DASHED, DT_PLOT_MARKERS } dt_plot_style;

typedef struct {
    const char *name;      // legend text (printable ASCII; long names are cut)
    const double *x, *y;   // n points, in order; a non-finite y leaves a gap
    int n;
    dt_plot_style style;   // 0: DT_PLOT_LINE
} dt_plot_series;

typedef struct {
    const char *title, *xlabel, *ylabel;  // NULL = none
    int width, height;                    // pixels, 0 = 960 × 600; 320 .. 8192 each
    int log2_x;                           // x axis in powers of two (GPU counts 8 .. 4096)
    int y_from_zero;                      // the y axis starts at 0 (efficiency); not with log10_y
    int log10_y;                          // y axis in decades (throughput on log-log axes:
                                          // ideal scaling is a straight line); y <= 0 is a gap
} dt_plot_opts;

// Where the data lands: the plot area in pixels (x0,y0 top-left, x1,y1 bottom-right, both
// inclusive) and the axis ranges at its edges (for a log2 axis, xmin/xmax are log2 of x; for
// a log10 y axis, ymin/ymax are log10 of y). A point (x, y) is drawn at column
// x0 + (X - xmin) / (xmax - xmin) · (x1 - x0), row y1 - (Y - ymin) / (ymax - ymin) · (y1 - y0),
// rounded, where X = x or log2(x) and Y = y or log10(y).
typedef struct {
    int width, height;
    int x0, y0, x1, y1;
    double xmin, xmax, ymin, ymax;
} dt_plot_frame;

// The frame dt_plot would use for these series; -1 with DT_EXIT_USAGE on bad input (more
// than 8 series, a NULL array, x <= 0 on a log2 axis, a size out of range).
int dt_plot_layout(const dt_plot_opts *o, const dt_plot_series *s, int nseries,
                   dt_plot_frame *f, dt_error *err);

// Draws the chart and writes it as an RGB PNG, atomically (temporary file, fsync, rename).
// -1 with err: DT_EXIT_USAGE for bad input or an unwritable path, DT_EXIT_RUNTIME for I/O.
int dt_plot(const char *png_path, const dt_plot_opts *o, const dt_plot_series *s, int nseries,
            dt_error *err);

// The colour of series i (0 .. 7) as 8-bit RGB.
void dt_plot_color(int i, unsigned char rgb[3]);

#endif
