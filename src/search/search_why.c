/* search_why.c -- what the search says of a cell it does not launch: the line that
 * condemned it, quoted; the requirement it breaks; the memory it would run out of; or how far
 * below the best the model puts it (docs/search.md, "What people see"). */
#include "search/search.h"
#include "search/search_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "text/buf.h"

static void put_feature(struct buf *b, const struct search_space *s, uint64_t key) {
        for (int i = 0; i < key_order(key); i++)
                buf_printf(b, "%s%s=%s", i ? " with " : "", s->axis_names[key_axis(key, i)],
                           s->value_names[key_axis(key, i)][key_value(key, i)]);
}

void search_kind_words(const char *kind, struct buf *past, const char **ret_noun) {
        static const struct {
                const char *verdict, *past, *noun;
        } w[] = {
                {"crash", "crashed", "crash"},       {"garbage", "answered garbage", "garbage"},
                {"wrong", "answered wrong", "wrong answers"}, {"timeout", "timed out", "timeout"},
                {"overload", "failed under load", "failure under load"}, {"error", "failed", "failure"},
        };
        const char *slash = kind ? strchr(kind, '/') : NULL;
        size_t vl = kind ? (slash ? (size_t)(slash - kind) : strlen(kind)) : 0;
        for (size_t i = 0; i < ELEMENTSOF(w); i++)
                if (kind && strlen(w[i].verdict) == vl && strncmp(kind, w[i].verdict, vl) == 0) {
                        buf_puts(past, w[i].past);
                        if (slash && slash[1])
                                buf_printf(past, " (%s)", slash + 1);
                        *ret_noun = w[i].noun;
                        return;
                }
        buf_puts(past, "failed");
        *ret_noun = "failure";
}

/* Whether value x of axis a is a larger size than value y (an axis of sizes: fit_sizes). */
static bool larger_size(const struct search_model *m, size_t a, size_t x, size_t y) {
        const double *sz = m->mem_size ? m->mem_size + m->voff[a] : NULL;
        return sz && sz[x] >= 0 && sz[y] >= 0 && sz[x] > sz[y];
}

/* Why cell k, whose sizes are past a launched cell's that ran out of memory (mem_over), runs
 * out too: by the sizes, the allocation that failed, or the context its line says fits. */
static void why_past(const struct search_model *m, size_t k, struct buf *b) {
        const struct search_space *s = m->s;
        size_t x = (size_t)m->mem_over[k], said = 0;
        const size_t *c = s->choice + k * s->n_axes, *cx = s->choice + x * s->n_axes;
        buf_printf(b, "predicted crash (oom): cell %.8s ran out of memory with these values but", s->ids ? s->ids[x] : "?");
        bool larger = false;
        for (size_t a = 0; a < s->n_axes; a++)
                if (c[a] != cx[a]) {
                        buf_printf(b, "%s %s=%s (here %s)", said++ ? "," : "", s->axis_names[a], s->value_names[a][cx[a]],
                                   s->value_names[a][c[a]]);
                        larger |= larger_size(m, a, c[a], cx[a]);
                }
        if (m->mem_by_room && m->mem_by_room[k]) {
                /* by_room: the context its line says fits */
                const char *said_at = m->obs[x].evidence;
                double room = search_alloc_room(m->obs[x].evidence, &said_at);
                buf_printf(b, "; its line says the memory left holds a context of %.0f at most (\"%s", room,
                           said_at > m->obs[x].evidence ? "…" : "");
                search_put_quote(b, said_at);
                buf_puts(b, "\")");
                larger = false;
                for (size_t a = 0; a < s->n_axes; a++)
                        larger |= c[a] != cx[a] && larger_size(m, a, c[a], cx[a]) && !search_axis_context(s, a);
        } else if (m->mem_by_alloc && m->mem_by_alloc[k]) {
                /* search_alloc_predict: the axes it showed alike */
                buf_puts(b, "; the allocation that failed (\"");
                search_put_quote(b, m->obs[x].evidence);
                buf_puts(b, "\") failed at one size in cells that differ on");
                said = 0;
                for (size_t a = 0; a < s->n_axes; a++)
                        if (c[a] != cx[a] && !larger_size(m, a, c[a], cx[a]))
                                buf_printf(b, "%s %s", said++ ? "," : "", s->axis_names[a]);
        }
        if (larger)
                buf_puts(b, ", and a larger size needs no less memory");
}

