// test_sim_plot.c — the PNG chart writer (sim/plot.c), read back with libpng: the image has
// the asked size, every data point and the middle of every segment are drawn in the series'
// colour where the frame's mapping (recomputed here from its documented formula) puts them,
// the axis ranges hold the data, the title and legend are drawn, and bad input or a bad path
// fail with a message and leave no file.
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot.h"
#include "testutil.h"
#ifdef DT_HAVE_PNG
#include <png.h>
#endif

static tu_rng rng;

static int setup(void **state) {
    (void)state;
    rng = tu_rng_new(tu_seed());
    return 0;
}

#ifdef DT_HAVE_PNG
typedef struct {
    int w, h;
    unsigned char *px;
} rgb_image;

static rgb_image read_png(const char *path) {
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    assert_true(png_image_begin_read_from_file(&img, path));
    img.format = PNG_FORMAT_RGB;
    rgb_image r = {(int)img.width, (int)img.height, malloc(PNG_IMAGE_SIZE(img))};
    assert_true(png_image_finish_read(&img, NULL, r.px, 0, NULL));
    return r;
}

static int is_color(const rgb_image *im, int x, int y, const unsigned char c[3]) {
    if (x < 0 || y < 0 || x >= im->w || y >= im->h) return 0;
    const unsigned char *p = im->px + ((size_t)y * im->w + x) * 3;
    return p[0] == c[0] && p[1] == c[1] && p[2] == c[2];
}

// Pixels of colour c in the rectangle [x0, x1] × [y0, y1].
static int count_color(const rgb_image *im, int x0, int y0, int x1, int y1,
                       const unsigned char c[3]) {
    int n = 0;
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) n += is_color(im, x, y, c);
    return n;
}

static int count_not_white(const rgb_image *im, int x0, int y0, int x1, int y1) {
    const unsigned char white[3] = {255, 255, 255};
    return (x1 - x0 + 1) * (y1 - y0 + 1) - count_color(im, x0, y0, x1, y1, white);
}

// The documented mapping of plot.h, written out again.
static void to_pixel(const dt_plot_frame *f, int log2_x, double x, double y, int *px, int *py) {
    double X = log2_x ? log2(x) : x;
    *px = (int)lround(f->x0 + (X - f->xmin) / (f->xmax - f->xmin) * (f->x1 - f->x0));
    *py = (int)lround(f->y1 - (y - f->ymin) / (f->ymax - f->ymin) * (f->y1 - f->y0));
}

static char *make_dir(void) {
    char *d = strdup("/tmp/dt_plot_test.XXXXXX");
    assert_non_null(mkdtemp(d));
    return d;
}

