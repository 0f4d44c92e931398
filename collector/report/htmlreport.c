/*
 * ringside report --html: the page, one self-contained HTML file (inline
 * CSS and SVG, nothing fetched) of merged fuzz results: cases per kernel
 * and class, rates, latency histograms, the failing cases and the
 * timeline of one run.
 */
#include "report/htmlreport.h"
#include "errors.h"
#include "report/html.h"
#include "report/timeline.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#define CASES_MAX       500     /* failing cases listed on the page */

/* Labels, colours and styles */

/* log2 bucket k's lower bound, 2^k microseconds: "1µs" ... "512ms", "1s". */
static void bucket_label(GString *o, int k)
{
    if (k < 10) {
        g_string_append_printf(o, "%u\xc2\xb5s", 1u << k);
    } else if (k < 20) {
        g_string_append_printf(o, "%ums", 1u << (k - 10));
    } else {
        g_string_append_printf(o, "%us", 1u << (k - 20));
    }
}

/* What bucket k holds: the first takes all below 2µs, the last all above. */
static void bucket_range(GString *o, int k)
{
    if (k == 0) {
        g_string_append(o, "under ");
        bucket_label(o, 1);
    } else if (k == RS_LAT_BUCKETS - 1) {
        bucket_label(o, k);
        g_string_append(o, " or more");
    } else {
        bucket_label(o, k);
        g_string_append(o, "\xe2\x80\x93");
        bucket_label(o, k + 1);
    }
}

/* Failure classes, worst first, as rs_class_names[]. */
static const char *const class_colors[RS_N_CLASSES] = {
    "#6d28d9", "#9a3412", "#c2410c", "#dc2626", "#e11d48", "#ea580c",
    "#a16207", "#15803d",
};

static const char page_css[] =
    "*{box-sizing:border-box}"
    "body{margin:0;background:#f4f5f7;color:#1f2430;"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}"
    "main{max-width:1260px;margin:0 auto;padding:20px 24px 40px}"
    "h1{font-size:22px;margin:4px 0 2px}"
    "h2{font-size:16px;margin:0 0 10px}"
    "h3{font-size:14px;margin:14px 0 6px}"
    ".sub{color:#5b6475;margin:0 0 14px}"
    ".card{background:#fff;border:1px solid #dfe3ea;border-radius:8px;"
    "padding:16px 20px;margin:14px 0;overflow-x:auto}"
    "table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
    "th,td{padding:4px 10px;border-bottom:1px solid #eceef2;"
    "text-align:right;vertical-align:top;white-space:nowrap}"
    "th{font-weight:600;color:#4a5263;background:#f3f5f8;font-size:12.5px}"
    ".l{text-align:left}"
    ".z{color:#c2c7d0}"
    ".mono{font-family:ui-monospace,'SF Mono',Menlo,Consolas,monospace;"
    "font-size:12px}"
    ".dim{color:#7a8294}"
    "td.words{white-space:normal;word-break:break-word;color:#4a5263;"
    "padding-top:0}"
    "table.cases tr:first-child td{border-bottom:0;padding-bottom:2px}"
    "table.cases tbody:hover{background:#f8f9fb}"
    ".pill{display:inline-block;min-width:22px;padding:0 7px;"
    "border-radius:10px;color:#fff;font-weight:600;text-align:center}"
    ".err{color:#b91c1c}"
    ".note{color:#5b6475;font-size:12.5px;margin:6px 0 0}"
    ".legend{display:flex;flex-wrap:wrap;gap:6px 16px;font-size:12.5px;"
    "margin:8px 0 4px;color:#3b4252}"
    ".legend span{display:inline-flex;align-items:center;gap:5px}"
    ".legend i{display:inline-block;width:14px;height:10px;"
    "border-radius:2px}"
    ".kv{display:grid;grid-template-columns:max-content 1fr;"
    "gap:2px 14px;font-size:13px;margin:0 0 8px}"
    ".kv dt{color:#5b6475}.kv dd{margin:0}"
    "svg{display:block;width:100%;height:auto}"
    "svg text{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;"
    "fill:#3b4252}"
    ".missing{color:#b91c1c;font-size:12.5px;margin:6px 0 0}";

