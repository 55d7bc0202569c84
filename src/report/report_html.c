/* report_html.c -- the journal as one self-contained HTML page: heatmap, charts, and each cell's story. */
#include "report/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/metrics.h"
#include "text/objective.h"
#include "text/secrets.h"
#include "text/text.h"

/* What one page shows of text a server, a log or a user can grow. The journal keeps the
 * whole text; the page says where it cut. */
#define HTML_MAX_OUTPUT_CHARS 16384        /* a check's output or reasoning */
#define HTML_MAX_EVIDENCE_CHARS 4000       /* a cell's or a check's evidence */
#define HTML_MAX_SHORT_CHARS 160           /* evidence in summaries, tables and tooltips */
#define HTML_MAX_LABEL_CHARS 48            /* a configuration's label in a chart */
#define HTML_MAX_MATRIX_CHARS 262144       /* the matrix file's text */
#define HTML_MAX_BARS 40                   /* bars in the chart; the rest are named as a count */
#define HTML_MAX_SERIES 4                  /* configurations in the latency chart */
#define HTML_MAX_LEVELS 16                 /* concurrency levels on its x axis */
#define HTML_MAX_GROUP_LINKS 8             /* cells named per failure cause */
#define HTML_MAX_EVAL_ROWS 40              /* cells in the accuracy chart */
#define HTML_MAX_EVAL_MISSES 50            /* a cell's wrong eval answers listed */

/* A log excerpt's line: its first characters (report.h keeps REPORT_LOG_LINE_KEEP bytes). */
#define HTML_LOG_LINE_CHARS 400

/* The one script: expands every section before printing. The page works without it; the
 * Content-Security-Policy lets exactly this text run (its SHA-256 below) and nothing else,
 * so even a bug in escaping could not run a script that came from a server. */
#define PRINT_SCRIPT \
        "addEventListener(\"beforeprint\",function(){document.querySelectorAll(\"details\").forEach(function(d){d.open=true})})"
#define PRINT_SCRIPT_SHA256 "IS6I6+iefQgnm32GXfUoNGLaPMRVmbglcZcgjBP8QPM="

/* ---- the page writer ---- */

/* Hundreds of small appends: the first error sticks and every later write is a no-op, so
 * the code reads as the page it writes and report_html() checks once at the end. */
struct page {
        struct buf *out;
        int r;
        /* Secret values of the view's argv and env (secrets.h decides which): every string
         * written is masked with them before it is escaped, so a key that a log, a matrix
         * file or an answer repeats is hidden there too. */
        struct secrets_values secrets;
};

/* What secrets_mask_* hide in the view's cells. */
static int secrets_collect(struct page *p, const struct report_view *v) {
        /* a view report_view_mask_secrets went over says what it hid */
        for (size_t i = 0; i < v->secrets.n; i++) {
                int r = secrets_values_add_text(&p->secrets, v->secrets.v[i]);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                int r;
                if ((r = secrets_values_add_argv(&p->secrets, c->argv)) < 0 ||
                    (r = secrets_values_add_argv(&p->secrets, c->command)) < 0 ||
                    (r = secrets_values_add_env(&p->secrets, c->env)) < 0)
                        return r;
        }
        return 0;
}

static void put(struct page *p, const char *s) {
        if (p->r >= 0) {
                int r = buf_puts(p->out, s);
                if (r < 0)
                        p->r = r;
        }
}

static void putf(struct page *p, const char *fmt, ...) _printf_(2, 3);
static void putf(struct page *p, const char *fmt, ...) {
        va_list ap;
        if (p->r < 0)
                return;
        va_start(ap, fmt);
        int r = buf_vprintf(p->out, fmt, ap);
        va_end(ap);
        if (r < 0)
                p->r = r;
}

/* Every string that is not a constant of this file goes through here. */
static void escn(struct page *p, const char *s, size_t max_chars) {
        if (p->r < 0 || !s)
                return;
        int r;
        _cleanup_free_ char *masked = secrets_values_mask(&p->secrets, s, &r);
        if (r >= 0)
                r = text_escape_html(p->out, masked ? masked : s, max_chars);
        if (r < 0)
                p->r = r;
}

static void esc(struct page *p, const char *s) {
        escn(p, s, 0);
}

static void fail(struct page *p, int r) {
        if (p->r >= 0)
                p->r = r;
}

/* ---- what the page says about cells ---- */

/* A CSS class per verdict: constants, safe in attributes. */
static const char *verdict_class(const struct report_cell *c) {
        if (c->excluded)
                return "v-skipped";
        if (!c->has_attempt)
                return "v-notrun";
        switch (c->verdict) {
        case VERDICT_PASS:
                return "v-pass";
        case VERDICT_GARBAGE:
                return "v-garbage";
        case VERDICT_WRONG:
                return "v-wrong";
        case VERDICT_CRASH:
                return "v-crash";
        case VERDICT_TIMEOUT:
                return "v-timeout";
        case VERDICT_OVERLOAD:
                return "v-overload";
        case VERDICT_SKIPPED:
                return "v-skipped";
        default:
                return "v-error";
        }
}

static const char *check_class(enum verdict v) {
        static const char *const names[_VERDICT_MAX] = {
                [VERDICT_PASS] = "v-pass",       [VERDICT_GARBAGE] = "v-garbage", [VERDICT_WRONG] = "v-wrong",
                [VERDICT_CRASH] = "v-crash",     [VERDICT_TIMEOUT] = "v-timeout", [VERDICT_SKIPPED] = "v-skipped",
                [VERDICT_ERROR] = "v-error",     [VERDICT_OVERLOAD] = "v-overload",
        };
        return v >= 0 && v < _VERDICT_MAX ? names[v] : "v-error";
}