static int count_entries(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

// Scaling curves on GPU counts 8 .. 4096 (log2 axis): series k is efficiency-like, separated
// by a random gap so that no two lines cross, so every pixel checked has one owner.
static void test_scaling_plot_draws_every_point_and_segment_in_its_series_colour(void **state) {
    (void)state;
    enum { NS = 4, NP = 10 };
    double x[NP], y[NS][NP];
    for (int k = 0; k < NP; k++) x[k] = pow(2, 3 + k);  // 8 .. 4096
    for (int s = 0; s < NS; s++)
        for (int k = 0; k < NP; k++)
            y[s][k] = 100 * (s + 1) + 60 * sin(0.5 * k + tu_uniform(&rng, 0, 0.3)) + 20;
    dt_plot_series series[NS];
    const char *names[NS] = {"ring", "hier", "rhd", "torus2d 8/4"};
    for (int s = 0; s < NS; s++) series[s] = (dt_plot_series){names[s], x, y[s], NP, DT_PLOT_LINE};
    int w = tu_int(&rng, 640, 1200), h = tu_int(&rng, 400, 800);
    dt_plot_opts o = {.title = "ResNet-50 scaling, jia2018", .xlabel = "GPUs",
                      .ylabel = "images/s per GPU", .width = w, .height = h, .log2_x = 1,
                      .y_from_zero = 1};
    char *dir = make_dir(), path[256];
    snprintf(path, sizeof path, "%s/scaling.png", dir);
    dt_error err = {0};
    assert_int_equal(dt_plot(path, &o, series, NS, &err), 0);
    assert_int_equal(count_entries(dir), 1);  // no temporary left
    dt_plot_frame f;
    assert_int_equal(dt_plot_layout(&o, series, NS, &f, &err), 0);
    rgb_image im = read_png(path);
    assert_int_equal(im.w, w);
    assert_int_equal(im.h, h);
    // the axes hold the data: log2(8) .. log2(4096) and 0 .. max
    assert_true(f.xmin <= 3 && f.xmax >= 12 && f.ymin == 0);
    for (int s = 0; s < NS; s++)
        for (int k = 0; k < NP; k++) assert_true(y[s][k] <= f.ymax);
    for (int s = 0; s < NS; s++) {
        unsigned char c[3];
        dt_plot_color(s, c);
        for (int k = 0; k < NP; k++) {
            int px, py, qx, qy;
            to_pixel(&f, 1, x[k], y[s][k], &px, &py);
            if (!is_color(&im, px, py, c))
                fail_msg("series %d point %d not drawn at (%d,%d)", s, k, px, py);
            if (k + 1 < NP) {  // the middle of the segment to the next point
                to_pixel(&f, 1, x[k + 1], y[s][k + 1], &qx, &qy);
                int mx = (px + qx) / 2, my = (py + qy) / 2;
                if (!is_color(&im, mx, my, c))
                    fail_msg("series %d segment %d not drawn at (%d,%d)", s, k, mx, my);
            }
        }
        // its legend swatch right of the plot area: a 24×3 line through a 7×7 marker
        assert_true(count_color(&im, f.x1 + 1, f.y0, w - 1, f.y1, c) >= 24 * 3 + 7 * 7 - 7 * 3);
    }
    // title above the frame, tick labels left of it and below it, legend text
    assert_true(count_not_white(&im, 0, 0, w - 1, f.y0 - 2) > 200);
    assert_true(count_not_white(&im, 0, f.y0, f.x0 - 6, f.y1) > 200);
    assert_true(count_not_white(&im, f.x0, f.y1 + 6, f.x1, h - 1) > 200);
    const unsigned char black[3] = {0, 0, 0};  // legend names
    assert_true(count_color(&im, f.x1 + 40, f.y0, w - 1, f.y1, black) > 100 * NS);
    free(im.px);
    unlink(path);
    rmdir(dir);
    free(dir);
}

static void test_linear_axis_gaps_and_empty_series_do_not_break_the_plot(void **state) {
    (void)state;
    double x[6] = {0, 1, 2, 3, 4, 5}, y[6];
    for (int k = 0; k < 6; k++) y[k] = tu_uniform(&rng, -2.5, 7.5);
    y[3] = NAN;  // a gap: no segment 2-3 or 3-4
    dt_plot_series s[2] = {{"measured", x, y, 6, DT_PLOT_LINE}, {"empty", NULL, NULL, 0, DT_PLOT_LINE}};
    dt_plot_opts o = {.title = "t", .width = 500, .height = 320};
    char *dir = make_dir(), path[256];
    snprintf(path, sizeof path, "%s/lin.png", dir);
    assert_int_equal(dt_plot(path, &o, s, 2, NULL), 0);
    dt_plot_frame f;
    assert_int_equal(dt_plot_layout(&o, s, 2, &f, NULL), 0);
    rgb_image im = read_png(path);
    unsigned char c[3];
    dt_plot_color(0, c);
    for (int k = 0; k < 6; k++) {
        if (k == 3) continue;
        assert_true(f.ymin <= y[k] && y[k] <= f.ymax);
        int px, py;
        to_pixel(&f, 0, x[k], y[k], &px, &py);
        assert_true(is_color(&im, px, py, c));
    }
    free(im.px);
    unlink(path);
    rmdir(dir);
    free(dir);
}

static void test_bad_path_and_bad_input_fail_with_a_message_and_no_file(void **state) {
    (void)state;
    double x[2] = {8, 16}, y[2] = {1, 2}, xneg[2] = {0, 16};
    dt_plot_series s = {"a", x, y, 2, DT_PLOT_LINE};
    dt_plot_opts o = {.log2_x = 1};
    char *dir = make_dir(), path[256], bad[256];
    snprintf(path, sizeof path, "%s/p.png", dir);
    snprintf(bad, sizeof bad, "%s/missing/p.png", dir);
    dt_error err = {0};
    assert_int_equal(dt_plot(bad, &o, &s, 1, &err), -1);
    assert_int_equal(err.code, DT_EXIT_USAGE);
    assert_non_null(strstr(err.msg, bad));
    dt_plot_series nine[9];
    for (int i = 0; i < 9; i++) nine[i] = s;
    assert_int_equal(dt_plot(path, &o, nine, 9, &err), -1);  // more than 8 series
    assert_int_equal(err.code, DT_EXIT_USAGE);
    dt_plot_series neg = {"neg", xneg, y, 2, DT_PLOT_LINE};
    assert_int_equal(dt_plot(path, &o, &neg, 1, &err), -1);  // x = 0 on a log2 axis
    assert_non_null(strstr(err.msg, "log2"));
    dt_plot_opts tiny = {.width = 100, .height = 100};
    assert_int_equal(dt_plot(path, &tiny, &s, 1, &err), -1);
    assert_non_null(strstr(err.msg, "100x100"));
    dt_plot_series nodata = {"x", NULL, y, 2, DT_PLOT_LINE};
    assert_int_equal(dt_plot(path, &o, &nodata, 1, &err), -1);
    assert_int_equal(count_entries(dir), 0);
    rmdir(dir);
    free(dir);
}

// Throughput on log-log axes (dtsim sweep --plot): the frame's y range is in decades and
// holds the data; a point is drawn where log10 puts it; the three styles differ where
// plot.h says: a line is continuous between two points, dashes leave gaps, markers alone
// leave the middle of the segment blank and are larger.
static void test_log10_axis_and_the_three_styles(void **state) {
    (void)state;
    enum { NP = 6 };
    double x[NP], line[NP], dash[NP], mark[NP];
    double base = pow(10, tu_uniform(&rng, 2, 3));  // 100 .. 1000 images/s on 8 GPUs
    for (int k = 0; k < NP; k++) {
        x[k] = pow(2, 3 + 2 * k);                     // 8 .. 8192
        dash[k] = base * x[k] / 8;                    // ideal scaling: a straight line
        line[k] = dash[k] * (0.8 - 0.06 * k);         // below it, by more and more
        mark[k] = line[k] * 0.5;
    }
    dt_plot_series s[3] = {{"measured", x, line, NP, DT_PLOT_LINE},
                           {"ideal", x, dash, NP, DT_PLOT_DASHED},
                           {"paper", x, mark, NP, DT_PLOT_MARKERS}};
    dt_plot_opts o = {.title = "log-log", .width = 900, .height = 600, .log2_x = 1,
                      .log10_y = 1, .y_from_zero = 1};  // y_from_zero is ignored on log10
    dt_plot_frame f;
    dt_error err = {0};
    assert_int_equal(dt_plot_layout(&o, s, 3, &f, &err), 0);
    assert_true(f.ymin <= log10(mark[0]) && f.ymax >= log10(dash[NP - 1]));
    assert_true(f.ymin == floor(f.ymin) && f.ymax == floor(f.ymax));  // whole decades
    assert_true(f.ymin > 0);                                           // not from zero
    char *dir = make_dir(), path[256];
    snprintf(path, sizeof path, "%s/loglog.png", dir);
    assert_int_equal(dt_plot(path, &o, s, 3, &err), 0);
    rgb_image im = read_png(path);
    unsigned char c[3][3];
    for (int i = 0; i < 3; i++) dt_plot_color(i, c[i]);
    int lit[3] = {0, 0, 0}, total[3] = {0, 0, 0};
    for (int k = 0; k + 1 < NP; k++) {
        int p[3][2], q[3][2];
        const double *y[3] = {line, dash, mark};
        for (int i = 0; i < 3; i++) {
            to_pixel(&f, 1, x[k], log10(y[i][k]), &p[i][0], &p[i][1]);
            to_pixel(&f, 1, x[k + 1], log10(y[i][k + 1]), &q[i][0], &q[i][1]);
        }
        // the points of the line and the markers are drawn where the log mapping says
        assert_true(is_color(&im, p[0][0], p[0][1], c[0]));
        assert_true(is_color(&im, p[2][0], p[2][1], c[2]));
        assert_true(is_color(&im, p[2][0] + 5, p[2][1] + 5, c[2]));  // 13 px, not 7
        // along each segment (its inner 80 %), count the pixels in the series' colour
        for (int i = 0; i < 3; i++)
            for (int t = 10; t <= 90; t++) {
                int px = p[i][0] + (q[i][0] - p[i][0]) * t / 100;
                int py = p[i][1] + (q[i][1] - p[i][1]) * t / 100;
                total[i]++;
                lit[i] += is_color(&im, px, py, c[i]) || is_color(&im, px, py + 1, c[i]) ||
                          is_color(&im, px, py - 1, c[i]);
            }
    }
    assert_int_equal(lit[0], total[0]);                       // a line: continuous
    assert_true(lit[1] > total[1] / 3 && lit[1] < total[1]);  // dashes: gaps
    assert_int_equal(lit[2], 0);                              // markers alone: no line
    free(im.px);
    unlink(path);
    rmdir(dir);
    free(dir);
}
#else
static void test_without_libpng_plot_fails_with_a_message(void **state) {
    (void)state;
    double x[1] = {1}, y[1] = {1};
    dt_plot_series s = {"a", x, y, 1, DT_PLOT_LINE};
    dt_plot_opts o = {0};
    dt_error err = {0};
    assert_int_equal(dt_plot("/tmp/x.png", &o, &s, 1, &err), -1);
    assert_non_null(strstr(err.msg, "libpng"));
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
#ifdef DT_HAVE_PNG
        cmocka_unit_test(test_scaling_plot_draws_every_point_and_segment_in_its_series_colour),
        cmocka_unit_test(test_linear_axis_gaps_and_empty_series_do_not_break_the_plot),
        cmocka_unit_test(test_bad_path_and_bad_input_fail_with_a_message_and_no_file),
        cmocka_unit_test(test_log10_axis_and_the_three_styles),
#else
        cmocka_unit_test(test_without_libpng_plot_fails_with_a_message),
#endif
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