static void class_cell(GString *o, int klass, guint64 n)
{
    if (!n) {
        g_string_append(o, "<td class=\"z\">0</td>");
    } else if (klass == RS_CLASS_CLEAN) {
        g_string_append_printf(o, "<td>%" G_GUINT64_FORMAT "</td>", n);
    } else {
        g_string_append_printf(o, "<td><span class=\"pill\" style=\""
                               "background:%s\">%" G_GUINT64_FORMAT
                               "</span></td>", class_colors[klass], n);
    }
}

static void kernel_label_html(GString *o, const RsResultKernel *k)
{
    g_autofree char *base = g_path_get_basename(k->path);

    g_string_append(o, "<span title=\"");
    rs_html_esc(o, k->path);
    g_string_append(o, " sha256 ");
    rs_html_esc(o, k->sha);
    g_string_append(o, "\"><b>");
    rs_html_esc(o, k->osrelease ? k->osrelease : "?");
    g_string_append(o, "</b> <span class=\"mono dim\">");
    if (*k->sha) {
        rs_html_esc_len(o, k->sha, MIN(strlen(k->sha), 12));
    } else {
        g_string_append(o, "no sha256");
    }
    g_string_append(o, "</span> <span class=\"mono\">");
    rs_html_esc(o, base);
    g_string_append(o, "</span></span>");
}

/* Cases per kernel and class, in one mode. */
static void class_table(GString *o, const RsFuzzResults *r, gboolean cold)
{
    guint i;
    int c;

    g_string_append(o, "<table><thead><tr><th class=\"l\">kernel</th>");
    for (c = 0; c < RS_N_CLASSES; c++) {
        g_string_append_printf(o, "<th>%s</th>", rs_class_names[c]);
    }
    g_string_append(o, "<th>total</th><th>failing</th></tr></thead><tbody>");
    for (i = 0; i < r->kernels->len; i++) {
        const RsResultKernel *k = r->kernels->pdata[i];
        guint64 total = rs_result_kernel_total(k, cold);

        if (!total) {
            continue;
        }
        g_string_append(o, "<tr><td class=\"l\">");
        kernel_label_html(o, k);
        g_string_append(o, "</td>");
        for (c = 0; c < RS_N_CLASSES; c++) {
            class_cell(o, c, k->classes[cold][c]);
        }
        g_string_append_printf(o, "<td><b>%" G_GUINT64_FORMAT "</b></td>"
                               "<td>%.1f%%</td></tr>", total,
                               100.0 * (total - k->classes[cold][RS_CLASS_CLEAN])
                               / total);
    }
    g_string_append(o, "</tbody></table>");
}

static void rate_cell(GString *o, double cases, double s)
{
    if (cases > 0 && s > 0) {
        g_string_append_printf(o, "<td>%.1f <span class=\"dim\">(%.0f in "
                               "%.1f s)</span></td>", cases * 60 / s, cases,
                               s);
    } else {
        g_string_append(o, "<td class=\"z\">&ndash;</td>");
    }
}