static const char *verdict_meaning(const char *cls) {
        static const struct {
                const char *cls, *label, *meaning;
        } table[] = {
                {"v-pass", "pass", "answered every check correctly"},
                {"v-garbage", "garbage", "output that is not language: repeats, junk, broken stream"},
                {"v-wrong", "wrong", "fluent, but the answer is wrong"},
                {"v-crash", "crash", "the server died"},
                {"v-timeout", "timeout", "not ready in time, or a request hung"},
                {"v-overload", "overload", "answered alone, but its benchmark requests failed"},
                {"v-error", "error", "gauntlet could not do its part"},
                {"v-skipped", "skipped", "excluded by the matrix"},
                {"v-notrun", "not run", "not reached yet (sweep interrupted)"},
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (strcmp(table[i].cls, cls) == 0)
                        return table[i].meaning;
        return "";
}

static bool cell_failed(const struct report_cell *c) {
        return !c->excluded && c->has_attempt && c->verdict != VERDICT_PASS && c->verdict != VERDICT_SKIPPED;
}

/* "moe=a gemm=b", "(base)" without axes; raw text, escaped where it is written. */
static char *cell_label(const struct report_view *v, const struct report_cell *c) {
        struct buf b;
        int r = 0;
        buf_init(&b, 0);
        for (size_t i = 0; i < v->n_axes && r >= 0; i++)
                r = buf_printf(&b, "%s%s=%s", i ? " " : "", v->axes[i] ? v->axes[i] : "?",
                               c->axis_values && c->axis_values[i] ? c->axis_values[i] : "?");
        if (r >= 0 && v->n_axes == 0)
                r = buf_puts(&b, "(base)");
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}

static void put_label(struct page *p, const struct report_view *v, const struct report_cell *c, size_t max) {
        _cleanup_free_ char *l = cell_label(v, c);
        if (!l)
                return fail(p, -ENOMEM);
        escn(p, l, max);
}

static void put_badge(struct page *p, const char *cls, const char *word) {
        putf(p, "<span class=\"badge %s\">", cls);
        esc(p, word);
        put(p, "</span>");
}

/* A link to a cell's section: ids are hex, escaped all the same. */
static void put_cell_href(struct page *p, const struct report_cell *c) {
        put(p, "href=\"#c-");
        esc(p, c->id);
        put(p, "\"");
}

/* The id cut to width (report_id_width: the shortest prefix that tells the cells apart). */
static void put_short_id(struct page *p, size_t width, const struct report_cell *c) {
        char id[sizeof(c->id)] = {0};
        memcpy(id, c->id, MIN(strlen(c->id), width));
        put(p, "<code class=\"id\">");
        esc(p, id);
        put(p, "</code>");
}

/* Seconds for people: "850 ms", "4.20 s", "3m07s". */
static void put_duration(struct page *p, usec_t u) {
        if (u < USEC_PER_SEC)
                putf(p, "%.0f ms", (double)u / (double)USEC_PER_MSEC);
        else if (u < 60 * USEC_PER_SEC)
                putf(p, "%.2f s", (double)u / (double)USEC_PER_SEC);
        else {
                unsigned long long s = (unsigned long long)(u / USEC_PER_SEC);
                if (s < 3600)
                        putf(p, "%llum%02llus", s / 60, s % 60);
                else
                        putf(p, "%lluh%02llum", s / 3600, (s / 60) % 60);
        }
}

static void put_wall(struct page *p, usec_t wall) {
        time_t t = (time_t)(wall / USEC_PER_SEC);
        struct tm tm;
        char b[64];
        if (wall == 0 || !localtime_r(&t, &tm) || strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S %Z", &tm) == 0)
                put(p, "unknown");
        else
                esc(p, b);
}

/* ---- the page's context: the view's one ordering (report_order), counts ---- */

struct ctx {
        const struct report_view *v;
        struct report_ranked *order;  /* the view's ordering: n_cells entries */
        int best;                 /* index into v->cells, or -1 */
        struct report_score best_score;
        bool by_bench;            /* scores are the bench metric (else smoke seconds) */
        size_t counts[_VERDICT_MAX], not_run, passed, failed;
        size_t id_width;          /* report_id_width(), computed once: it is quadratic */
};

static void ctx_release(struct ctx *x) {
        free(x->order);
        x->order = NULL;
}

static int ctx_init(struct ctx *x, const struct report_view *v) {
        *x = (struct ctx){.v = v};
        x->best = report_best_index(v, &x->best_score);
        x->by_bench = x->best >= 0 && x->best_score.by_bench && !isnan(x->best_score.value);
        x->passed = report_count_verdicts(v, x->counts);
        x->id_width = report_id_width(v);
        x->not_run = v->n_cells;
        for (int k = 0; k < _VERDICT_MAX; k++)
                x->not_run -= x->counts[k];
        int r = report_order(v, &x->order);
        if (r < 0)
                return r;
        for (size_t i = 0; i < v->n_cells; i++)
                x->failed += x->order[i].rank == REPORT_RANK_FAILED;
        return 0;
}

/* ---- the log excerpt, as report_load_logs put it in the view ---- */

static void put_log_excerpt(struct page *p, const struct report_cell *c) {
        const struct report_log *l = &c->log;
        switch (l->state) {
        case REPORT_LOG_NOT_LOADED:
                return;
        case REPORT_LOG_NONE:
                put(p, "<p class=\"muted\">No log was recorded for this attempt.</p>\n");
                return;
        case REPORT_LOG_MISSING:
                put(p, "<p class=\"muted\">Log not found: <code>");
                esc(p, l->path);
                put(p, "</code> (moved or deleted since the sweep).</p>\n");
                return;
        case REPORT_LOG_UNREADABLE:
                put(p, "<p class=\"muted\">Log <code>");
                esc(p, l->path);
                put(p, "</code> cannot be read: ");
                esc(p, strerror(-l->error));
                put(p, ".</p>\n");
                return;
        case REPORT_LOG_OUTSIDE:
                put(p, "<p class=\"muted\">Log <code>");
                esc(p, l->path);
                put(p, "</code> is not under this journal's run folder <code>");
                esc(p, l->root);
                put(p, "</code>: not read.</p>\n");
                return;
        case REPORT_LOG_READ:
                break;
        }
        put(p, "<p class=\"logname\">Log <code>");
        esc(p, l->path);
        put(p, "</code>");
        if (l->empty) {
                put(p, " is empty.</p>\n");
                return;
        }
        if (l->match >= 0)
                putf(p, ", around line %zu (the evidence, marked):</p>\n", l->lines[l->match].no);
        else if (c->ev.source == REPORT_SOURCE_ANSWER)
                putf(p, ", last %zu lines (the evidence above is the server's answer, not a log line):</p>\n",
                     l->n_lines);
        else
                putf(p, ", last %zu lines%s:</p>\n", l->n_lines,
                     l->scan_cut ? " read (the log is longer than the part searched)" : " (the evidence is not a line of it)");
        put(p, "<pre class=\"log\">");
        for (size_t i = 0; i < l->n_lines; i++) {
                const struct report_log_line *ln = &l->lines[i];
                bool hit = (long)i == l->match;
                putf(p, "%s<span class=\"ln\">%6zu</span> ", hit ? "<mark>" : "", ln->no);
                escn(p, ln->text, HTML_LOG_LINE_CHARS);
                put(p, hit ? "</mark>\n" : "\n");
        }
        put(p, "</pre>\n");
}

/* ---- header ---- */

static const char *json_str(json_t *o, const char *key) {
        return json_string_value(json_object_get(o, key));
}

/* "2 × NVIDIA H200 (sm_90, 140 GiB)", consecutive identical GPUs grouped. */
static void put_gpus(struct page *p, json_t *gpus) {
        size_t n = json_array_size(gpus);
        for (size_t i = 0; i < n;) {
                json_t *g = json_array_get(gpus, i);
                const char *name = json_str(g, "name"), *arch = json_str(g, "arch");
                json_int_t mem = json_integer_value(json_object_get(g, "memory_mib"));
                if (!mem)
                        mem = json_integer_value(json_object_get(g, "memory_total_mib"));
                size_t same = 1;
                while (i + same < n) {
                        json_t *h = json_array_get(gpus, i + same);
                        json_int_t hm = json_integer_value(json_object_get(h, "memory_mib"));
                        if (!hm)
                                hm = json_integer_value(json_object_get(h, "memory_total_mib"));
                        if (!streq_ptr(name, json_str(h, "name")) || !streq_ptr(arch, json_str(h, "arch")) || hm != mem)
                                break;
                        same++;
                }
                if (i > 0)
                        put(p, ", ");
                if (same > 1)
                        putf(p, "%zu × ", same);
                put(p, "<b>");
                esc(p, name ? name : "unnamed GPU");
                put(p, "</b> (");
                esc(p, arch ? arch : "arch unknown");
                if (mem > 0)
                        putf(p, ", %.0f GiB", (double)mem / 1024.0);
                put(p, ")");
                i += same;
        }
}

/* The provenance block of the header: what the sweep ran with, what changed since. */
static void put_provenance_line(struct page *p, const struct report_view *v) {
        _cleanup_free_ char *sum = report_provenance_summary(v), *chg = report_provenance_changes(v);
        if (!sum)
                return;
        put(p, "<p class=\"hostline\" id=\"provenance\"><span class=\"k\">Provenance</span> ");
        escn(p, sum, 0);
        if (chg) {
                put(p, v->provenance_changes && v->provenance_changes[0] ? " · <b>changed</b> " : " · ");
                escn(p, chg, 0);
        }
        put(p, "</p>\n");
}

static void put_host_line(struct page *p, const struct report_view *v) {
        json_t *h = v->host_json, *gpus = json_object_get(h, "gpus");
        put(p, "<p class=\"hostline\"><span class=\"k\">Host</span> ");
        if (json_array_size(gpus) > 0)
                put_gpus(p, gpus);
        else {
                put(p, "<b>no GPU information</b>");
                const char *why = json_str(h, "gpu_reason");
                if (why) {
                        put(p, " (");
                        escn(p, why, HTML_MAX_SHORT_CHARS);
                        put(p, ")");
                }
        }
        static const char *const keys[][2] = {{"driver", "driver"}, {"cuda", "CUDA"}, {"kernel", "kernel"}, {"hostname", ""}};
        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                const char *val = json_str(h, keys[i][0]);
                if (!val)
                        continue;
                putf(p, " · %s%s", keys[i][1], *keys[i][1] ? " " : "");
                escn(p, val, HTML_MAX_SHORT_CHARS);
        }
        const char *ver = json_str(json_object_get(h, "engines"), v->engine ? v->engine : "");
        if (ver) {
                put(p, " · ");
                esc(p, v->engine);
                put(p, " ");
                escn(p, ver, HTML_MAX_SHORT_CHARS);
        }
        put(p, "</p>\n");
}

/* Verdict/cause groups of the failures, in the order of the ranked list. */
struct group {
        size_t first;         /* position in ctx.order */
        size_t n;
};

static size_t failure_groups(const struct ctx *x, struct group *g) {
        size_t n = 0;
        for (size_t i = 0; i < x->v->n_cells; i++) {
                const struct report_cell *c = &x->v->cells[x->order[i].index];
                if (x->order[i].rank != REPORT_RANK_FAILED)
                        continue;
                if (n > 0) {
                        const struct report_cell *f = &x->v->cells[x->order[g[n - 1].first].index];
                        if (f->verdict == c->verdict && streq_ptr(f->cause, c->cause)) {
                                g[n - 1].n++;
                                continue;
                        }
                }
                g[n++] = (struct group){.first = i, .n = 1};
        }
        return n;
}

static void put_group_name(struct page *p, const struct report_cell *c) {
        put_badge(p, verdict_class(c), report_cell_verdict(c));
        if (c->cause) {
                put(p, " <span class=\"cause\">");
                escn(p, c->cause, HTML_MAX_SHORT_CHARS);
                put(p, "</span>");
        }
}

static void put_header(struct page *p, const struct ctx *x, const struct group *groups, size_t n_groups) {
        const struct report_view *v = x->v;
        put(p, "<header class=\"top\">\n<p class=\"kicker\">gauntlet report · sweep ");
        putf(p, "%lld", (long long)v->sweep_id);
        put(p, " · started ");
        put_wall(p, v->sweep_started_wall);
        put(p, " · ");
        esc(p, v->sweep_how ? v->sweep_how : "did not finish");
        if (v->earlier_sweeps)
                putf(p, " · %lld earlier sweep%s in this journal", (long long)v->earlier_sweeps,
                     v->earlier_sweeps == 1 ? "" : "s");
        if (v->workload_left_out)
                putf(p, " · %zu cell%s measured under another workload left out", v->workload_left_out,
                     v->workload_left_out == 1 ? "" : "s");
        put(p, "</p>\n<h1>");
        esc(p, v->engine ? v->engine : "unknown engine");
        put(p, " <span class=\"muted\">serving</span> ");
        esc(p, v->model ? v->model : "an unnamed model");
        put(p, "</h1>\n");

        size_t ran = v->n_cells - x->not_run - x->counts[VERDICT_SKIPPED];
        putf(p, "<div class=\"answer %s\">\n<p class=\"big\">", x->best >= 0 ? "ok" : "none");
        if (x->best >= 0)
                putf(p, "<span class=\"mark\">✔</span> <b>%zu of %zu</b> configuration%s tried work%s on this machine.",
                     x->passed, ran, ran == 1 ? "" : "s", x->passed == 1 ? "s" : "");
        else if (ran > 0)
                putf(p, "<span class=\"mark\">✘</span> <b>No configuration works</b> on this machine (%zu tried).", ran);
        else
                put(p, "<span class=\"mark\">?</span> <b>Nothing has run yet</b> in this sweep.");
        put(p, "</p>\n");
        if (x->best >= 0) {
                const struct report_cell *c = &v->cells[x->best];
                _cleanup_free_ char *fig = report_cell_figure(v, c);
                put(p, "<p class=\"best\">Best: <a class=\"cfg\" ");
                put_cell_href(p, c);
                put(p, ">");
                put_label(p, v, c, 0);
                put(p, "</a>");
                if (fig) {
                        put(p, " with <b class=\"fig\">");
                        esc(p, fig);
                        put(p, "</b>");
                }
                put(p, " <span class=\"muted\">(objective ");
                esc(p, v->objective ? v->objective : OBJECTIVE_DEFAULT);
                if (!x->by_bench)
                        put(p, "; ranked by smoke-suite time: no bench figures");
                put(p, "; cell ");
                put_short_id(p, x->id_width, c);
                put(p, ")</span>");
                _cleanup_free_ char *sla = report_sla_text(v, c);
                if (sla) {
                        put(p, "; <span class=\"fig\">");
                        esc(p, sla);
                        put(p, "</span>");
                }
                if (report_best_within_noise(v)) {
                        size_t idx[8];
                        size_t n = report_best_ties(v, idx, ELEMENTSOF(idx));
                        put(p, ". <span class=\"muted\">Within the measured noise of ");
                        for (size_t i = 0; i < MIN(n, ELEMENTSOF(idx)); i++) {
                                put(p, i ? ", " : "");
                                put_short_id(p, x->id_width, &v->cells[idx[i]]);
                        }
                        if (n > ELEMENTSOF(idx))
                                putf(p, " and %zu more", n - ELEMENTSOF(idx));
                        put(p, ": their ranges over the repeats overlap; named: the closest to the engine's defaults.</span>");
                }
                put(p, "</p>\n");
                _cleanup_free_ char *tokens = x->by_bench ? report_count_summary(v) : NULL;
                if (tokens) {
                        put(p, "<p class=\"note\">Tokens ");
                        esc(p, tokens);
                        put(p, ".</p>\n");
                }
        }
        put(p, "</div>\n<ul class=\"counts\">");
        for (int k = 0; k < _VERDICT_MAX; k++) {
                if (!x->counts[k])
                        continue;
                putf(p, "<li class=\"badge %s\">%zu %s</li>", check_class((enum verdict)k), x->counts[k],
                     verdict_to_string((enum verdict)k));
        }
        if (x->not_run)
                putf(p, "<li class=\"badge v-notrun\">%zu not run</li>", x->not_run);
        putf(p, "<li class=\"total\">%zu cell%s</li></ul>\n", v->n_cells, v->n_cells == 1 ? "" : "s");
        if (n_groups > 0) {
                put(p, "<p class=\"why\"><span class=\"k\">Why the rest failed</span> ");
                for (size_t i = 0; i < n_groups; i++) {
                        const struct report_cell *c = &v->cells[x->order[groups[i].first].index];
                        putf(p, "%s<a class=\"grp\" href=\"#why-%zu\">", i ? " " : "", i);
                        put_group_name(p, c);
                        putf(p, " ×%zu</a>", groups[i].n);
                }
                put(p, "</p>\n");
        }
        put_host_line(p, v);
        put_provenance_line(p, v);
        put(p, "</header>\n");
}

/* ---- the matrix: heatmap or ranked table ---- */

static void put_legend(struct page *p) {
        static const char *const cls[] = {"v-pass",     "v-garbage", "v-wrong",   "v-crash",  "v-timeout",
                                          "v-overload", "v-error",   "v-skipped", "v-notrun"};
        static const char *const word[] = {"pass",     "garbage", "wrong",   "crash",  "timeout",
                                           "overload", "error",   "skipped", "not run"};
        put(p, "<ul class=\"legend\">");
        for (size_t i = 0; i < ELEMENTSOF(cls); i++) {
                put(p, "<li>");
                put_badge(p, cls[i], word[i]);
                put(p, " ");
                esc(p, verdict_meaning(cls[i]));
                put(p, "</li>");
        }
        put(p, "<li><span class=\"badge star\">★ best</span> the configuration to deploy</li></ul>\n");
}

/* Distinct values of axis k, in the order cells first show them. */
static size_t axis_values(const struct report_view *v, size_t k, const char **vals) {
        size_t n = 0;
        for (size_t i = 0; i < v->n_cells; i++) {
                const char *s = v->cells[i].axis_values ? v->cells[i].axis_values[k] : NULL;
                size_t j;
                for (j = 0; j < n; j++)
                        if (streq_ptr(vals[j], s))
                                break;
                if (j == n)
                        vals[n++] = s;
        }
        return n;
}

/* What a cell shows in a heatmap square or a table row: figure for a pass, cause else. */
static void put_result(struct page *p, const struct report_view *v, const struct report_cell *c) {
        _cleanup_free_ char *fig = report_cell_figure(v, c);
        const char *cause = report_cell_cause(c);
        if (fig) {
                _cleanup_free_ char *sla = report_sla_text(v, c);
                put(p, "<span class=\"fig\">");
                esc(p, fig);
                if (sla) {
                        put(p, " · ");
                        esc(p, sla);
                }
                put(p, "</span>");
        } else if (cause) {
                put(p, "<span class=\"cause\">");
                escn(p, cause, HTML_MAX_SHORT_CHARS);
                put(p, "</span>");
        }
}

static void put_heatmap(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        _cleanup_free_ const char **rows = calloc(v->n_cells + 1, sizeof(char *));
        _cleanup_free_ const char **cols = calloc(v->n_cells + 1, sizeof(char *));
        if (!rows || !cols)
                return fail(p, -ENOMEM);
        size_t nr = axis_values(v, 0, rows), nc = axis_values(v, 1, cols);
        /* Many columns: the squares keep a readable width and the heatmap scrolls inside
         * its own box, never the page. */
        put(p, "<div class=\"heatwrap\"><table class=\"heat\"");
        if (nc > 8)
                putf(p, " style=\"min-width:%zupx\"", (nc + 1) * 110);
        put(p, ">\n<thead><tr><th class=\"corner\"><span class=\"ax\">");
        esc(p, v->axes[0]);
        put(p, "</span> ↓ &nbsp; <span class=\"ax\">");
        esc(p, v->axes[1]);
        put(p, "</span> →</th>");
        for (size_t j = 0; j < nc; j++) {
                put(p, "<th scope=\"col\">");
                esc(p, cols[j] ? cols[j] : "?");
                put(p, "</th>");
        }
        put(p, "</tr></thead>\n<tbody>\n");
        for (size_t i = 0; i < nr; i++) {
                put(p, "<tr><th scope=\"row\">");
                esc(p, rows[i] ? rows[i] : "?");
                put(p, "</th>");
                for (size_t j = 0; j < nc; j++) {
                        const struct report_cell *c = NULL;
                        size_t idx = 0;
                        for (size_t k = 0; k < v->n_cells && !c; k++) {
                                const struct report_cell *d = &v->cells[k];
                                if (d->axis_values && streq_ptr(d->axis_values[0], rows[i]) &&
                                    streq_ptr(d->axis_values[1], cols[j])) {
                                        c = d;
                                        idx = k;
                                }
                        }
                        if (!c) {
                                put(p, "<td class=\"v-none\"><span class=\"vw\">—</span><span class=\"cause\">not in this sweep</span></td>");
                                continue;
                        }
                        bool best = (int)idx == x->best;
                        putf(p, "<td class=\"%s%s\"", verdict_class(c), best ? " best" : "");
                        if (c->has_attempt && c->evidence) {
                                put(p, " title=\"");
                                escn(p, c->evidence, HTML_MAX_SHORT_CHARS);
                                put(p, "\"");
                        }
                        put(p, "><a ");
                        put_cell_href(p, c);
                        put(p, "><span class=\"vw\">");
                        if (best)
                                put(p, "★ ");
                        esc(p, report_cell_verdict(c));
                        put(p, "</span>");
                        put_result(p, v, c);
                        if (cell_failed(c) && c->evidence) {
                                /* the why, right in the square: the start of the evidence */
                                put(p, "<span class=\"hev\">");
                                escn(p, c->evidence, 90);
                                put(p, "</span>");
                        }
                        put(p, "</a></td>");
                }
                put(p, "</tr>\n");
        }
        put(p, "</tbody></table></div>\n");
}

static void put_table(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        put(p, "<table class=\"ranked\">\n<thead><tr><th>#</th>");
        for (size_t k = 0; k < v->n_axes; k++) {
                put(p, "<th>");
                esc(p, v->axes[k]);
                put(p, "</th>");
        }
        if (v->n_axes == 0)
                put(p, "<th>configuration</th>");
        put(p, "<th>verdict</th><th>figure or cause</th><th>evidence</th><th>cell</th></tr></thead>\n<tbody>\n");
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[x->order[i].index];
                bool best = (int)x->order[i].index == x->best;
                putf(p, "<tr class=\"%s%s\"><td class=\"rank\">%zu</td>", verdict_class(c), best ? " best" : "", i + 1);
                for (size_t k = 0; k < v->n_axes; k++) {
                        put(p, "<td>");
                        esc(p, c->axis_values && c->axis_values[k] ? c->axis_values[k] : "?");
                        put(p, "</td>");
                }
                if (v->n_axes == 0)
                        put(p, "<td>(base)</td>");
                put(p, "<td>");
                put_badge(p, verdict_class(c), best ? "★ pass" : report_cell_verdict(c));
                put(p, "</td><td>");
                put_result(p, v, c);
                put(p, "</td><td class=\"ev\">");
                escn(p, c->has_attempt ? c->evidence : NULL, HTML_MAX_SHORT_CHARS);
                put(p, "</td><td><a ");
                put_cell_href(p, c);
                put(p, ">");
                put_short_id(p, x->id_width, c);
                put(p, "</a></td></tr>\n");
        }
        put(p, "</tbody></table>\n");
}