/* "predicted crash: attn=fa3 crashed (arch) in 3 of 3 cells: 8e5b8715, ..." */
static int why_fail(const struct search_model *m, size_t k, struct buf *b) {
        const struct search_space *s = m->s;
        _cleanup_free_ uint64_t *keys = calloc(search_features_per_cell(s->n_axes), sizeof(uint64_t));
        if (!keys)
                return -ENOMEM;
        size_t nf = search_cell_features(s, k, keys);
        const struct feat *top = NULL;
        for (size_t i = 0; i < nf; i++) {
                const struct feat *f = search_feat_find(&m->fm, keys[i]);
                if (f && !f->cleared && f->n_failed > 0 && (!top || search_blame(m, f, NULL) > search_blame(m, top, NULL)))
                        top = f;
        }
        const struct require *r = search_broken_requirement(m, k, NULL);
        if (r) {
                _cleanup_buf_ struct buf past;
                buf_init(&past, 256);
                const char *noun;
                search_kind_words(m->obs[r->cell].kind, &past, &noun);
                buf_printf(b, "predicted %s: %s=%s requires %s=%s, by the evidence of cell %.8s (%s)", noun,
                           s->axis_names[r->a], s->value_names[r->a][r->x], s->axis_names[r->b],
                           s->value_names[r->b][r->y], s->ids ? s->ids[r->cell] : "?", buf_str(&past));
                return 0;
        }
        if (m->ctx_over[k] >= 0) {
                size_t x = (size_t)m->ctx_over[k];
                buf_printf(b, "predicted overload (context): cell %.8s was refused the bench for its length with as much "
                              "context for each request or more (\"",
                           s->ids ? s->ids[x] : "?");
                search_put_quote(b, m->obs[x].evidence);
                buf_puts(b, "\")");
                return 0;
        }
        if (m->mem_over && m->mem_over[k] >= 0) {
                why_past(m, k, b);
                return 0;
        }
        double oom = search_oom_chance(m, k);
        if (oom >= 0.5 && (!top || 1 - oom < 1 - search_blame(m, top, NULL))) {
                /* the memory model's doing: its two costliest values here */
                const size_t *c = s->choice + k * s->n_axes;
                size_t first = 0, second = 0;
                for (size_t a = 1; a < s->n_axes; a++)
                        if (m->mem_w[m->voff[a] + c[a]] > m->mem_w[m->voff[first] + c[first]])
                                first = a;
                second = first == 0 && s->n_axes > 1 ? 1 : 0;
                for (size_t a = 0; a < s->n_axes; a++)
                        if (a != first && m->mem_w[m->voff[a] + c[a]] > m->mem_w[m->voff[second] + c[second]])
                                second = a;
                buf_printf(b, "predicted crash (oom): %.0f%% chance to run out of memory, by what %zu launches "
                              "(%zu out of memory) say each value costs; here %s=%s",
                           100 * oom, m->n_mem, m->n_oom, s->axis_names[first], s->value_names[first][c[first]]);
                if (second != first)
                        buf_printf(b, " and %s=%s", s->axis_names[second], s->value_names[second][c[second]]);
                buf_puts(b, " cost the most");
                return 0;
        }
        if (!top) {
                buf_printf(b, "predicted to fail: %.0f%% chance to serve right", 100 * m->pf[k]);
                return 0;
        }
        size_t pair_by = top->named == NAMED_PAIR ? top->pair_by : 0;
        if (top->named_by || top->sig_by || pair_by) {
                /* the line that condemned it, quoted */
                size_t by = (top->named_by ? top->named_by : pair_by ? pair_by : top->sig_by) - 1;
                _cleanup_buf_ struct buf past;
                buf_init(&past, 256);
                const char *noun;
                search_kind_words(m->obs[by].kind, &past, &noun);
                buf_printf(b, "predicted %s: ", noun);
                put_feature(b, s, top->key);
                if (top->named_by || pair_by)
                        buf_printf(b, " %s %s the line of cell %.8s, which %s: ", pair_by ? "are" : "is",
                                   top->named_by && top->named_how == SEARCH_NAMES_OTHERS
                                           ? "left out of the values that work by"
                                           : "named by",
                                   s->ids ? s->ids[by] : "?", buf_str(&past));
                else
                        buf_printf(b,
                                   " %s never seen serving that the %zu cells that %s alike share "
                                   "(cell %.8s: ",
                                   key_order(top->key) == 2 ? "are the one pair" : "is the one value", top->sig_cells,
                                   buf_str(&past), s->ids ? s->ids[by] : "?");
                buf_puts(b, "\"");
                search_put_quote(b, m->obs[by].evidence);
                buf_puts(b, top->named_by || pair_by ? "\"" : "\")");
                return 0;
        }
        /* the commonest kind among the failed cells holding it */
        const char *kind = NULL;
        size_t best_count = 0;
        for (size_t x = 0; x < s->n_cells; x++) {
                const struct search_obs *o = &m->obs[x];
                if (o->state != SEARCH_INFEASIBLE || !search_cell_has(s, x, top->key))
                        continue;
                size_t count = 0;
                for (size_t y = 0; y < s->n_cells; y++)
                        count += m->obs[y].state == SEARCH_INFEASIBLE && streq_ptr(m->obs[y].kind, o->kind) &&
                                 search_cell_has(s, y, top->key);
                if (count > best_count) {
                        best_count = count;
                        kind = o->kind;
                }
        }
        _cleanup_buf_ struct buf past;
        buf_init(&past, 256);
        const char *noun;
        search_kind_words(kind, &past, &noun);
        buf_printf(b, "predicted %s: ", noun);
        put_feature(b, s, top->key);
        buf_printf(b, " %s in %zu of %u cell%s", buf_str(&past), best_count, top->n_launched,
                   top->n_launched == 1 ? "" : "s");
        size_t named = 0;
        for (size_t x = 0; x < s->n_cells && named < 4; x++)
                if (m->obs[x].state == SEARCH_INFEASIBLE && streq_ptr(m->obs[x].kind, kind) && search_cell_has(s, x, top->key)) {
                        buf_printf(b, "%s%.8s", named ? ", " : ": ", s->ids ? s->ids[x] : "?");
                        named++;
                }
        if (best_count > named)
                buf_puts(b, ", …");
        if (m->pf[k] > 0.005)
                buf_printf(b, " (%.0f%% chance to serve right)", 100 * m->pf[k]);
        return 0;
}