static void rates_table(GString *o, const RsFuzzResults *r)
{
    guint i, j;

    g_string_append(o, "<h3>Rates per input directory</h3><table><thead><tr>"
                    "<th class=\"l\">directory</th><th class=\"l\">shard"
                    "</th><th>seed</th><th class=\"l\">kernel</th>"
                    "<th>jobs</th><th class=\"l\">pace</th>"
                    "<th>cold cases/min</th><th>snapshot cases/min</th>"
                    "<th>speed-up</th><th>snapshot save</th>"
                    "<th>cases merged</th></tr></thead><tbody>");
    for (i = 0; i < r->dirs->len; i++) {
        const RsResultDir *d = r->dirs->pdata[i];
        g_autofree char *kbase = d->kernel ? g_path_get_basename(d->kernel)
                                           : NULL;
        gboolean again = FALSE;

        for (j = 0; j < i && d->real; j++) {
            const RsResultDir *e = r->dirs->pdata[j];

            again |= e->real && g_str_equal(e->real, d->real);
        }
        g_string_append(o, "<tr><td class=\"l mono\">");
        rs_html_esc(o, d->path);
        if (again) {
            g_string_append(o, " <span class=\"dim\">(again)</span>");
        }
        g_string_append(o, "</td>");
        if (!d->has_fuzz) {
            g_string_append(o, "<td class=\"l dim\" colspan=\"9\">no "
                            "fuzz.json (the run did not finish)</td>");
        } else {
            g_string_append(o, "<td class=\"l\">");
            rs_html_esc(o, d->shard ? d->shard : "?");
            g_string_append_printf(o, "</td><td>%" G_GINT64_FORMAT "</td>"
                                   "<td class=\"l mono\">", d->seed);
            rs_html_esc(o, kbase ? kbase : "?");
            g_string_append_printf(o, "</td><td>%" G_GINT64_FORMAT "</td>"
                                   "<td class=\"l\">", d->jobs);
            rs_html_esc(o, d->pace ? d->pace : "?");
            g_string_append(o, "</td>");
            rate_cell(o, d->cold_cases, d->cold_s);
            rate_cell(o, d->snap_cases, d->snap_s);
            if (d->cold_cases > 0 && d->cold_s > 0 && d->snap_cases > 0 &&
                d->snap_s > 0) {
                g_string_append_printf(o, "<td>%.1f&times;</td>",
                                       (d->snap_cases / d->snap_s) /
                                       (d->cold_cases / d->cold_s));
            } else {
                g_string_append(o, "<td class=\"z\">&ndash;</td>");
            }
            if (d->save_s >= 0) {
                g_string_append_printf(o, "<td>%.1f s</td>", d->save_s);
            } else {
                g_string_append(o, "<td class=\"z\">&ndash;</td>");
            }
        }
        g_string_append_printf(o, "<td>%" G_GUINT64_FORMAT, d->cases);
        if (d->duplicates) {
            g_string_append_printf(o, " <span class=\"dim\">+%"
                                   G_GUINT64_FORMAT " duplicate</span>",
                                   d->duplicates);
        }
        g_string_append(o, "</td></tr>");
    }
    g_string_append(o, "</tbody></table>");
}

static void summary_section(GString *o, const RsFuzzResults *r)
{
    g_string_append(o, "<section class=\"card\"><h2>Cases by kernel and "
                    "failure class</h2>");
    if (!r->total[0] && !r->total[1]) {
        g_string_append(o, "<p class=\"dim\">No cases.</p>");
    }
    if (r->total[0]) {
        g_string_append(o, "<h3>From snapshots</h3>");
        class_table(o, r, FALSE);
    }
    if (r->total[1]) {
        g_string_append(o, "<h3>Booted cold <span class=\"dim\">(the first "
                        "scenarios again, to measure what the snapshot "
                        "buys)</span></h3>");
        class_table(o, r, TRUE);
    }
    rates_table(o, r);
    g_string_append(o, "</section>");
}

/* Rate over time, and where a resident case's wall time goes */

#define RT_W    1200
#define RT_H    200
#define RT_L    62
#define RT_R    14
#define RT_T    16
#define RT_B    40

static int cmp_i64(gconstpointer a, gconstpointer b)
{
    gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;

    return x < y ? -1 : x > y;
}