static void put_matrix(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        put(p, "<section id=\"matrix\">\n<h2>The matrix</h2>\n");
        if (v->n_cells == 0) {
                put(p, "<p class=\"muted\">The sweep has no cells.</p>\n</section>\n");
                return;
        }
        if (v->n_axes == 2) {
                put(p, "<p class=\"note\">Rows are <b>");
                esc(p, v->axes[0]);
                put(p, "</b>, columns <b>");
                esc(p, v->axes[1]);
                put(p, "</b>. A pass shows its figure, a failure its cause; click a square for the details.</p>\n");
                put_heatmap(p, x);
        } else {
                put(p, "<p class=\"note\">Best first, then the other passes by the objective, then the failures by verdict and cause.</p>\n");
                put_table(p, x);
        }
        put_legend(p);
        put(p, "</section>\n");
}

/* ---- why the rest failed ---- */

static void put_failures(struct page *p, const struct ctx *x, const struct group *groups, size_t n_groups) {
        const struct report_view *v = x->v;
        if (n_groups == 0)
                return;
        put(p, "<section id=\"why\">\n<h2>Why the rest failed</h2>\n<table class=\"why\">\n"
               "<thead><tr><th>verdict / cause</th><th>cells</th><th>evidence (first cell)</th></tr></thead>\n<tbody>\n");
        for (size_t i = 0; i < n_groups; i++) {
                const struct report_cell *first = &v->cells[x->order[groups[i].first].index];
                putf(p, "<tr id=\"why-%zu\"><td>", i);
                put_group_name(p, first);
                putf(p, "<div class=\"muted\">%zu cell%s</div></td><td><ul class=\"cells\">", groups[i].n,
                     groups[i].n == 1 ? "" : "s");
                for (size_t k = 0; k < groups[i].n && k < HTML_MAX_GROUP_LINKS; k++) {
                        const struct report_cell *c = &v->cells[x->order[groups[i].first + k].index];
                        put(p, "<li><a ");
                        put_cell_href(p, c);
                        put(p, ">");
                        put_label(p, v, c, HTML_MAX_LABEL_CHARS);
                        put(p, "</a></li>");
                }
                if (groups[i].n > HTML_MAX_GROUP_LINKS)
                        putf(p, "<li class=\"muted\">and %zu more</li>", groups[i].n - HTML_MAX_GROUP_LINKS);
                put(p, "</ul></td><td><pre class=\"ev\">");
                escn(p, first->evidence ? first->evidence : "(no evidence recorded)", 600);
                put(p, "</pre></td></tr>\n");
        }
        put(p, "</tbody></table>\n</section>\n");
}

/* ---- charts ---- */

/* A round step for about n ticks up to max: 1, 2 or 5 times a power of ten. */
static double nice_step(double max, int n) {
        if (!(max > 0) || !isfinite(max))
                return 1;
        double raw = max / n, mag = pow(10, floor(log10(raw))), f = raw / mag;
        return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
}

static void put_number(struct page *p, double x) {
        if (fabs(x) >= 100 || x == floor(x))
                putf(p, "%.0f", x);
        else if (fabs(x) >= 10)
                putf(p, "%.1f", x);
        else
                putf(p, "%.3g", x);
}

static void put_bar_chart(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        size_t n = 0, unscored = 0;
        double max = 0;
        bool higher = true;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_ranked *o = &x->order[i];
                struct report_score s;
                if (o->rank > REPORT_RANK_PASSED)
                        break;
                if (report_cell_score(v, &v->cells[o->index], x->by_bench, &s) < 0) {
                        unscored++;
                        continue;
                }
                higher = s.higher_better;
                if (n < HTML_MAX_BARS) {
                        max = MAX(max, s.value);
                        n++;
                }
        }
        /* smoke times under a second read better as milliseconds on the axis */
        double scale = !x->by_bench && max < 1 ? 1000 : 1;
        max *= scale;
        put(p, "<figure class=\"chart\">\n<figcaption><b>Passing configurations by ");
        esc(p, x->by_bench ? (v->objective ? v->objective : OBJECTIVE_DEFAULT)
                           : scale > 1 ? "smoke-suite time (milliseconds)" : "smoke-suite time (seconds)");
        putf(p, "</b> <span class=\"muted\">(%s is better)</span></figcaption>\n", higher ? "higher" : "lower");
        if (n == 0) {
                put(p, "<p class=\"muted\">No passing configuration has a figure to chart.</p>\n</figure>\n");
                return;
        }
        const double W = 1000, LW = 330, BX = 340, BW = 520, ROW = 30, TOP = 8;
        double step = nice_step(max, 5), top = ceil(max / step) * step;
        if (!(top > 0))
                top = 1;
        double H = TOP + (double)n * ROW + 26;
        putf(p, "<svg class=\"bars\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"bar chart of passing configurations\">\n",
             W, H);
        for (int tick = 0; tick <= 12 && tick * step <= top + step / 2; tick++) {
                double t = tick * step;
                double gx = BX + t / top * BW;
                putf(p, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>", gx, TOP - 4,
                     gx, TOP + (double)n * ROW);
                putf(p, "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">", gx, H - 8);
                put_number(p, t);
                put(p, "</text>\n");
        }
        size_t row = 0;
        for (size_t i = 0; i < v->n_cells && row < n; i++) {
                const struct report_ranked *o = &x->order[i];
                const struct report_cell *c = &v->cells[o->index];
                struct report_score s;
                if (o->rank > REPORT_RANK_PASSED)
                        break;
                if (report_cell_score(v, c, x->by_bench, &s) < 0)
                        continue;
                double y = TOP + (double)row * ROW, w = s.value * scale / top * BW;
                bool best = (int)o->index == x->best;
                _cleanup_free_ char *fig = report_cell_figure(v, c);
                put(p, "<a ");
                put_cell_href(p, c);
                put(p, "><text class=\"lbl\" x=\"");
                putf(p, "%.0f\" y=\"%.1f\" text-anchor=\"end\">", LW, y + ROW / 2 + 4);
                put_label(p, v, c, HTML_MAX_LABEL_CHARS);
                put(p, "<title>");
                put_label(p, v, c, 0);
                put(p, "</title></text></a>");
                putf(p, "<rect class=\"bar%s\" x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\" rx=\"3\"/>",
                     best ? " best" : "", BX, y + 5, MAX(w, 1.0), ROW - 10);
                putf(p, "<text class=\"val\" x=\"%.1f\" y=\"%.1f\">", BX + MAX(w, 1.0) + 6, y + ROW / 2 + 4);
                if (best)
                        put(p, "★ ");
                esc(p, fig ? fig : "");
                put(p, "</text>\n");
                row++;
        }
        put(p, "</svg>\n");
        size_t more = 0;
        for (size_t i = 0; i < v->n_cells; i++)
                more += x->order[i].rank <= REPORT_RANK_PASSED;
        more -= n + unscored;
        if (more)
                putf(p, "<p class=\"muted\">%zu more passing configuration%s not drawn.</p>\n", more, more == 1 ? "" : "s");
        if (unscored)
                putf(p, "<p class=\"muted\">%zu passing configuration%s without a figure under this objective.</p>\n",
                     unscored, unscored == 1 ? "" : "s");
        put(p, "</figure>\n");
}

