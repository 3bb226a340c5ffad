// dtsim_plan_plot.c — `dtsim plan --plot FILE.png`: the ranked candidates on one chart a
// buyer can show: time-to-train across, cost-to-train up, each with its error band (the
// cross through it), the SimGrid confirmations beside the analytic figures, the deadline and
// the budget as dashed lines. Drawn with sim/plot.h (markers, dashed segments; a gap between
// bars is a non-finite point).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dtsim_plan.h"
#include "plot.h"

int plan_plot(const plan_opts *p, const plan_row *rows, int n) {
    int shown = n < p->top ? n : p->top;
    size_t m = (size_t)shown;
    double *ax = calloc(m, sizeof *ax), *ay = calloc(m, sizeof *ay);
    double *cx = calloc(m, sizeof *cx), *cy = calloc(m, sizeof *cy);
    double *bx = calloc(6 * m, sizeof *bx), *by = calloc(6 * m, sizeof *by);
    if (!ax || !ay || !cx || !cy || !bx || !by) {
        free(ax), free(ay), free(cx), free(cy), free(bx), free(by);
        return fprintf(stderr, "dtsim plan: --plot: out of memory\n"), 1;
    }
    int nc = 0, nb = 0;
    double tmin = INFINITY, tmax = 0, cmin = INFINITY, cmax = 0;
    for (int i = 0; i < shown; i++) {
        const plan_row *r = &rows[i];
        double t = r->time_s / 3600, c = r->cost, l = r->a.band_lo, h = r->a.band_hi;
        ax[i] = t, ay[i] = c;
        if (r->confirmed > 0) cx[nc] = r->sim_time_s / 3600, cy[nc++] = r->sim_cost;
        // the band: a horizontal bar, a gap, a vertical bar, a gap
        bx[nb] = t * (1 + l), by[nb++] = c;
        bx[nb] = t * (1 + h), by[nb++] = c;
        bx[nb] = t, by[nb++] = NAN;
        bx[nb] = t, by[nb++] = c * (1 + l);
        bx[nb] = t, by[nb++] = c * (1 + h);
        bx[nb] = t, by[nb++] = NAN;
        tmin = fmin(tmin, t * (1 + l)), tmax = fmax(tmax, t * (1 + h));
        cmin = fmin(cmin, c * (1 + l)), cmax = fmax(cmax, c * (1 + h));
    }
    double dx[2] = {p->deadline_h, p->deadline_h}, dy[2] = {cmin, cmax};
    double ux[2] = {fmin(tmin, p->deadline_h > 0 ? p->deadline_h : tmin), fmax(tmax, p->deadline_h)};
    double uy[2] = {p->budget, p->budget};
    dt_plot_series s[5];
    int ns = 0;
    s[ns++] = (dt_plot_series){"analytic (ranked)", ax, ay, shown, DT_PLOT_MARKERS};
    s[ns++] = (dt_plot_series){"SimGrid (confirmed)", cx, cy, nc, DT_PLOT_MARKERS};
    s[ns++] = (dt_plot_series){"error band", bx, by, nb, DT_PLOT_DASHED};
    if (p->deadline_h > 0) s[ns++] = (dt_plot_series){"deadline", dx, dy, 2, DT_PLOT_DASHED};
    if (p->budget > 0) s[ns++] = (dt_plot_series){"budget", ux, uy, 2, DT_PLOT_DASHED};
    char title[96];
    snprintf(title, sizeof title, "dtsim plan: %s, the top %d candidates", p->model, shown);
    dt_plot_opts o = {title, "time-to-train, hours", "cost-to-train, USD", 0, 0, 0, 0, 0};
    dt_error err;
    int rc = dt_plot(p->plot, &o, s, ns, &err);
    if (rc) fprintf(stderr, "dtsim plan: --plot: %s\n", err.msg);
    free(ax), free(ay), free(cx), free(cy), free(bx), free(by);
    return rc ? 1 : 0;
}