static int cmp_dbl(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/*
 * Cases a minute over the run, in bins of a twentieth of it (10 s at
 * least), from when its first case ended: a polyline per mode.
 */
static void rate_svg(GString *o, const RsResultDir *d)
{
    static const char *const colour[2] = { "#2b6cb0", "#a0aec0" };
    gint64 t0 = G_MAXINT64, t1 = 0, bin;
    double peak = 1;
    guint nb, b, i;
    int cold;
    g_autofree guint *count[2] = { NULL, NULL };

    for (cold = 0; cold < 2; cold++) {
        for (i = 0; d->ends[cold] && i < d->ends[cold]->len; i++) {
            gint64 t = g_array_index(d->ends[cold], gint64, i);

            t0 = MIN(t0, t);
            t1 = MAX(t1, t);
        }
    }
    if (t1 <= t0) {
        return;
    }
    bin = MAX(10000, (t1 - t0) / 20);
    nb = (t1 - t0) / bin + 1;
    for (cold = 0; cold < 2; cold++) {
        count[cold] = g_new0(guint, nb);
        for (i = 0; d->ends[cold] && i < d->ends[cold]->len; i++) {
            b = (g_array_index(d->ends[cold], gint64, i) - t0) / bin;
            count[cold][b]++;
            peak = MAX(peak, count[cold][b] * 60000.0 / bin);
        }
    }
    g_string_append_printf(o, "<svg viewBox=\"0 0 %d %d\" class=\"chart\" "
                           "role=\"img\" aria-label=\"cases per minute over "
                           "the run\">", RT_W, RT_H);
    g_string_append_printf(o, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
                           "y2=\"%d\" stroke=\"#718096\"/>", RT_L,
                           RT_H - RT_B, RT_W - RT_R, RT_H - RT_B);
    g_string_append_printf(o, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" "
                           "font-size=\"11\">%.0f/min</text>", RT_L - 4,
                           RT_T + 4, peak);
    g_string_append_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11\">"
                           "0 s</text><text x=\"%d\" y=\"%d\" "
                           "text-anchor=\"end\" font-size=\"11\">%.0f s "
                           "(bins of %.0f s)</text>", RT_L, RT_H - RT_B + 16,
                           RT_W - RT_R, RT_H - RT_B + 16,
                           (t1 - t0) / 1e3, bin / 1e3);
    for (cold = 1; cold >= 0; cold--) {
        if (!d->ends[cold] || !d->ends[cold]->len) {
            continue;
        }
        g_string_append_printf(o, "<polyline fill=\"none\" stroke=\"%s\" "
                               "stroke-width=\"2\" points=\"", colour[cold]);
        for (b = 0; b < nb; b++) {
            double x = RT_L + (RT_W - RT_L - RT_R) *
                       (nb > 1 ? (double)b / (nb - 1) : 0.5);
            double y = RT_H - RT_B - (RT_H - RT_B - RT_T) *
                       (count[cold][b] * 60000.0 / bin) / peak;

            g_string_append_printf(o, "%.1f,%.1f ", x, y);
        }
        g_string_append_printf(o, "\"><title>%s cases/min</title>"
                               "</polyline>", cold ? "cold" : "snapshot");
    }
    g_string_append(o, "</svg>");
}

static double ovh_quantile(GArray *a, gsize off, double q)
{
    g_autoptr(GArray) v = g_array_new(FALSE, FALSE, sizeof(double));
    guint i;

    for (i = 0; i < a->len; i++) {
        double x = *(double *)((char *)&g_array_index(a, RsResultOverhead,
                                                      i) + off);

        g_array_append_val(v, x);
    }
    g_array_sort(v, cmp_dbl);
    return v->len ? g_array_index(v, double, (guint)(q * (v->len - 1) +
                                                     0.5)) : 0;
}

static void overhead_table(GString *o, const RsResultDir *d)
{
    static const struct {
        const char *name, *what;
        gsize off;
    } parts[] = {
        { "reset", "RAM put back, loadvm",
          G_STRUCT_OFFSET(RsResultOverhead, reset) },
        { "of which RAM", "pages that differ from the snapshot's",
          G_STRUCT_OFFSET(RsResultOverhead, ram) },
        { "feed + cont", "the scenario written, the guest continued",
          G_STRUCT_OFFSET(RsResultOverhead, feed) },
        { "collect", "the device's closing events, the output split",
          G_STRUCT_OFFSET(RsResultOverhead, collect) },
        { "judge", "the case's verdicts and class",
          G_STRUCT_OFFSET(RsResultOverhead, judge) },
        { "total overhead", "wall time minus the guest's",
          G_STRUCT_OFFSET(RsResultOverhead, total) },
        { "guest", "the case itself, cont to its reset",
          G_STRUCT_OFFSET(RsResultOverhead, guest) },
    };
    guint i;

    g_string_append_printf(o, "<table><thead><tr><th class=\"l\">part</th>"
                           "<th class=\"l\">what</th><th>median ms</th>"
                           "<th>p90 ms</th><th>max ms</th></tr></thead>"
                           "<tbody>");
    for (i = 0; i < G_N_ELEMENTS(parts); i++) {
        g_string_append_printf(o, "<tr><td class=\"l\">%s</td><td class=\"l "
                               "dim\">%s</td><td>%.1f</td><td>%.1f</td>"
                               "<td>%.1f</td></tr>", parts[i].name,
                               parts[i].what,
                               ovh_quantile(d->overhead, parts[i].off, 0.5),
                               ovh_quantile(d->overhead, parts[i].off, 0.9),
                               ovh_quantile(d->overhead, parts[i].off, 1));
    }
    g_string_append_printf(o, "</tbody></table><p class=\"dim\">%u resident "
                           "cases.</p>", d->overhead->len);
}