static const char *const series_color[HTML_MAX_SERIES] = {"#0072b2", "#d55e00", "#009e73", "#cc79a7"};

/* A marker of shape k at (cx, cy): circle, square, triangle, diamond; hollow for p99. */
static void put_marker(struct page *p, int k, double cx, double cy, bool hollow) {
        const char *col = series_color[k];
        const char *fill = hollow ? "#fff" : col;
        switch (k) {
        case 0:
                putf(p, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"", cx, cy, fill, col);
                break;
        case 1:
                putf(p, "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"",
                     cx - 4, cy - 4, fill, col);
                break;
        case 2:
                putf(p, "<path d=\"M%.1f %.1fl5 9h-10z\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"", cx, cy - 5.5, fill, col);
                break;
        default:
                putf(p, "<path d=\"M%.1f %.1fl5.5 5.5l-5.5 5.5l-5.5-5.5z\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"", cx,
                     cy - 5.5, fill, col);
                break;
        }
}

static bool bench_metric(json_t *entry, enum metric metric, enum metric_stat stat, double *ret) {
        json_t *m = json_object_get(json_object_get(entry, metric_key(metric)), metric_stat_key(stat));
        if (!json_is_number(m))
                return false;
        *ret = json_number_value(m);
        return isfinite(*ret);
}

struct series {
        const struct report_cell *c;
        json_t *bench;
};

/* One panel: metric (ttft_ms, itl_ms) p50 solid and p99 dashed for each series, titled with
 * the table's name and unit. */
static void put_latency_panel(struct page *p, const struct series *s, size_t ns, const long *levels, size_t nl,
                              enum metric metric, double x0) {
        const double PW = 440, PH = 230, L = 56, T = 34, PLOT_W = PW - L - 14;
        double max = 0, v;
        for (size_t i = 0; i < ns; i++) {
                size_t k;
                json_t *e;
                json_array_foreach(s[i].bench, k, e) {
                        if (bench_metric(e, metric, METRIC_STAT_P99, &v))
                                max = MAX(max, v);
                        if (bench_metric(e, metric, METRIC_STAT_P50, &v))
                                max = MAX(max, v);
                }
        }
        double step = nice_step(max, 4), top = ceil(max / step) * step;
        if (!(top > 0))
                top = 1;
        putf(p, "<text class=\"ptitle\" x=\"%.0f\" y=\"18\">", x0 + L);
        esc(p, metric_info(metric)->name);
        put(p, " (");
        esc(p, metric_info(metric)->unit);
        put(p, ")");
        put(p, "</text>\n");
        for (int tick = 0; tick <= 12 && tick * step <= top + step / 2; tick++) {
                double t = tick * step;
                double y = T + PH - t / top * PH;
                putf(p, "<line class=\"grid\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\"/>", x0 + L, y, x0 + L + PLOT_W, y);
                putf(p, "<text class=\"tick\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", x0 + L - 6, y + 4);
                put_number(p, t);
                put(p, "</text>\n");
        }
        for (size_t j = 0; j < nl; j++) {
                double lx = x0 + L + (nl == 1 ? PLOT_W / 2 : (double)j * PLOT_W / (double)(nl - 1));
                putf(p, "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%ld</text>", lx, T + PH + 18,
                     levels[j]);
        }
        putf(p, "<text class=\"axis\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">concurrency</text>\n",
             x0 + L + PLOT_W / 2, T + PH + 38);
        static const enum metric_stat pcts[] = {METRIC_STAT_P99, METRIC_STAT_P50};
        for (size_t i = 0; i < ns; i++) {
                for (size_t q = 0; q < ELEMENTSOF(pcts); q++) {
                        bool p99 = q == 0;
                        struct {
                                double x, y, val;
                                long level;
                        } pts[HTML_MAX_LEVELS];
                        size_t np = 0;
                        for (size_t j = 0; j < nl; j++) {
                                size_t k;
                                json_t *e;
                                json_array_foreach(s[i].bench, k, e) {
                                        if ((long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))) != levels[j])
                                                continue;
                                        if (!bench_metric(e, metric, pcts[q], &v))
                                                break;
                                        pts[np].x = x0 + L + (nl == 1 ? PLOT_W / 2 : (double)j * PLOT_W / (double)(nl - 1));
                                        pts[np].y = T + PH - v / top * PH;
                                        pts[np].val = v;
                                        pts[np].level = levels[j];
                                        np++;
                                        break;
                                }
                        }
                        if (np >= 2) {
                                putf(p, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s points=\"",
                                     series_color[i], p99 ? "1.6" : "2.4", p99 ? " stroke-dasharray=\"6 4\"" : "");
                                for (size_t k = 0; k < np; k++)
                                        putf(p, "%s%.1f,%.1f", k ? " " : "", pts[k].x, pts[k].y);
                                put(p, "\"/>\n");
                        }
                        for (size_t k = 0; k < np; k++) {
                                put_marker(p, (int)i, pts[k].x, pts[k].y, p99);
                                putf(p, "><title>#%zu %s %s at concurrency %ld: ", i + 1, metric_key(metric), metric_stat_key(pcts[q]),
                                     pts[k].level);
                                put_number(p, pts[k].val);
                                put(p, " ms</title></");
                                put(p, i == 0 ? "circle" : i == 1 ? "rect" : "path");
                                put(p, ">\n");
                        }
                }
        }
}

static int long_cmp(const void *a, const void *b) {
        long x = *(const long *)a, y = *(const long *)b;
        return x < y ? -1 : x > y;
}

static void put_latency_chart(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        struct series s[HTML_MAX_SERIES];
        long levels[HTML_MAX_LEVELS];
        size_t ns = 0, nl = 0;
        for (size_t i = 0; i < v->n_cells && ns < HTML_MAX_SERIES; i++) {
                const struct report_ranked *o = &x->order[i];
                const struct report_cell *c = &v->cells[o->index];
                double d;
                if (o->rank > REPORT_RANK_PASSED)
                        break;
                if (json_array_size(c->bench) == 0)
                        continue;
                bool any = false;
                size_t k;
                json_t *e;
                json_array_foreach(c->bench, k, e) {
                        any |= bench_metric(e, METRIC_TTFT_MS, METRIC_STAT_P50, &d) ||
                               bench_metric(e, METRIC_ITL_MS, METRIC_STAT_P50, &d);
                        long level = (long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY)));
                        bool seen = false;
                        for (size_t j = 0; j < nl; j++)
                                seen |= levels[j] == level;
                        if (!seen && nl < HTML_MAX_LEVELS)
                                levels[nl++] = level;
                }
                if (any)
                        s[ns++] = (struct series){.c = c, .bench = c->bench};
        }
        put(p, "<figure class=\"chart\">\n<figcaption><b>Latency against concurrency</b> <span class=\"muted\">"
               "(the best few; solid p50, dashed p99; lower is better)</span></figcaption>\n");
        if (ns == 0) {
                put(p, "<p class=\"muted\">No latency figures: no passing configuration was benchmarked "
                       "(add <code>bench: {concurrency: [1, 8, 32]}</code> to the matrix).</p>\n</figure>\n");
                return;
        }
        qsort(levels, nl, sizeof(long), long_cmp);
        put(p, "<svg class=\"lines\" viewBox=\"0 0 1000 310\" role=\"img\" aria-label=\"latency percentiles against concurrency\">\n");
        put_latency_panel(p, s, ns, levels, nl, METRIC_TTFT_MS, 0);
        put_latency_panel(p, s, ns, levels, nl, METRIC_ITL_MS, 510);
        put(p, "</svg>\n<ul class=\"slegend\">");
        for (size_t i = 0; i < ns; i++) {
                putf(p, "<li><svg width=\"44\" height=\"14\" aria-hidden=\"true\"><line x1=\"2\" y1=\"7\" x2=\"42\" y2=\"7\" "
                        "stroke=\"%s\" stroke-width=\"2.4\"/>",
                     series_color[i]);
                put_marker(p, (int)i, 22, 7, false);
                putf(p, "/></svg> <b>#%zu</b> <a ", i + 1);
                put_cell_href(p, s[i].c);
                put(p, ">");
                put_label(p, v, s[i].c, HTML_MAX_LABEL_CHARS);
                put(p, "</a></li>");
        }
        put(p, "<li class=\"muted\"><svg width=\"44\" height=\"14\" aria-hidden=\"true\"><line x1=\"2\" y1=\"7\" "
               "x2=\"42\" y2=\"7\" stroke=\"#59636e\" stroke-width=\"2.4\"/></svg> p50 (median) &nbsp; "
               "<svg width=\"44\" height=\"14\" aria-hidden=\"true\"><line x1=\"2\" y1=\"7\" x2=\"42\" y2=\"7\" "
               "stroke=\"#59636e\" stroke-width=\"1.6\" stroke-dasharray=\"6 4\"/></svg> p99, hollow markers</li>");
        put(p, "</ul>\n</figure>\n");
}

/* ---- the eval ---- */

static void put_share(struct page *p, double x) {
        if (isfinite(x))
                putf(p, "%.3f", x);
        else
                put(p, "–");
}

/* The accuracy of every cell that answered the eval: a dot and its 95% interval on a
 * 0-1 axis, the reference's accuracy as a dashed line, gated cells in the wrong colour. */
