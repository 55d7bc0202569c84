/* sweep_count.c -- the sweep's rule for counting tokens (sweep_count.h). */
#include "run/sweep_count.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/util.h"
#include "io/tokenizer.h"
#include "results/results.h"
#include "results/report_load.h"

/* Flags whose value names the model or its tokenizer, in the engines' spellings. */
static const char *const model_flags[] = {"-m", "--model", "--model-path", "--tokenizer", "--tokenizer-path", NULL};

/* A path worth trying: a .gguf file, a tokenizer.json, or a folder. */
static bool candidate(const char *p) {
        struct stat st;
        if (!p || !*p || stat(p, &st) < 0)
                return false;
        if (S_ISDIR(st.st_mode))
                return true;
        size_t n = strlen(p);
        return S_ISREG(st.st_mode) && ((n >= 5 && strcmp(p + n - 5, ".gguf") == 0) ||
                                       (n >= 14 && strcmp(p + n - 14, "tokenizer.json") == 0));
}

static int try_open(struct sweep_count *sc, const char *path, char **ret_error) {
        struct tokenizer *t = NULL;
        int r = tokenizer_open(path, &t, ret_error);
        if (r < 0)
                return r;
        char *what = strdup_printf("%s (%s)", tokenizer_describe(t), path);
        if (!what) {
                tokenizer_free(t);
                return -ENOMEM;
        }
        sc->tokenizer = t;
        sc->what = what;
        sc->rule.tokenizer = t;
        sc->rule.tokenizer_what = what;
        return 0;
}

/* The values of the model flags in args ("-m X" and "--model=X"). */
static int args_models(char *const *args, char ***ret) {
        for (size_t i = 0; args && args[i]; i++)
                for (size_t f = 0; model_flags[f]; f++) {
                        size_t n = strlen(model_flags[f]);
                        const char *val = NULL;
                        if (strcmp(args[i], model_flags[f]) == 0 && args[i + 1])
                                val = args[i + 1];
                        else if (strncmp(args[i], model_flags[f], n) == 0 && args[i][n] == '=')
                                val = args[i] + n + 1;
                        int r;
                        if (val && (r = strv_push(ret, val)) < 0)
                                return r;
                }
        return 0;
}

int sweep_count_open(const struct matrix *m, struct sweep_count *sc, char **ret_error) {
        *sc = (struct sweep_count){0};
        if (m->tokenizer && strcmp(m->tokenizer, "none") == 0) {
                sc->note = strdup("tokenizer: none");
                return sc->note ? 0 : -ENOMEM;
        }
        if (m->tokenizer) {
                _cleanup_free_ char *why = NULL;
                int r = try_open(sc, m->tokenizer, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0) {
                        if (ret_error)
                                *ret_error = strdup_printf("line %u: tokenizer: %s", m->line_tokenizer,
                                                           why ? why : strerror(-r));
                        return -EINVAL;
                }
                return 0;
        }
        _cleanup_strv_free_ char **paths = NULL;
        int r;
        if (m->model && (r = strv_push(&paths, m->model)) < 0)
                return r;
        if ((r = args_models(m->args, &paths)) < 0)
                return r;
        /* an axis that gives the model flag a value: its values too (one model, written in
         * each value, is still the sweep's one model) */
        for (size_t a = 0; a < m->n_axes; a++)
                for (size_t v = 0; v < m->axes[a].n_values; v++)
                        if ((r = args_models(m->axes[a].values[v].args, &paths)) < 0)
                                return r;
        _cleanup_free_ char *last = NULL;
        for (size_t i = 0; paths && paths[i]; i++) {
                if (!candidate(paths[i]))
                        continue;
                free(last);
                last = NULL;
                r = try_open(sc, paths[i], &last);
                if (r == 0 || r == -ENOMEM)
                        return r;
        }
        sc->note = last ? TAKE_PTR(last)
                        : strdup("no tokenizer file in the model's path or args (set tokenizer: in the matrix)");
        return sc->note ? 0 : -ENOMEM;
}

/* The rule a launch's bench (of cell id, started then) sets, kept in *best when it is the
 * earliest so far (*best_started its start). */
static void consider(const json_t *bench, const char *id, usec_t started, struct count_rule *best,
                     usec_t *best_started) {
        if (!bench || (best->bytes_per_token > 0 && started >= *best_started))
                return;
        struct count_rule probe = {0};
        if (count_rule_adopt(&probe, bench, id) <= 0) {
                json_decref(probe.calibration);
                return;
        }
        json_decref(best->calibration);
        *best = probe;
        *best_started = started;
}

int sweep_count_from_journal(struct journal *j, struct sweep_count *sc) {
        if (sc->rule.tokenizer)
                return 0;
        _cleanup_report_view_ struct report_view *v = NULL;
        int r = report_load_view(j, &v);
        if (r < 0)
                return r == -ENOMEM ? r : 0;
        /* every launch that passed, not only the one a report shows: a cell measured again
         * shows its later launch, and the rule was set by its first */
        struct count_rule first = {0};
        usec_t first_started = 0;
        for (size_t i = 0; i < v->n_cells; i++) {
                const struct report_cell *c = &v->cells[i];
                if (!c->has_attempt)
                        continue;
                for (size_t k = 0; k < json_array_size(c->earlier); k++)
                        consider(json_array_get(c->earlier, k), c->id, c->earlier_started[k], &first, &first_started);
                if (c->verdict == VERDICT_PASS)
                        consider(c->bench, c->id, c->started_wall, &first, &first_started);
        }
        if (!(first.bytes_per_token > 0) || (sc->rule.bytes_per_token > 0 && first_started >= sc->from_started)) {
                json_decref(first.calibration);
                return 0;
        }
        bool had = sc->rule.bytes_per_token > 0;
        json_decref(sc->rule.calibration);
        sc->rule = first;
        sc->from_started = first_started;
        return had ? 1 : 0;
}

void sweep_count_release(struct sweep_count *sc) {
        json_decref(sc->rule.calibration);
        tokenizer_free(sc->tokenizer);
        free(sc->what);
        free(sc->note);
        *sc = (struct sweep_count){0};
}
