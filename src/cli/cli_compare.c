/* cli_compare.c -- `gauntlet compare`: two sweeps side by side, the exit status a gate
 * (docs/compare.md). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "journal/journal.h"
#include "report/compare_report.h"
#include "results/compare.h"
#include "results/report_load.h"

static const char compare_help[] =
        "usage: gauntlet compare [OPTIONS] OLD NEW\n"
        "       gauntlet compare [OPTIONS] JOURNAL --sweeps OLD_ID NEW_ID\n\n"
        "Compares two sweeps: the latest of two journals, or two sweeps of one journal. Cells\n"
        "are matched by their axis values. For each: the verdict's change (pass to a failure is\n"
        "a regression), the objective's change with a 95% interval (a bootstrap over the\n"
        "per-request samples; a change inside the noise is no change), the accuracy's change\n"
        "with the eval's two-proportion z-test; the best cell's change and what the provenance\n"
        "says changed.\n"
        "  --format F                 text, markdown, json or html (default text)\n"
        "  --max-slowdown PCT         a significant slowdown up to PCT is allowed (default 5%)\n"
        "  --max-accuracy-drop PCT    a significant accuracy drop up to PCT points is allowed\n"
        "                             (default 0)\n"
        "  --max-steal PCT            a bench level during which the hypervisor and other processes\n"
        "                             took more than PCT of the host's CPU time was disturbed\n"
        "                             (default 5%)\n"
        "  --sweeps OLD_ID NEW_ID     two sweeps of one journal (ids as `gauntlet report` names them)\n"
        "Exit status: 0 nothing regressed beyond the thresholds, 1 something did, 2 bad usage or\n"
        "input, 3 nothing regressed but a slowdown cannot be told from a disturbed host's (run\n"
        "it again on a quiet host).\n";

int cli_parse_percent(const char *s, double *ret) {
        char *end = NULL;
        errno = 0;
        double x = strtod(s, &end);
        if (end == s || errno || (*end && strcmp(end, "%") != 0) || !isfinite(x) || x < 0 || x > 1000)
                return -EINVAL;
        *ret = x / 100.0;
        return 0;
}

/* The view of sweep id (0: the latest) of the journal at path; prints the error. */
static int load(const char *path, int64_t id, bool samples, struct report_view **ret) {
        _cleanup_journal_ struct journal *j = NULL;
        int r = journal_open_existing(path, &j);
        if (r < 0) {
                cli_error("cannot open journal '%s': %s", path, journal_strerror(r));
                return r;
        }
        r = id ? report_load_view_sweep(j, id, ret) : report_load_view(j, ret);
        if (r == -ENOENT) {
                if (id)
                        cli_error("journal '%s' has no sweep %lld", path, (long long)id);
                else
                        cli_error("journal '%s' holds no sweep yet", path);
                return r;
        }
        if (r >= 0 && samples)
                r = report_load_samples(j, *ret);
        if (r < 0) {
                const char *detail = journal_last_error(j);
                cli_error("cannot read journal '%s': %s%s%s", path, journal_strerror(r), *detail ? ": " : "", detail);
        }
        return r;
}

static int render(const struct compare_result *c, int format, struct buf *out) {
        if (format == 0)
                return compare_report_text(c, out);
        if (format == 1)
                return compare_report_markdown(c, out);
        if (format == 3)
                return compare_report_html(c, out);
        json_t *j = NULL;
        int r = compare_report_json(c, &j);
        if (r < 0)
                return r;
        char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
        json_decref(j);
        if (!t || buf_puts(out, t) < 0 || buf_puts(out, "\n") < 0)
                r = -ENOMEM;
        free(t);
        return r;
}

int cli_compare(int argc, char **argv) {
        static const char *const formats[] = {"text", "markdown", "json", "html", NULL};
        const char *format = "text", *paths[2] = {NULL, NULL};
        size_t n_paths = 0;
        long sweeps[2] = {0, 0};
        struct compare_options o;
        compare_options_init(&o);
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                const char *val = i + 1 < argc ? argv[i + 1] : NULL;
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        fputs(compare_help, stdout);
                        return EXIT_OK;
                } else if (strcmp(a, "--format") == 0) {
                        if (!val)
                                return cli_usage_error("compare", "--format needs a value");
                        format = argv[++i];
                } else if (strcmp(a, "--max-slowdown") == 0 || strcmp(a, "--max-accuracy-drop") == 0 ||
                           strcmp(a, "--max-steal") == 0) {
                        double *to = strcmp(a, "--max-steal") == 0 ? &o.max_steal
                                     : a[6] == 's'                 ? &o.max_slowdown
                                                                   : &o.max_accuracy_drop;
                        if (!val || cli_parse_percent(val, to) < 0)
                                return cli_usage_error("compare", "%s needs a percentage from 0 to 1000, as 5%%", a);
                        i++;
                } else if (strcmp(a, "--sweeps") == 0) {
                        if (i + 2 >= argc || cli_parse_int(argv[i + 1], 1, INT64_MAX, &sweeps[0]) < 0 ||
                            cli_parse_int(argv[i + 2], 1, INT64_MAX, &sweeps[1]) < 0)
                                return cli_usage_error("compare", "--sweeps needs two sweep ids, as --sweeps 3 5");
                        i += 2;
                } else if (a[0] == '-' && a[1])
                        return cli_usage_error("compare", "unknown option '%s'", a);
                else if (n_paths == 2)
                        return cli_usage_error("compare", "two journals at most ('%s')", a);
                else
                        paths[n_paths++] = a;
        }
        int f = cli_parse_choice(format, formats);
        if (f < 0)
                return cli_usage_error("compare", "unknown format '%s' (text, markdown, json, html)", format);
        if (sweeps[0] && n_paths != 1)
                return cli_usage_error("compare", "--sweeps compares two sweeps of one journal");
        if (!sweeps[0] && n_paths != 2)
                return cli_usage_error("compare", "what to compare? (gauntlet compare OLD NEW)");
        const char *new_path = n_paths == 2 ? paths[1] : paths[0];

        _cleanup_report_view_ struct report_view *old = NULL, *new = NULL;
        if (load(paths[0], sweeps[0], true, &old) < 0 || load(new_path, sweeps[1], true, &new) < 0)
                return EXIT_USAGE;
        if (report_view_mask_secrets(old) < 0 || report_view_mask_secrets(new) < 0) {
                cli_error("out of memory");
                return EXIT_USAGE;
        }
        _cleanup_compare_result_ struct compare_result *c = NULL;
        int r = compare_views(old, new, &o, &c);
        if (r == -EINVAL) {
                cli_error("the two sweeps rank by different objectives ('%s' and '%s'): nothing to compare",
                          old->objective ? old->objective : "smoke", new->objective ? new->objective : "smoke");
                return EXIT_USAGE;
        }
        _cleanup_buf_ struct buf out;
        buf_init(&out, 0);
        if (r >= 0)
                r = render(c, f, &out);
        if (r < 0) {
                cli_error("cannot compare: %s", strerror(-r));
                return EXIT_USAGE;
        }
        if (out.len && fwrite(out.data, 1, out.len, stdout) != out.len) {
                cli_error("cannot write output: %s", strerror(errno));
                return EXIT_USAGE;
        }
        return c->regressed ? EXIT_FAILED : c->inconclusive ? EXIT_INCONCLUSIVE : EXIT_OK;
}