static void put_eval_chart(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        const struct report_view_eval *ve = &v->eval;
        size_t n = 0, more = 0;
        for (size_t i = 0; i < v->n_cells; i++)
                if (v->cells[x->order[i].index].eval.ran && v->cells[x->order[i].index].eval.fig.n) {
                        if (n < HTML_MAX_EVAL_ROWS)
                                n++;
                        else
                                more++;
                }
        put(p, "<figure class=\"chart\">\n<figcaption><b>Accuracy on the eval</b> <span class=\"muted\">(share of "
               "right answers, with its 95% Wilson interval; the dashed line is the reference)</span></figcaption>\n");
        if (n == 0) {
                put(p, "<p class=\"muted\">No configuration answered the eval: it runs only on cells that pass the "
                       "smoke suite.</p>\n</figure>\n");
                return;
        }
        const double W = 1000, LW = 330, BX = 340, BW = 420, ROW = 28, TOP = 8;
        double H = TOP + (double)n * ROW + 26;
        putf(p, "<svg class=\"bars\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"accuracy of each configuration\">\n",
             W, H);
        for (int tick = 0; tick <= 5; tick++) {
                double gx = BX + tick / 5.0 * BW;
                putf(p, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>", gx, TOP - 4, gx,
                     TOP + (double)n * ROW);
                putf(p, "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.1f</text>\n", gx, H - 8,
                     tick / 5.0);
        }
        if (ve->reference >= 0) {
                double rx = BX + v->cells[ve->reference].eval.fig.accuracy * BW;
                putf(p, "<line class=\"refline\" x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>\n", rx, TOP - 4, rx,
                     TOP + (double)n * ROW);
        }
        size_t row = 0;
        for (size_t i = 0; i < v->n_cells && row < n; i++) {
                const struct report_cell *c = &v->cells[x->order[i].index];
                const struct report_eval *e = &c->eval;
                if (!e->ran || !e->fig.n)
                        continue;
                double y = TOP + (double)row * ROW + ROW / 2;
                const char *cls = e->gate ? "miss" : e->is_reference ? "ref" : "hit";
                put(p, "<a ");
                put_cell_href(p, c);
                putf(p, "><text class=\"lbl\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">", LW, y + 4);
                put_label(p, v, c, HTML_MAX_LABEL_CHARS);
                put(p, "<title>");
                put_label(p, v, c, 0);
                put(p, "</title></text></a>");
                putf(p, "<line class=\"ci %s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", cls,
                     BX + e->fig.ci_low * BW, y, BX + e->fig.ci_high * BW, y);
                putf(p, "<circle class=\"pt %s\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>", cls, BX + e->fig.accuracy * BW, y);
                putf(p, "%zu/%zu right: %.3f [%.3f, %.3f]", e->fig.correct, e->fig.n, e->fig.accuracy, e->fig.ci_low,
                     e->fig.ci_high);
                put(p, "</title></circle>");
                putf(p, "<text class=\"val\" x=\"%.0f\" y=\"%.1f\">%.3f [%.3f, %.3f]%s</text>\n", BX + BW + 14, y + 4,
                     e->fig.accuracy, e->fig.ci_low, e->fig.ci_high, e->is_reference ? " ref" : e->gate ? " wrong" : "");
                row++;
        }
        put(p, "</svg>\n");
        if (more)
                putf(p, "<p class=\"muted\">%zu more configuration%s not drawn.</p>\n", more, more == 1 ? "" : "s");
        put(p, "</figure>\n");
}

static void put_eval_table(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        put(p, "<table class=\"num\"><thead><tr><th>configuration</th><th>right</th><th>accuracy [95% CI]</th>"
               "<th>z, p vs reference</th><th>identical answers</th><th>mean |Δ logprob|</th><th>verdict</th>"
               "</tr></thead>\n<tbody>\n");
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[x->order[i].index];
                const struct report_eval *e = &c->eval;
                if (!e->ran)
                        continue;
                put(p, "<tr><td><a ");
                put_cell_href(p, c);
                put(p, ">");
                put_label(p, v, c, HTML_MAX_LABEL_CHARS);
                putf(p, "</a></td><td>%zu / %zu</td><td>", e->fig.correct, e->fig.n);
                put_share(p, e->fig.accuracy);
                put(p, " [");
                put_share(p, e->fig.ci_low);
                put(p, ", ");
                put_share(p, e->fig.ci_high);
                put(p, "]</td><td>");
                if (e->is_reference)
                        put(p, "reference");
                else if (e->compared)
                        putf(p, "%.2f, %s%.3g", e->z, e->p < 0.001 ? "&lt; " : "", e->p < 0.001 ? 0.001 : e->p);
                else
                        put(p, "–");
                put(p, "</td><td>");
                if (e->compared && e->diff.common)
                        putf(p, "%zu / %zu (%.1f%%)", e->diff.identical, e->diff.common, 100 * e->diff.agreement);
                else
                        put(p, "–");
                put(p, "</td><td>");
                if (e->compared && e->diff.lp_tokens)
                        putf(p, "%.4g <span class=\"muted\">(%zu tokens)</span>", e->diff.lp_mad, e->diff.lp_tokens);
                else
                        put(p, "–");
                put(p, "</td><td>");
                put_badge(p, verdict_class(c), report_cell_verdict(c));
                if (e->gate) {
                        put(p, " ");
                        esc(p, eval_gate_cause(e->gate));
                }
                put(p, "</td></tr>\n");
        }
        put(p, "</tbody></table>\n");
}

static void put_eval(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        if (!v->eval.on)
                return;
        put(p, "<section id=\"eval\">\n<h2>How accurate the working ones are</h2>\n<p class=\"note\">Eval: ");
        _cleanup_free_ char *summary = report_eval_summary(v);
        esc(p, summary ? summary : "");
        put(p, ". The same questions go to every configuration that passed the smoke suite, greedy; the "
               "reference is the yardstick (docs/eval.md).</p>\n");
        put_eval_chart(p, x);
        put_eval_table(p, x);
        put(p, "</section>\n");
}

/* A cell's own eval block: its figures, the comparison, the first divergence and the
 * answers it got wrong. */
static void put_cell_eval(struct page *p, const struct report_view *v, const struct report_cell *c) {
        const struct report_eval *e = &c->eval;
        if (!v->eval.on || (!e->ran && !e->other_set))
                return;
        put(p, "<h4>Eval</h4>\n");
        if (!e->ran) {
                put(p, "<p class=\"muted\">Settled in an earlier sweep with another question set: not compared. "
                       "<code>gauntlet run --rerun</code> asks it this sweep's questions.</p>\n");
                return;
        }
        _cleanup_free_ char *line = report_cell_eval_line(v, c);
        put(p, "<p>");
        esc(p, line ? line : "");
        if (e->compared)
                putf(p, "; two-proportion z-test against the reference: z = %.2f, p = %.3g", e->z, e->p);
        put(p, "</p>\n");
        if (e->compared && e->diff.first != SIZE_MAX && e->diff.first < e->n_answers && v->eval.reference >= 0) {
                const struct report_eval_answer *a = &e->answers[e->diff.first];
                const struct report_cell *rc = &v->cells[v->eval.reference];
                const char *ro = e->diff.first < rc->eval.n_answers ? rc->eval.answers[e->diff.first].output : NULL;
                put(p, "<p>First answer that differs from the reference's: <code>");
                esc(p, a->id);
                putf(p, "</code> (at byte %zu)</p>\n<pre class=\"out\">", e->diff.first_offset);
                escn(p, a->question, 2000);
                put(p, "</pre>\n<div class=\"two\"><div><p class=\"muted\">this configuration</p><pre class=\"out\">");
                escn(p, a->output ? a->output : "", 2000);
                put(p, "</pre></div><div><p class=\"muted\">the reference</p><pre class=\"out\">");
                escn(p, ro ? ro : "", 2000);
                put(p, "</pre></div></div>\n");
        }
        size_t misses = e->fig.n - e->fig.correct;
        if (misses == 0)
                return;
        putf(p, "<details class=\"reasoning\"><summary>%zu answer%s not right</summary>\n<table class=\"ranked\"><tbody>\n",
             misses, misses == 1 ? "" : "s");
        size_t shown = 0;
        for (size_t i = 0; i < e->n_answers && shown < HTML_MAX_EVAL_MISSES; i++) {
                const struct report_eval_answer *a = &e->answers[i];
                if (a->verdict == VERDICT_PASS || a->verdict == VERDICT_SKIPPED)
                        continue;
                put(p, "<tr><td><code>");
                esc(p, a->id);
                put(p, "</code></td><td>");
                put_badge(p, check_class(a->verdict), verdict_to_string(a->verdict));
                put(p, "</td><td class=\"ev\">");
                escn(p, a->evidence ? a->evidence : "", HTML_MAX_SHORT_CHARS);
                put(p, "</td></tr>\n");
                shown++;
        }
        put(p, "</tbody></table>\n");
        if (misses > shown)
                putf(p, "<p class=\"muted\">and %zu more (the JSON report lists every answer).</p>\n", misses - shown);
        put(p, "</details>\n");
}

/* ---- the search ---- */

/* Rows of the measured-and-predicted table, at most. */
#define HTML_MAX_SEARCH_ROWS 40

struct search_row {
        size_t index;
        unsigned measured;        /* how many launches its figure pools; 0: predicted (a pruned cell) */
        double value, high;       /* the figure; a predicted one's high bound (NAN: none) */
        double p_feasible;        /* predicted: the chance to serve right */
        bool higher_better;
};