char *search_model_why(const struct search_model *m, size_t k, bool budget_spent) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 4096);
        if (budget_spent)
                buf_puts(&b, "budget spent; ");
        struct search_prediction p;
        search_model_predict(m, k, &p);
        if (p.p_feasible < SEARCH_FAIL_CHANCE) {
                if (why_fail(m, k, &b) < 0)
                        return NULL;
        } else if (m->n_y == 0) {
                buf_printf(&b, "predicted to serve right by %.0f%% chance, with no figure to beat yet", 100 * p.p_feasible);
        } else {
                double ratio_mean = exp(m->mu[k] - m->y_best), ratio_high = exp(m->mu[k] + 2 * search_cell_sd(m, k) - m->y_best);
                if (ratio_high < 1)
                        buf_printf(&b, "predicted at most %.2fx the best", ratio_high);
                else
                        buf_printf(&b, "predicted %.2fx the best (at most %.2fx), %.1f%% chance to beat it", ratio_mean,
                                   ratio_high, 100 * p.chance);
                if (p.p_feasible < 0.9)
                        buf_printf(&b, ", %.0f%% chance to serve right", 100 * p.p_feasible);
        }
        buf_printf(&b, " (model of %zu cell%s)", m->n_launched, m->n_launched == 1 ? "" : "s");
        return buf_detach(&b);
}

void search_put_quote(struct buf *b, const char *e) {
        e = e ? e : "";
        size_t n = strlen(e), cut = n;
        if (cut > SEARCH_QUOTE_MAX) {
                cut = SEARCH_QUOTE_MAX;
                while (cut > 0 && (e[cut] & 0xC0) == 0x80)
                        cut--; /* not inside a UTF-8 character */
        }
        for (size_t i = 0; i < cut; i++)
                buf_append(b, iscntrl((unsigned char)e[i]) || e[i] == '"' ? (e[i] == '"' ? "'" : "?") : e + i, 1);
        if (cut < n)
                buf_puts(b, "…");
}