static void speed_section(GString *o, const RsFuzzResults *r)
{
    guint i, shown = 0;

    for (i = 0; i < r->dirs->len; i++) {
        const RsResultDir *d = r->dirs->pdata[i];

        if ((!d->ends[0] || d->ends[0]->len < 2) && !d->overhead) {
            continue;
        }
        if (!shown++) {
            g_string_append(o, "<section class=\"card\"><h2>Speed: the rate "
                            "over time and where a case's time goes</h2>"
                            "<p class=\"dim\">Cases a minute as they ended "
                            "(blue: from snapshots, grey: booted cold); for "
                            "resident runs (one QEMU per job and vCPU count, "
                            "reset by loadvm), each case's wall time split "
                            "into the harness's parts and the guest's own "
                            "run.</p>");
        }
        g_string_append(o, "<h3 class=\"mono\">");
        rs_html_esc(o, d->path);
        g_string_append(o, "</h3>");
        if (d->ends[0]) {
            g_array_sort(d->ends[0], cmp_i64);
        }
        if (d->ends[1]) {
            g_array_sort(d->ends[1], cmp_i64);
        }
        rate_svg(o, d);
        if (d->overhead) {
            overhead_table(o, d);
        }
    }
    if (shown) {
        g_string_append(o, "</section>");
    }
}

/* Latency histograms */

#define HG_W    1200
#define HG_H    250
#define HG_L    62
#define HG_R    14
#define HG_T    22
#define HG_B    44

/* The bucket holding the @q-quantile of @n counts. */
static int hist_quantile(const guint64 *h, guint64 n, double q)
{
    guint64 sum = 0;
    int k;

    for (k = 0; k < RS_LAT_BUCKETS; k++) {
        sum += h[k];
        if (sum >= q * n) {
            return k;
        }
    }
    return RS_LAT_BUCKETS - 1;
}