static int search_row_cmp(const void *a, const void *b) {
        const struct search_row *x = a, *y = b;
        double vx = x->higher_better ? -x->value : x->value, vy = y->higher_better ? -y->value : y->value;
        if (vx != vy)
                return vx < vy ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

static void put_cell_axes(struct page *p, const struct report_view *v, const struct report_cell *c) {
        for (size_t k = 0; k < v->n_axes; k++) {
                putf(p, "%s", k ? " " : "");
                esc(p, v->axes[k]);
                put(p, "=");
                esc(p, c->axis_values[k] ? c->axis_values[k] : "?");
        }
}

/* The best figure after each launch, a step line over the launches; each launch's own
 * figure a dot, a failure a mark on the axis. */
static void put_search_chart(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        const struct report_view_search *se = &v->search;
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < se->launched; i++) {
                struct report_score sc;
                if (report_cell_score(v, &v->cells[se->order[i]], x->by_bench, &sc) == 0) {
                        lo = MIN(lo, sc.value);
                        hi = MAX(hi, sc.value);
                }
        }
        put(p, "<figure class=\"chart\">\n<figcaption><b>Best so far against launches</b> <span class=\"muted\">"
               "(the line: the best figure after each launch; dots: each launch's own figure; marks below: "
               "launches that failed)</span></figcaption>\n");
        if (!isfinite(lo)) {
                put(p, "<p class=\"muted\">No launch has a figure yet.</p>\n</figure>\n");
                return;
        }
        if (hi <= lo)
                hi = lo + (lo > 0 ? lo : 1);
        lo = MIN(lo, 0);
        double W = 1000, H = 260, left = 70, right = 20, top = 15, bottom = 40;
        double pw = W - left - right, ph = H - top - bottom, n = (double)MAX(se->launched, (size_t)2);
#define SX(i) (left + pw * ((double)(i)) / (n - 1))
#define SY(val) (top + ph * (1 - ((val) - lo) / (hi - lo)))
        putf(p, "<svg class=\"lines\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"best figure so far against launches\">\n", W, H);
        putf(p, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", left, top + ph, left + pw, top + ph);
        putf(p, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", left, top, left, top + ph);
        putf(p, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%.4g</text>\n", left - 6, top + 4, hi);
        putf(p, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">%.4g</text>\n", left - 6, top + ph, lo);
        putf(p, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">launch 1 … %zu</text>\n",
             left + pw / 2, H - 8, se->launched);
        put(p, "<polyline fill=\"none\" stroke=\"#2a7\" stroke-width=\"2\" points=\"");
        bool started = false;
        for (size_t i = 0; i < se->launched; i++) {
                if (isnan(se->best_so_far[i]))
                        continue;
                if (started && i > 0 && !isnan(se->best_so_far[i - 1]))
                        putf(p, "%.1f,%.1f ", SX(i), SY(se->best_so_far[i - 1]));
                putf(p, "%.1f,%.1f ", SX(i), SY(se->best_so_far[i]));
                started = true;
        }
        put(p, "\"/>\n");
        for (size_t i = 0; i < se->launched; i++) {
                const struct report_cell *c = &v->cells[se->order[i]];
                struct report_score sc;
                if (report_cell_score(v, c, x->by_bench, &sc) == 0) {
                        putf(p, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"#27a\"><title>launch %zu: %.8s ", SX(i),
                             SY(sc.value), i + 1, c->id);
                        put_cell_axes(p, v, c);
                        putf(p, ", %.4g</title></circle>\n", sc.value);
                } else {
                        putf(p, "<path d=\"M%.1f %.1f l4 8 l-8 0 z\" fill=\"#c33\"><title>launch %zu: %.8s ", SX(i),
                             top + ph + 4, i + 1, c->id);
                        put_cell_axes(p, v, c);
                        put(p, ": ");
                        esc(p, report_cell_verdict(c));
                        if (report_cell_cause(c)) {
                                put(p, "/");
                                esc(p, report_cell_cause(c));
                        }
                        put(p, "</title></path>\n");
                }
        }
#undef SX
#undef SY
        put(p, "</svg>\n</figure>\n");
}

/* The measured cells and the pruned ones side by side, by figure: what the search saw and
 * what it predicted for the cells it left. */
static void put_search_table(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        _cleanup_free_ struct search_row *rows = calloc(v->n_cells + 1, sizeof(*rows));
        if (!rows)
                return fail(p, -ENOMEM);
        size_t n = 0, pruned = 0;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                struct report_score sc;
                if (report_cell_score(v, c, x->by_bench, &sc) == 0) {
                        unsigned times = 1;
                        double pooled = report_cell_pooled(v, c, x->by_bench, sc.value, &times);
                        rows[n++] = (struct search_row){.index = i, .measured = times, .value = pooled, .high = NAN,
                                                        .higher_better = sc.higher_better};
                        continue;
                }
                json_t *pr = c->prediction;
                if (!pr || !streq_ptr(report_cell_cause(c), "pruned"))
                        continue;
                pruned++;
                double mean = json_number_value(json_object_get(pr, "mean"));
                if (!json_is_number(json_object_get(pr, "mean")))
                        mean = NAN;
                rows[n++] = (struct search_row){
                        .index = i, .value = isnan(mean) ? 0 : mean,
                        .high = json_is_number(json_object_get(pr, "high")) ? json_number_value(json_object_get(pr, "high")) : NAN,
                        .p_feasible = json_number_value(json_object_get(pr, "p_feasible")),
                        .higher_better = x->best_score.higher_better || !x->by_bench};
        }
        qsort(rows, n, sizeof(*rows), search_row_cmp);
        putf(p, "<details open>\n<summary>Measured and predicted, by figure (%zu launched with a figure, %zu pruned",
             n - pruned, pruned);
        if (n > HTML_MAX_SEARCH_ROWS)
                putf(p, "; the first %d shown", HTML_MAX_SEARCH_ROWS);
        put(p, ")</summary>\n<table class=\"why\">\n<thead><tr><th>cell</th><th>configuration</th><th>figure</th>"
               "<th>predicted up to</th><th>chance to serve right</th><th>why not launched</th></tr></thead>\n<tbody>\n");
        for (size_t i = 0; i < n && i < HTML_MAX_SEARCH_ROWS; i++) {
                const struct report_cell *c = &v->cells[rows[i].index];
                putf(p, "<tr%s><td><code>%.8s</code></td><td>", rows[i].measured ? "" : " class=\"muted\"", c->id);
                put_cell_axes(p, v, c);
                if (rows[i].measured > 1)
                        putf(p, "</td><td><b>%.4g</b> measured %u times (geometric mean)</td><td></td><td></td><td></td></tr>\n",
                             rows[i].value, rows[i].measured);
                else if (rows[i].measured)
                        putf(p, "</td><td><b>%.4g</b> measured</td><td></td><td></td><td></td></tr>\n", rows[i].value);
                else {
                        if (rows[i].value > 0)
                                putf(p, "</td><td>%.4g predicted</td>", rows[i].value);
                        else
                                put(p, "</td><td>no figure to predict from</td>");
                        if (isnan(rows[i].high))
                                put(p, "<td></td>");
                        else
                                putf(p, "<td>%.4g</td>", rows[i].high);
                        putf(p, "<td>%.0f%%</td><td>", 100 * rows[i].p_feasible);
                        escn(p, c->evidence ? c->evidence : "", HTML_MAX_SHORT_CHARS);
                        put(p, "</td></tr>\n");
                }
        }
        put(p, "</tbody></table>\n</details>\n");
}

static void put_search(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        _cleanup_free_ char *against = report_against_summary(v);
        if (against) {
                put(p, "<section id=\"against\">\n<h2>Against the old run</h2>\n<p class=\"note\">");
                esc(p, against);
                put(p, "</p>\n</section>\n");
        }
        if (!v->search.on)
                return;
        put(p, "<section id=\"search\">\n<h2>How the search went</h2>\n<p class=\"note\">");
        _cleanup_free_ char *line = report_search_summary(v);
        esc(p, line ? line : "");
        put(p, ".</p>\n");
        put_search_chart(p, x);
        put_search_table(p, x);
        put(p, "</section>\n");
}

static void put_charts(struct page *p, const struct ctx *x) {
        put(p, "<section id=\"charts\">\n<h2>How fast the working ones are</h2>\n");
        if (x->best < 0) {
                put(p, "<p class=\"muted\">No configuration passed: nothing to chart.</p>\n</section>\n");
                return;
        }
        put_bar_chart(p, x);
        put_latency_chart(p, x);
        put(p, "</section>\n");
}

/* ---- each cell ---- */

/* argv as a person would type it: arguments with blanks or quotes in single quotes (a
 * masked "***" stays bare: it is for reading, the journal holds the real value). */
static void put_argv(struct page *p, char *const *argv) {
        for (size_t i = 0; argv && argv[i]; i++) {
                const char *a = argv[i];
                bool plain = *a != 0;
                for (const char *s = a; *s; s++)
                        if (!(((unsigned char)*s >= 0x80) || strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-{}*", *s)))
                                plain = false;
                if (i > 0)
                        put(p, " ");
                if (plain) {
                        esc(p, a);
                        continue;
                }
                put(p, "'");
                for (const char *s = a; *s;) {
                        size_t n = strcspn(s, "'");
                        _cleanup_free_ char *part = strndup(s, n);
                        if (!part)
                                return fail(p, -ENOMEM);
                        esc(p, part);
                        s += n;
                        if (*s == '\'') {
                                put(p, "'\\''");
                                s++;
                        }
                }
                put(p, "'");
        }
}

static void put_check(struct page *p, const struct report_check *k) {
        const char *cls = check_class(k->verdict);
        putf(p, "<div class=\"check %s\"><div class=\"chead\">", cls);
        put_badge(p, cls, verdict_to_string(k->verdict) ? verdict_to_string(k->verdict) : "?");
        put(p, " <b>");
        esc(p, k->name ? k->name : "?");
        put(p, "</b> <span class=\"meta\">");
        put_duration(p, k->latency);
        if (k->streamed && k->ttft) {
                put(p, " · first token ");
                put_duration(p, k->ttft);
        }
        if (k->http_status)
                putf(p, " · HTTP %d", k->http_status);
        if (k->finish_reason) {
                put(p, " · finish ");
                escn(p, k->finish_reason, 40);
        }
        put(p, k->streamed ? " · streamed" : "");
        put(p, "</span></div>\n");
        if (k->detail) {
                put(p, "<p class=\"ckdetail\">");
                escn(p, k->detail, HTML_MAX_EVIDENCE_CHARS);
                put(p, "</p>\n");
        }
        if (k->cause || k->evidence) {
                put(p, "<p class=\"ckev\"><span class=\"cause\">");
                esc(p, k->cause ? k->cause : "");
                put(p, "</span>");
                if (k->evidence) {
                        put(p, " — ");
                        escn(p, k->evidence, HTML_MAX_EVIDENCE_CHARS);
                }
                put(p, "</p>\n");
        }
        if (k->reasoning) {
                putf(p, "<details class=\"reasoning\"><summary>reasoning (%zu bytes)</summary><pre class=\"out\">",
                     strlen(k->reasoning));
                escn(p, k->reasoning, HTML_MAX_OUTPUT_CHARS);
                put(p, "</pre></details>\n");
        }
        if (!k->output)
                put(p, "<pre class=\"out empty\">(no output recorded)</pre>\n");
        else if (!*k->output)
                put(p, "<pre class=\"out empty\">(empty answer)</pre>\n");
        else {
                put(p, "<pre class=\"out\">");
                escn(p, k->output, HTML_MAX_OUTPUT_CHARS);
                put(p, "</pre>\n");
        }
        put(p, "</div>\n");
}

static void put_bench_table(struct page *p, json_t *bench) {
        static const struct {
                enum metric metric;
                enum metric_stat stat;
        } lat[] = {{METRIC_TTFT_MS, METRIC_STAT_P50}, {METRIC_TTFT_MS, METRIC_STAT_P99},
                   {METRIC_ITL_MS, METRIC_STAT_P50}, {METRIC_ITL_MS, METRIC_STAT_P99}};
        size_t i;
        json_t *e;
        put(p, "<table class=\"num\"><thead><tr><th>concurrency</th><th>output tok/s</th><th>total tok/s</th>"
               "<th>req/s</th><th>TTFT p50 ms</th><th>TTFT p99 ms</th><th>ITL p50 ms</th><th>ITL p99 ms</th>"
               "<th>completed / failed</th></tr></thead>\n<tbody>\n");
        json_array_foreach(bench, i, e) {
                static const enum metric rates[] = {METRIC_OUTPUT_TOKENS_PER_S, METRIC_TOTAL_TOKENS_PER_S,
                                                    METRIC_REQUESTS_PER_S};
                putf(p, "<tr><td>%lld</td>",
                     (long long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))));
                for (size_t k = 0; k < ELEMENTSOF(rates); k++) {
                        json_t *n = json_object_get(e, metric_key(rates[k]));
                        put(p, "<td>");
                        if (json_is_number(n))
                                putf(p, "%.1f", json_number_value(n));
                        else
                                put(p, "–");
                        put(p, "</td>");
                }
                for (size_t k = 0; k < ELEMENTSOF(lat); k++) {
                        double d;
                        put(p, "<td>");
                        if (bench_metric(e, lat[k].metric, lat[k].stat, &d))
                                put_number(p, d);
                        else
                                put(p, "–");
                        put(p, "</td>");
                }
                json_t *done = json_object_get(e, metric_key(METRIC_COMPLETED));
                json_t *failed = json_object_get(e, metric_key(METRIC_FAILED));
                put(p, "<td>");
                if (json_is_integer(done))
                        putf(p, "%lld", (long long)json_integer_value(done));
                else
                        put(p, "–");
                put(p, " / ");
                if (json_is_integer(failed))
                        putf(p, "%lld", (long long)json_integer_value(failed));
                else
                        put(p, "–");
                put(p, "</td></tr>\n");
        }
        put(p, "</tbody></table>\n");
        /* the server's own figures beside the client's: its /metrics, its timings */
        bool any = false;
        json_array_foreach(bench, i, e) {
                _cleanup_free_ char *line = report_server_line(e);
                if (!line)
                        continue;
                if (!any)
                        put(p, "<p>The server's own figures:</p>\n<ul class=\"server-metrics\">\n");
                any = true;
                putf(p, "<li>@%lld ", (long long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))));
                esc(p, line);
                put(p, "</li>\n");
        }
        if (any)
                put(p, "</ul>\n");
}

static void put_phases(struct page *p, const struct report_cell *c) {
        usec_t total = 0;
        for (int k = 0; k < _PHASE_MAX; k++)
                total += c->phase[k];
        put(p, "<table class=\"phases\"><tbody>\n");
        for (int k = 0; k < _PHASE_MAX; k++) {
                double pct = total ? 100.0 * (double)c->phase[k] / (double)total : 0;
                put(p, "<tr><th>");
                esc(p, phase_to_string((enum phase)k));
                put(p, "</th><td>");
                if (c->phase[k])
                        put_duration(p, c->phase[k]);
                else
                        put(p, "<span class=\"muted\">not reached</span>");
                putf(p, "</td><td class=\"pb\"><span class=\"pbar\" style=\"width:%.1f%%\"></span></td></tr>\n", pct);
        }
        put(p, "</tbody></table>\n");
}

static void put_facts(struct page *p, const struct report_cell *c) {
        put(p, "<dl class=\"facts\">");
        put(p, "<dt>cell</dt><dd><code>");
        esc(p, c->id);
        putf(p, "</code></dd><dt>distance from defaults</dt><dd>%d</dd>", c->distance);
        if (c->has_attempt) {
                putf(p, "<dt>attempt</dt><dd>%lld (sweep %lld)</dd>", (long long)c->attempt_id,
                     (long long)c->attempt_sweep_id);
                put(p, "<dt>started</dt><dd>");
                put_wall(p, c->started_wall);
                put(p, "</dd><dt>ready after</dt><dd>");
                if (c->ready_after)
                        put_duration(p, c->ready_after);
                else
                        put(p, "never ready");
                put(p, "</dd>");
                if (c->port)
                        putf(p, "<dt>port</dt><dd>%d</dd>", c->port);
                if (c->exit_signal)
                        putf(p, "<dt>ended by</dt><dd>signal %d</dd>", c->exit_signal);
                else if (c->exit_code >= 0)
                        putf(p, "<dt>exit status</dt><dd>%d</dd>", c->exit_code);
                if (c->peak_gpu_mem_mib)
                        putf(p, "<dt>peak GPU memory</dt><dd>%llu MiB</dd>", (unsigned long long)c->peak_gpu_mem_mib);
                if (c->log_path) {
                        put(p, "<dt>log</dt><dd><code>");
                        esc(p, c->log_path);
                        put(p, "</code></dd>");
                }
        }
        put(p, "</dl>\n");
}

static void put_cell(struct page *p, const struct ctx *x, const struct report_ranked *o) {
        const struct report_view *v = x->v;
        const struct report_cell *c = &v->cells[o->index];
        bool best = (int)o->index == x->best;
        const char *cls = verdict_class(c);
        put(p, "<details class=\"cell ");
        put(p, cls);
        put(p, "\" id=\"c-");
        esc(p, c->id);
        put(p, cell_failed(c) ? "\" open>\n<summary>" : "\">\n<summary>");
        put_badge(p, cls, best ? "★ best" : report_cell_verdict(c));
        put(p, " <span class=\"cfg\">");
        put_label(p, v, c, 0);
        put(p, "</span> ");
        put_result(p, v, c);
        if (c->has_attempt && c->evidence) {
                put(p, " <span class=\"ev\">");
                escn(p, c->evidence, 110);
                put(p, "</span>");
        }
        put(p, " ");
        put_short_id(p, x->id_width, c);
        put(p, "</summary>\n<div class=\"cbody\">\n");

        if (cell_failed(c)) {
                put(p, "<h4>Diagnosis</h4>\n<p>");
                put_group_name(p, c);
                put(p, "</p>\n<pre class=\"ev\">");
                escn(p, c->evidence ? c->evidence : "(no evidence recorded)", HTML_MAX_EVIDENCE_CHARS);
                put(p, "</pre>\n");
                put_log_excerpt(p, c);
        } else if (c->excluded)
                put(p, "<p class=\"muted\">Excluded by the matrix's <code>exclude</code> list: never launched.</p>\n");
        else if (!c->has_attempt)
                put(p, "<p class=\"muted\">Not run: the sweep stopped before this cell. "
                       "<code>gauntlet run</code> on the same journal resumes here.</p>\n");

        _cleanup_strv_free_ char **argv = NULL, **env = NULL;
        int r = secrets_mask_argv(c->command ? c->command : c->argv, &argv);
        if (r >= 0)
                r = secrets_mask_env(c->env, &env);
        if (r < 0)
                return fail(p, r);
        put(p, "<h4>Command</h4>\n<pre class=\"cmd\">");
        put_argv(p, argv);
        put(p, "</pre>\n<h4>Environment</h4>\n");
        if (!env || !env[0])
                put(p, "<p class=\"muted\">Nothing set beyond the environment gauntlet ran in.</p>\n");
        else {
                put(p, "<pre class=\"env\">");
                for (size_t i = 0; env[i]; i++) {
                        esc(p, env[i]);
                        put(p, "\n");
                }
                put(p, "</pre>\n");
        }
        if (c->has_attempt) {
                put(p, "<h4>Phases</h4>\n");
                put_phases(p, c);
        }
        _cleanup_free_ char *abandoned = report_abandoned_note(c);
        if (abandoned) {
                put(p, "<p class=\"note\">");
                esc(p, abandoned);
                put(p, "</p>\n");
        }
        if (c->n_checks) {
                putf(p, "<h4>Checks (%zu)</h4>\n", c->n_checks);
                for (size_t i = 0; i < c->n_checks; i++)
                        put_check(p, &c->checks[i]);
        }
        put_cell_eval(p, v, c);
        if (json_array_size(c->bench) > 0) {
                put(p, "<h4>Bench</h4>\n");
                put_bench_table(p, c->bench);
                _cleanup_free_ char *note = report_usage_note(c);
                if (note) {
                        put(p, "<p class=\"note\">");
                        esc(p, note);
                        put(p, "</p>\n");
                }
                _cleanup_free_ char *load = report_load_note(v, c);
                if (load) {
                        put(p, "<p class=\"note\">");
                        esc(p, load);
                        put(p, "</p>\n");
                }
        }
        put_facts(p, c);
        put(p, "</div>\n</details>\n");
}

static void put_cells(struct page *p, const struct ctx *x) {
        put(p, "<section id=\"cells\">\n<h2>Every cell</h2>\n<p class=\"note\">In the order above: best first, failures "
               "open. Each shows its command and environment (secrets masked as <code>" SECRETS_MASK "</code>), "
               "its phases, every check with the answer as the server gave it, and for a failure the evidence "
               "with the log lines around it.</p>\n");
        for (size_t i = 0; i < x->v->n_cells; i++)
                put_cell(p, x, &x->order[i]);
        put(p, "</section>\n");
}

/* ---- host and matrix ---- */