static void histogram_svg(GString *o, const guint64 *h)
{
    double slot = (HG_W - HG_L - HG_R) / (double)RS_LAT_BUCKETS;
    double ph = HG_H - HG_T - HG_B, step, y;
    guint64 max = 1;
    int k;

    for (k = 0; k < RS_LAT_BUCKETS; k++) {
        max = MAX(max, h[k]);
    }
    step = rs_html_nice_step(max, 5);
    if (step < 1) {
        step = 1;
    }
    while (step * 5 < max) {
        step *= 2;
    }
    /* The axis tops at the first whole step at or above the highest bar. */
    max = ((guint64)(max / step) + ((guint64)(max / step) * step < max))
          * step;

    g_string_append_printf(o, "<svg class=\"hist\" viewBox=\"0 0 %d %d\" "
                           "role=\"img\" aria-label=\"latency histogram\">",
                           HG_W, HG_H);
    for (y = 0; y <= max + 0.5; y += step) {
        double py = HG_T + ph - y * ph / max;

        g_string_append_printf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" "
                               "y2=\"%.1f\" stroke=\"%s\"/>"
                               "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" "
                               "text-anchor=\"end\">%.0f</text>",
                               HG_L, HG_W - HG_R, py, py,
                               y ? "#eceef2" : "#9aa3b2", HG_L - 6, py + 4, y);
    }
    for (k = 0; k < RS_LAT_BUCKETS; k++) {
        double x = HG_L + k * slot, bh = h[k] * ph / max;

        if (h[k]) {
            g_string_append_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" "
                                   "width=\"%.1f\" height=\"%.1f\" rx=\"2\" "
                                   "fill=\"#4c7bd9\"><title>",
                                   x + slot * 0.14, HG_T + ph - bh,
                                   slot * 0.72, MAX(bh, 1.0));
            bucket_range(o, k);
            g_string_append_printf(o, ": %" G_GUINT64_FORMAT " lines</title>"
                                   "</rect><text x=\"%.1f\" y=\"%.1f\" "
                                   "font-size=\"10.5\" text-anchor=\"middle\">"
                                   "%" G_GUINT64_FORMAT "</text>", h[k],
                                   x + slot / 2, HG_T + ph - bh - 4, h[k]);
        }
        g_string_append_printf(o, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" "
                               "text-anchor=\"middle\">", x + slot / 2,
                               HG_H - HG_B + 16);
        bucket_label(o, k);
        g_string_append(o, "</text>");
    }
    g_string_append_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11.5\" "
                           "text-anchor=\"middle\">ok-line wire latency: "
                           "log2 buckets, labelled by their lower bound"
                           "</text><text x=\"14\" y=\"%d\" font-size=\"11.5\" "
                           "transform=\"rotate(-90 14 %d)\" "
                           "text-anchor=\"middle\">lines</text></svg>",
                           HG_L + (HG_W - HG_L - HG_R) / 2, HG_H - 6,
                           HG_T + (int)ph / 2, HG_T + (int)ph / 2);
}

static void histogram_section(GString *o, const RsFuzzResults *r)
{
    guint i;

    g_string_append(o, "<section class=\"card\"><h2>Wire latency of ok "
                    "lines</h2><p class=\"note\">Per kernel, all cases "
                    "summed: the device's measure of each ok line's "
                    "latency, from its record's printk time stamp to its "
                    "last byte on the wire.</p>");
    for (i = 0; i < r->kernels->len; i++) {
        const RsResultKernel *k = r->kernels->pdata[i];
        guint64 n = 0;
        int b;

        for (b = 0; b < RS_LAT_BUCKETS; b++) {
            n += k->lat[b];
        }
        g_string_append(o, "<h3>");
        kernel_label_html(o, k);
        g_string_append_printf(o, " <span class=\"dim\">&middot; %"
                               G_GUINT64_FORMAT " lines from %"
                               G_GUINT64_FORMAT " cases", n,
                               rs_result_kernel_total(k, FALSE) +
                               rs_result_kernel_total(k, TRUE));
        if (n) {
            int p50 = hist_quantile(k->lat, n, 0.5);
            int p99 = hist_quantile(k->lat, n, 0.99);

            g_string_append(o, " &middot; median ");
            bucket_range(o, p50);
            g_string_append(o, ", p99 ");
            bucket_range(o, p99);
        }
        g_string_append(o, "</span></h3>");
        if (n) {
            histogram_svg(o, k->lat);
        } else {
            g_string_append(o, "<p class=\"dim\">No latency measured.</p>");
        }
    }
    if (!r->kernels->len) {
        g_string_append(o, "<p class=\"dim\">No cases.</p>");
    }
    g_string_append(o, "</section>");
}

/* Failing cases */

static gint case_order(gconstpointer a, gconstpointer b)
{
    const RsResultCase *x = *(RsResultCase *const *)a;
    const RsResultCase *y = *(RsResultCase *const *)b;

    if (x->klass != y->klass) {
        return x->klass - y->klass;
    }
    if (x->cold != y->cold) {
        return x->cold - y->cold;
    }
    if (x->kernel != y->kernel) {
        return x->kernel < y->kernel ? -1 : 1;
    }
    if (x->dir != y->dir) {
        return x->dir < y->dir ? -1 : 1;
    }
    return x->index < y->index ? -1 : x->index > y->index;
}