static void put_json_value(struct page *p, json_t *val) {
        if (json_is_string(val))
                escn(p, json_string_value(val), 1000);
        else if (json_is_null(val) || !val)
                put(p, "<span class=\"muted\">unknown</span>");
        else {
                _cleanup_free_ char *t = json_dumps(val, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
                if (!t)
                        return fail(p, -ENOMEM);
                escn(p, t, 2000);
        }
}

static void put_host(struct page *p, const struct ctx *x) {
        const struct report_view *v = x->v;
        json_t *h = v->host_json, *gpus = json_object_get(h, "gpus");
        put(p, "<section id=\"host\">\n<h2>Host and sweep</h2>\n<div class=\"two\">\n<div>\n<h3>Host fingerprint</h3>\n");
        if (json_array_size(gpus) > 0) {
                size_t i;
                json_t *g;
                put(p, "<table class=\"gpus\"><thead><tr><th>#</th><th>GPU</th><th>architecture</th><th>memory</th></tr></thead><tbody>\n");
                json_array_foreach(gpus, i, g) {
                        json_int_t mem = json_integer_value(json_object_get(g, "memory_mib"));
                        putf(p, "<tr><td>%zu</td><td>", i);
                        esc(p, json_str(g, "name") ? json_str(g, "name") : "?");
                        put(p, "</td><td>");
                        esc(p, json_str(g, "arch") ? json_str(g, "arch") : "?");
                        put(p, "</td><td>");
                        if (mem > 0)
                                putf(p, "%lld MiB", (long long)mem);
                        else
                                put(p, "?");
                        put(p, "</td></tr>\n");
                }
                put(p, "</tbody></table>\n");
        } else
                put(p, "<p><b>No GPU information</b> was recorded for this sweep.</p>\n");
        put(p, "<table class=\"kv\"><tbody>\n");
        const char *key;
        json_t *val;
        json_object_foreach(h, key, val) {
                if (strcmp(key, "gpus") == 0)
                        continue;
                if (json_is_object(val) && json_object_size(val) > 0) {
                        const char *k2;
                        json_t *v2;
                        json_object_foreach(val, k2, v2) {
                                put(p, "<tr><th>");
                                esc(p, key);
                                put(p, " ");
                                esc(p, k2);
                                put(p, "</th><td>");
                                put_json_value(p, v2);
                                put(p, "</td></tr>\n");
                        }
                        continue;
                }
                put(p, "<tr><th>");
                esc(p, key);
                put(p, "</th><td>");
                put_json_value(p, val);
                put(p, "</td></tr>\n");
        }
        put(p, "</tbody></table>\n</div>\n<div>\n<h3>Sweep</h3>\n<table class=\"kv\"><tbody>\n");
        char dur[32];
        const struct {
                const char *k, *v;
        } rows[] = {
                {"journal", v->journal_path}, {"matrix file", v->matrix_path}, {"engine", v->engine},
                {"model", v->model},          {"objective", v->objective ? v->objective : OBJECTIVE_DEFAULT},
                {"bind host", v->host},       {"workdir", v->workdir},   {"cwd", v->cwd},
                {"gauntlet", v->version},     {"ended", v->sweep_how ? v->sweep_how : "did not finish (running or killed)"},
                {"startup timeout", v->startup_timeout ? format_duration(v->startup_timeout, dur) : NULL},
        };
        putf(p, "<tr><th>sweep</th><td>%lld (%lld earlier)</td></tr>\n", (long long)v->sweep_id, (long long)v->earlier_sweeps);
        put(p, "<tr><th>started</th><td>");
        put_wall(p, v->sweep_started_wall);
        put(p, "</td></tr>\n");
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                if (!rows[i].v)
                        continue;
                put(p, "<tr><th>");
                esc(p, rows[i].k);
                put(p, "</th><td>");
                esc(p, rows[i].v);
                put(p, "</td></tr>\n");
        }
        if (v->port)
                putf(p, "<tr><th>port</th><td>%d</td></tr>\n", v->port);
        put(p, "</tbody></table>\n</div>\n</div>\n");
        _cleanup_free_ char *pretty = json_dumps(h, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        put(p, "<details class=\"raw\"><summary>The fingerprint as JSON</summary><pre>");
        escn(p, pretty ? pretty : "{}", HTML_MAX_MATRIX_CHARS);
        put(p, "</pre></details>\n</section>\n");
}

static void put_matrix_file(struct page *p, const struct report_view *v) {
        put(p, "<section id=\"matrix-file\">\n<h2>The matrix file</h2>\n<p class=\"note\"><code>");
        esc(p, v->matrix_path ? v->matrix_path : "(unknown path)");
        put(p, "</code> as it was when the sweep began:</p>\n<pre class=\"matrix\">");
        escn(p, v->matrix_text && *v->matrix_text ? v->matrix_text : "(not recorded)", HTML_MAX_MATRIX_CHARS);
        put(p, "</pre>\n</section>\n");
}

/* ---- the page ---- */

static const char css[] =
        ":root{--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--soft:#f6f8fa;--link:#0550ae}\n"
        "*{box-sizing:border-box}\n"
        "html{-webkit-text-size-adjust:100%}\n"
        "body{margin:0;color:var(--fg);background:#fff;font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,"
        "'Noto Sans','DejaVu Sans',Arial,sans-serif}\n"
        ".wrap{max-width:1180px;margin:0 auto;padding:18px 24px 48px}\n"
        "a{color:var(--link)}\n"
        "h1{font-size:27px;line-height:1.25;margin:2px 0 12px;overflow-wrap:anywhere}\n"
        "h2{font-size:20px;margin:34px 0 10px;padding-bottom:4px;border-bottom:1px solid var(--line)}\n"
        "h3{font-size:16px;margin:14px 0 6px}h4{font-size:14px;margin:14px 0 4px;color:var(--muted);"
        "text-transform:uppercase;letter-spacing:.04em}\n"
        "pre,code{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:13px}\n"
        "code{overflow-wrap:anywhere}\n"
        "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:var(--soft);border:1px solid var(--line);"
        "border-radius:6px;padding:8px 10px;margin:6px 0;max-height:30em;overflow:auto;line-height:1.45}\n"
        ".muted{color:var(--muted)}.note{color:var(--muted);margin:4px 0 10px}\n"
        ".k{font-weight:600;color:var(--muted);margin-right:6px}\n"
        ".kicker{color:var(--muted);margin:0;font-size:13px}\n"
        ".answer{border:2px solid;border-radius:10px;padding:10px 16px;margin:10px 0}\n"
        ".answer.ok{border-color:#1a7f37;background:#eefbf1}.answer.none{border-color:#cf222e;background:#fff1f0}\n"
        ".answer p{margin:2px 0}.answer .big{font-size:20px}.answer .mark{font-weight:700}\n"
        ".answer.ok .mark{color:#1a7f37}.answer.none .mark{color:#cf222e}\n"
        ".best a.cfg{font-weight:600}.fig{font-weight:700;white-space:nowrap}\n"
        ".counts{list-style:none;padding:0;margin:8px 0;display:flex;flex-wrap:wrap;gap:6px;align-items:center}\n"
        ".counts .badge{font-size:13px;padding:2px 9px}.counts .total{color:var(--muted)}\n"
        ".why,.hostline{margin:6px 0}.why a.grp{text-decoration:none;color:inherit;margin-right:10px;white-space:nowrap}\n"
        ".why a.grp:hover .cause{text-decoration:underline}\n"
        ".badge{display:inline-block;border:1px solid;border-radius:4px;padding:0 6px;font-weight:700;font-size:12px;"
        "line-height:1.6;text-transform:uppercase;letter-spacing:.03em;white-space:nowrap}\n"
        ".badge.star{background:#ddf4ff;color:#0a3069;border-color:#0969da}\n"
        ".cause{font-weight:600}\n"
        /* each verdict: background, text and border colours; text contrast 7:1 or better */
        ".v-pass{--vb:#dafbe1;--vf:#0f5323;--vd:#2da44e}\n"
        ".v-garbage{--vb:#fbe5f6;--vf:#6e1a60;--vd:#bf3989}\n"
        ".v-wrong{--vb:#fff1e5;--vf:#6f3400;--vd:#e16f24}\n"
        ".v-crash{--vb:#ffe4e2;--vf:#82071e;--vd:#cf222e}\n"
        ".v-timeout{--vb:#fff8c5;--vf:#4d3800;--vd:#bf8700}\n"
        ".v-overload{--vb:#ffe7d1;--vf:#5c2900;--vd:#d1590a}\n"
        ".v-error{--vb:#e6ebf1;--vf:#1f2f45;--vd:#57606a}\n"
        ".v-skipped,.v-notrun,.v-none{--vb:#f6f8fa;--vf:#3d444d;--vd:#afb8c1}\n"
        ".badge,table.heat td{background:var(--vb);color:var(--vf);border-color:var(--vd)}\n"
        ".v-notrun.badge,table.heat td.v-notrun,table.heat td.v-none{border-style:dashed}\n"
        ".heatwrap{overflow-x:auto}\n"
        "table{border-collapse:collapse}\n"
        "table.heat{border-collapse:separate;border-spacing:5px;width:100%;table-layout:fixed}\n"
        "table.heat th{font-weight:600;font-size:13px;text-align:center;overflow-wrap:anywhere;padding:4px}\n"
        "table.heat th[scope=row]{text-align:right;position:sticky;left:0;background:#fff;z-index:1}\n"
        "table.heat th.corner{width:140px;text-align:right;color:var(--muted);font-weight:400}\n"
        "table.heat td{border-width:2px;border-style:solid;border-radius:8px;padding:0;vertical-align:top;height:66px}\n"
        "table.heat td a,table.heat td>span{color:inherit;text-decoration:none}\n"
        "table.heat td a{display:block;padding:7px 9px;height:100%}\n"
        "table.heat td.v-none{padding:7px 9px}\n"
        "table.heat .vw{display:block;font-weight:700;text-transform:uppercase;font-size:12px;letter-spacing:.04em}\n"
        "table.heat .fig,table.heat .cause{display:block;font-size:14px;overflow-wrap:anywhere;white-space:normal}\n"
        "table.heat .hev{display:block;margin-top:3px;font:12px/1.35 ui-monospace,'DejaVu Sans Mono',monospace;"
        "opacity:.85;overflow-wrap:anywhere}\n"
        "table.heat td.best{outline:3px solid #0969da;outline-offset:1px}\n"
        "table.heat td a:hover{box-shadow:inset 0 0 0 2px rgba(0,0,0,.25);border-radius:6px}\n"
        "table.ranked,table.why,table.num,table.kv,table.gpus{width:100%;font-size:14px}\n"
        "table.ranked th,table.ranked td,table.why th,table.why td,table.num th,table.num td,table.kv th,table.kv td,"
        "table.gpus th,table.gpus td"
        "{border-bottom:1px solid var(--line);padding:5px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}\n"
        "table.ranked th{white-space:nowrap}table.ranked td.ev,table.kv td{overflow-wrap:anywhere}code.id{white-space:nowrap}\n"
        "table.ranked tr.best td{background:#f0f8ff}\n"
        "table.ranked td.ev{font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:12px;color:var(--muted)}\n"
        "table.ranked tr{background:none}\n"
        "table.why td:first-child{width:18%}table.why td:nth-child(2){width:30%}\n"
        "table.why pre{margin:0;max-height:9em}\n"
        "ul.cells{margin:0;padding-left:18px}\n"
        "table.num td,table.num th{text-align:right}table.num td:first-child,table.num th:first-child{text-align:left}\n"
        "table.kv th{width:34%;color:var(--muted);font-weight:600}\n"
        ".legend{list-style:none;padding:0;margin:10px 0;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:13px;"
        "color:var(--muted)}\n"
        "figure.chart{margin:14px 0 22px}figcaption{margin-bottom:6px}\n"
        "svg.bars,svg.lines{width:100%;height:auto;display:block}\n"
        "svg text{font-family:system-ui,'DejaVu Sans',Arial,sans-serif;font-size:13px;fill:#1f2328}\n"
        "svg .tick{fill:#59636e;font-size:12px}svg .axis{fill:#59636e;font-size:12px}\n"
        "svg .ptitle{font-weight:600;font-size:14px}\n"
        "svg .grid{stroke:#d8dee4;stroke-width:1}\n"
        "svg .bar{fill:#4ac26b}svg .bar.best{fill:#1a7f37}svg .val{font-weight:600}\n"
        "svg a text.lbl{fill:#0550ae}\n"
        "svg .ci{stroke-width:3;stroke:#2da44e}svg .ci.miss{stroke:#e16f24}svg .ci.ref{stroke:#0969da}\n"
        "svg .pt{fill:#1a7f37}svg .pt.miss{fill:#bc4c00}svg .pt.ref{fill:#0969da}\n"
        "svg .refline{stroke:#0969da;stroke-width:1.5;stroke-dasharray:5 4}\n"
        ".slegend{list-style:none;padding:0;margin:6px 0;display:flex;flex-wrap:wrap;gap:4px 22px;font-size:14px}\n"
        ".slegend svg{vertical-align:middle}\n"
        "details.cell{border:1px solid var(--line);border-left:6px solid var(--vd);border-radius:6px;margin:8px 0}\n"
        "details.cell>summary{cursor:pointer;padding:7px 10px;list-style-position:inside;overflow-wrap:anywhere}\n"
        "details.cell>summary .cfg{font-weight:600;margin:0 6px}\n"
        "details.cell>summary .ev{color:var(--muted);font-family:ui-monospace,'DejaVu Sans Mono',monospace;font-size:12px;"
        "margin-left:6px}\n"
        "details.cell>summary .id{float:right;color:var(--muted);margin-left:8px}\n"
        ".cbody{padding:0 14px 10px;border-top:1px solid var(--line)}\n"
        ".check{border:1px solid var(--line);border-left:4px solid var(--vd);border-radius:6px;padding:6px 10px;margin:8px 0}\n"
        ".chead .meta{color:var(--muted);font-size:13px;margin-left:6px}\n"
        ".ckev{margin:4px 0;overflow-wrap:anywhere}\n"
        "pre.out{max-height:16em}pre.out.empty{color:var(--muted);font-style:italic}\n"
        "pre.log .ln{color:#8c959f;user-select:none}\n"
        "pre.log mark{background:#fff3b0;color:inherit;display:inline-block;width:100%;font-weight:600}\n"
        "pre.ev{border-color:#e6b3b3;background:#fffafa}\n"
        ".logname{margin:8px 0 2px;font-size:14px}\n"
        "table.phases{font-size:13px;min-width:50%}\n"
        "table.phases th{text-align:left;padding:2px 12px 2px 0;font-weight:600;color:var(--muted)}\n"
        "table.phases td{padding:2px 12px 2px 0;white-space:nowrap}\n"
        "table.phases td.pb{width:60%}\n"
        ".pbar{display:inline-block;height:10px;background:#54aeff;border-radius:2px;vertical-align:middle}\n"
        "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;font-size:13px;margin:12px 0 0}\n"
        "dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;overflow-wrap:anywhere}\n"
        ".two{display:grid;grid-template-columns:1fr 1fr;gap:0 28px}\n"
        "@media (max-width:820px){.two{grid-template-columns:1fr}.wrap{padding:12px}}\n"
        "pre.matrix{max-height:40em}\n"
        "footer{margin-top:40px;color:var(--muted);font-size:13px;border-top:1px solid var(--line);padding-top:8px}\n"
        "@media print{body{font-size:10.5pt}.wrap{max-width:none;padding:0}"
        "pre{max-height:none;overflow:visible;background:#fff}"
        "details::details-content{content-visibility:visible;display:block}"
        "details>summary{list-style:none}a{color:inherit;text-decoration:none}"
        "h2{break-after:avoid}.check,tr,figure{break-inside:avoid}"
        ".answer.ok,.answer.none{background:#fff}"
        "*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}\n";

static void page_release(struct page *p) {
        secrets_values_release(&p->secrets);
}

int report_html(const struct report_view *v, struct buf *out) {
        _cleanup_(page_release) struct page page = {.out = out};
        struct page *p = &page;
        _cleanup_free_ struct group *groups = NULL;
        _cleanup_(ctx_release) struct ctx x = {0};
        int r = ctx_init(&x, v);
        if (r < 0)
                return r;
        if ((r = secrets_collect(p, v)) < 0)
                return r;
        groups = calloc(v->n_cells + 1, sizeof(*groups));
        if (!groups)
                return -ENOMEM;
        size_t n_groups = failure_groups(&x, groups);

        put(p, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
               "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
               "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
               "img-src data:; script-src 'sha256-" PRINT_SCRIPT_SHA256 "'\">\n"
               "<meta name=\"generator\" content=\"gauntlet ");
        esc(p, v->version ? v->version : "");
        put(p, "\">\n<title>gauntlet: ");
        esc(p, v->engine ? v->engine : "?");
        if (v->model) {
                put(p, " · ");
                esc(p, v->model);
        }
        putf(p, " · %zu of %zu pass</title>\n<style>\n%s</style>\n</head>\n<body>\n<div class=\"wrap\">\n", x.passed,
             v->n_cells, css);
        put_header(p, &x, groups, n_groups);
        put(p, "<main>\n");
        put_matrix(p, &x);
        put_failures(p, &x, groups, n_groups);
        put_eval(p, &x);
        put_charts(p, &x);
        put_search(p, &x);
        put_cells(p, &x);
        put_host(p, &x);
        put_matrix_file(p, v);
        put(p, "</main>\n<footer>Rendered by <code>gauntlet report --format html</code> from <code>");
        esc(p, v->journal_path ? v->journal_path : "?");
        put(p, "</code>. Self-contained: nothing is fetched; server text is shown as text.</footer>\n</div>\n<script>" PRINT_SCRIPT
               "</script>\n</body>\n</html>\n");
        return p->r < 0 ? p->r : 0;
}