static void failing_section(GString *o, const RsFuzzResults *r)
{
    guint i, shown = 0;
    guint64 failing = r->failing[0] + r->failing[1];

    g_string_append_printf(o, "<section class=\"card\"><h2>Failing cases "
                           "<span class=\"dim\">(%" G_GUINT64_FORMAT
                           ")</span></h2>", failing);
    if (!failing) {
        g_string_append(o, "<p class=\"dim\">None: every case was clean."
                        "</p></section>");
        return;
    }
    g_string_append(o, "<table class=\"cases\"><thead><tr>"
                    "<th class=\"l\">class</th><th class=\"l\">mode</th>"
                    "<th class=\"l\">kernel</th><th>smp</th>"
                    "<th class=\"l\">test</th><th class=\"l\">case file"
                    "</th></tr></thead>");
    for (i = 0; i < r->cases->len && shown < CASES_MAX; i++) {
        const RsResultCase *c = r->cases->pdata[i];
        const RsResultDir *d = r->dirs->pdata[c->dir];

        if (c->klass == RS_CLASS_CLEAN) {
            continue;
        }
        shown++;
        /* One body per case: its facts, then its scenario underneath. */
        g_string_append_printf(o, "<tbody><tr><td class=\"l\"><span "
                               "class=\"pill\" style=\"background:%s\">%s"
                               "</span></td><td class=\"l\">%s</td>"
                               "<td class=\"l\">", class_colors[c->klass],
                               rs_class_names[c->klass],
                               c->cold ? "cold" : "snapshot");
        kernel_label_html(o, r->kernels->pdata[c->kernel]);
        g_string_append_printf(o, "</td><td>%" G_GINT64_FORMAT "</td>"
                               "<td class=\"l\">", c->smp);
        rs_html_esc(o, c->test);
        g_string_append(o, "</td><td class=\"l mono\">");
        if (c->case_file) {
            g_string_append(o, "<span class=\"dim\">");
            rs_html_esc(o, d->path);
            g_string_append(o, "/</span>");
            rs_html_esc(o, c->case_file);
        } else {
            g_string_append_printf(o, "<span class=\"dim\">none (%s)</span>",
                                   c->cold ? "cold runs save none" :
                                   "not saved");
        }
        g_string_append(o, "</td></tr><tr class=\"sc\"><td></td>"
                        "<td class=\"l mono words\" colspan=\"5\">");
        rs_html_esc(o, c->words);
        if (c->error) {
            g_string_append(o, "<div class=\"err\">");
            rs_html_esc(o, c->error);
            g_string_append(o, "</div>");
        }
        g_string_append(o, "</td></tr></tbody>");
    }
    g_string_append(o, "</table>");
    if (failing > shown) {
        g_string_append_printf(o, "<p class=\"note\">and %" G_GUINT64_FORMAT
                               " more, not listed.</p>", failing - shown);
    }
    g_string_append(o, "</section>");
}

/* The timeline of one run */

static void timeline_header(GString *o, const RsFuzzResults *r,
                            const char *rundir, const RsResultCase *c,
                            const RsTimeline *tl)
{
    g_string_append(o, "<dl class=\"kv\"><dt>run</dt><dd class=\"mono\">");
    rs_html_esc(o, rundir);
    g_string_append(o, "</dd>");
    if (c) {
        g_string_append_printf(o, "<dt>case</dt><dd><span class=\"pill\" "
                               "style=\"background:%s\">%s</span> %s case %"
                               G_GUINT64_FORMAT ", ended ",
                               class_colors[c->klass],
                               rs_class_names[c->klass],
                               c->cold ? "cold" : "snapshot", c->index);
        rs_html_esc(o, c->ended ? c->ended : "?");
        if (!c->panic_line) {
            g_string_append(o, " <span class=\"err\">(the panic line never "
                            "reached the wire)</span>");
        }
        g_string_append_printf(o, ", %" G_GINT64_FORMAT " vCPU%s, ", c->smp,
                               c->smp == 1 ? "" : "s");
        kernel_label_html(o, r->kernels->pdata[c->kernel]);
        g_string_append(o, "</dd><dt>scenario</dt><dd class=\"mono\">");
        rs_html_esc(o, c->words);
        g_string_append(o, "</dd>");
    }
    rs_timeline_facts_html(o, tl);
    g_string_append(o, "</dl>");
}

static gboolean timeline_section(GString *o, const RsFuzzResults *r,
                                 const char *chosen, GError **error)
{
    g_autoptr(RsTimeline) tl = NULL;
    g_autofree char *rundir = NULL;
    const RsResultCase *c = NULL;
    guint pass, i;

    g_string_append(o, "<section class=\"card\"><h2>Timeline of one run"
                    "</h2>");
    if (chosen) {
        c = rs_fuzz_results_case_of_run(r, chosen);
        tl = rs_timeline_load(chosen, c ? c->smp : 1, error);
        if (!tl) {
            return FALSE;
        }
        rundir = g_strdup(chosen);
    }
    /* The first failing case kept, else any kept run. */
    for (pass = 0; pass < 2 && !tl; pass++) {
        for (i = 0; i < r->cases->len && !tl; i++) {
            g_autoptr(GError) local = NULL;

            c = r->cases->pdata[i];
            if ((c->klass == RS_CLASS_CLEAN) == !pass) {
                continue;
            }
            g_free(rundir);
            rundir = rs_fuzz_results_run_dir(r, c);
            if (!rundir) {
                continue;
            }
            tl = rs_timeline_load(rundir, c->smp, &local);
            if (!tl) {
                g_printerr("ringside report: timeline: %s\n",
                           local->message);
            }
        }
    }
    if (!tl) {
        g_string_append(o, "<p class=\"dim\">No run directory was kept to "
                        "draw.</p></section>");
        return TRUE;
    }
    timeline_header(o, r, rundir, c, tl);
    rs_timeline_html(o, tl);
    g_string_append(o, "</section>");
    return TRUE;
}

/* A page cut short is removed; a device or pipe is left alone. */
static gboolean write_page(const char *path, const GString *page,
                           GError **error)
{
    FILE *f = fopen(path, "w");
    GStatBuf st;
    gboolean regular;
    int err;

    if (!f) {
        err = errno;
        goto fail;
    }
    regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    if (fwrite(page->str, 1, page->len, f) != page->len || fflush(f)) {
        err = errno;
        fclose(f);
        goto fail_written;
    }
    if (fclose(f)) {
        err = errno;
        goto fail_written;
    }
    return TRUE;
fail_written:
    if (regular) {
        g_unlink(path);
    }
fail:
    g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "%s: %s", path,
                g_strerror(err));
    return FALSE;
}

gboolean rs_html_report_write(RsFuzzResults *r, const char *path,
                              const char *timeline, GError **error)
{
    g_autoptr(GString) o = g_string_sized_new(64 * 1024);
    g_autoptr(GDateTime) now = g_date_time_new_now_local();
    g_autofree char *when = g_date_time_format(now, "%Y-%m-%d %H:%M");
    guint64 total = r->total[0] + r->total[1];
    guint i;

    g_ptr_array_sort(r->cases, case_order);
    g_string_append_printf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
                           "<meta charset=\"utf-8\"><meta name=\"viewport\" "
                           "content=\"width=device-width,initial-scale=1\">"
                           "<title>ringside fuzz report</title><style>%s"
                           "</style></head><body><main>"
                           "<h1>ringside fuzz report</h1><p class=\"sub\">%"
                           G_GUINT64_FORMAT " cases (%" G_GUINT64_FORMAT
                           " failing) on %u kernel%s from ", page_css, total,
                           r->failing[0] + r->failing[1], r->kernels->len,
                           r->kernels->len == 1 ? "" : "s");
    for (i = 0; i < r->dirs->len; i++) {
        g_string_append(o, i ? ", <span class=\"mono\">" :
                               "<span class=\"mono\">");
        rs_html_esc(o, ((RsResultDir *)r->dirs->pdata[i])->path);
        g_string_append(o, "</span>");
    }
    g_string_append(o, " &middot; generated ");
    rs_html_esc(o, when);
    g_string_append(o, "</p>");

    summary_section(o, r);
    speed_section(o, r);
    histogram_section(o, r);
    failing_section(o, r);
    if (!timeline_section(o, r, timeline, error)) {
        return FALSE;
    }
    g_string_append(o, "</main></body></html>\n");
    return write_page(path, o, error);
}
