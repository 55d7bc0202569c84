/* search.c -- strategy: search: a feasibility model and a speed model, and the next cell. */
#include "search/search.h"
#include "search/search_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/buf.h"
#include "base/util.h"
#include "gate/diagnose.h"

/* ---- features: a value, a pair or a triple of values of different axes ---------------- */

/* Failures are told apart by class (their verdict, and for a crash its cause): each class
 * has blockers of its own, with priors by order (1, 2, 3 values) that say where such
 * failures come from. A kernel built for another GPU is one value's doing; memory runs out
 * where two or three hungry values meet; a bad pair of flags is a pair; garbage and hangs
 * are mostly one value's. A cell serves right when it holds no blocker of any class seen. */
struct fail_class {
        const char *prefix;   /* of the failure's kind ("crash/arch"); NULL: the rest */
        double prior[4];
        bool memory;          /* memory ran out: the whole configuration's doing */
};
static const struct fail_class CLASSES[] = {
        {"crash/arch", {0, 0.30, 0.01, 0.002}, false},
        {"crash/oom", {0, 0.04, 0.05, 0.02}, true},
        {"crash/signal", {0, 0.04, 0.05, 0.02}, true}, /* the OOM killer's SIGKILL (obs_class) */
        {"crash", {0, 0.08, 0.04, 0.005}, false},       /* config, cuda, exit...: flags, pairs */
        {"garbage", {0, 0.15, 0.02, 0.004}, false},
        {"wrong", {0, 0.15, 0.02, 0.004}, false},
        {"timeout", {0, 0.20, 0.02, 0.003}, false},
        /* a request longer than the context: a short context's doing, alone (vLLM's
         * --max-model-len) or beside the slots that divide it (llama.cpp's -c over -np) */
        {"overload/context", {0, 0.15, 0.30, 0.004}, false},
        {"overload", {0, 0.15, 0.02, 0.004}, false},
        {NULL, {0, 0.10, 0.02, 0.004}, false},
};
#define N_CLASSES ELEMENTSOF(CLASSES)
_Static_assert(ELEMENTSOF(CLASSES) == SEARCH_N_CLASSES, "search_int.h's count of the classes");
#define CLASS_ARCH 0   /* CLASSES[0]: crash/arch, one value's doing */
#define CLASS_SIGNAL 2 /* CLASSES[2]: crash/signal */
#define CLASS_CRASH 3  /* CLASSES[3]: the other crashes */
#define CLASS_CONTEXT 7 /* CLASSES[7]: overload/context */
/* Where the matrix has an axis of a context's length (search_axis_context), a failure of
 * CLASS_CONTEXT is that axis's doing, a value of it alone or beside another: a feature that
 * holds none of its values is no suspect. A written-apart llama.cpp space of -c x -np
 * failed at -np 64 beside every -c but 0 (the model's whole context, where its best is) and
 * the search, blaming -np 64, never launched it there. */
#define PRIOR_OFF_CONTEXT 1e-4

/* A pair with an axis whose flag the failure's evidence names; a pair whose two flags it
 * quotes, each with the value the cell had ("--a x cannot be used with --b y"). */
#define PRIOR_NAMED 0.35
#define PRIOR_QUOTED 0.8
/* A value a failure's line names (docs/search.md, "How evidence is read"): condemned at
 * once, for that class of failure. The one value the cells failing with one signature
 * share: the likely culprit, not a sure one (the cells may fail alike by chance). */
#define PRIOR_VALUE_NAMED 0.999
/* A value named by a line that says the failure is the configuration's (search_says_
 * configuration): a suspect, as the one value a signature's cells share is; its pairs in
 * that cell are suspects too, as a named flag's are. */
#define PRIOR_NAMED_PARTLY 0.5
#define PRIOR_SIGNATURE 0.5
/* Cells failing with one signature, their one shared value the culprit (read_signatures;
 * or the pair of the two they share, never seen serving), that condemn it as a line that
 * names it does (line_condemned, named_pairs): chance aside, three crashes with one line over
 * different partners of one value are that value's doing. */
#define SIGNATURE_CONDEMNS 3
/* A value of the same name as one a failure's line named, on another axis (the K and the V
 * cache's `q8_0`, a prefill and a decode attention backend): what made it fail on one often
 * makes it fail on the other (a kernel not built for the GPU, a block size the head size
 * does not divide), not always (a requirement one of them has). A suspect, not condemned. */
#define PRIOR_KIN 0.5
/* How far a requirement the evidence states ("--a x requires --b y") is believed: a cell
 * with a=x and b other than y serves right with this chance, to the power of the number of
 * failed cells that stated it. */
#define REQUIRE_BROKEN 0.05

/* The class of a failure's kind. */
static size_t kind_class(const char *kind) {
        for (size_t c = 0; c < N_CLASSES - 1; c++) {
                size_t n = strlen(CLASSES[c].prefix);
                if (kind && strncmp(kind, CLASSES[c].prefix, n) == 0 && (kind[n] == '\0' || kind[n] == '/'))
                        return c;
        }
        return N_CLASSES - 1;
}

/* The class of a failed cell's failure: its kind's, but a death by a signal is memory's only
 * as the OOM killer's looks, SIGKILL with no error line in the log (ENGINES.md); a segfault,
 * or an engine that printed why and killed its own tree (SGLang), is a crash like any other. */
static size_t obs_class(const struct search_obs *o) {
        size_t c = kind_class(o->kind);
        if (c == CLASS_SIGNAL && o->evidence &&
            ((!strstr(o->evidence, "SIGKILL") && !strstr(o->evidence, "signal 9")) ||
             strstr(o->evidence, DIAGNOSE_FIRST_ERROR)))
                return CLASS_CRASH;
        return c;
}

/* ---- the model (struct search_model: search_int.h) ----------------------------------- */

void search_model_free(struct search_model *m) {
        if (!m)
                return;
        free(m->liars);
        free(m->fm.slots);
        free(m->req);
        free(m->mem_w);
        free(m->voff);
        free(m->mem_over);
        free(m->mem_under);
        free(m->mem_by_alloc);
        free(m->mem_by_room);
        free(m->ctx_over);
        free(m->mem_size);
        free(m->pf);
        free(m->mu);
        free(m->sd);
        free(m->ei);
        free(m->chance);
        free(m->condemned);
        free(m->idx);
        free(m->per);
        free(m->gp);
        free(m->ls);
        free(m->alphas);
        free(m->scratch);
        free(m->rows);
        search_ords_free(&m->ords);
        free(m);
}

static bool launched(const struct search_obs *o) {
        return o->state == SEARCH_FEASIBLE || o->state == SEARCH_INFEASIBLE;
}

/* The prior of feature key for class c (named: a failure's evidence named its flag). */
static double prior(const struct search_model *m, size_t c, uint64_t key, const struct feat *f) {
        unsigned named = f ? f->named : NAMED_NONE;
        if (c == CLASS_CONTEXT && m->context_axes) {
                bool holds = false;
                for (int i = 0; i < key_order(key); i++)
                        holds |= (m->context_axes >> key_axis(key, i)) & 1u;
                if (!holds)
                        return PRIOR_OFF_CONTEXT;
        }
        if (f && f->named_by && f->named_class == c)
                return f->named_partly ? PRIOR_NAMED_PARTLY : PRIOR_VALUE_NAMED;
        if (f && f->sig_by && f->sig_class == c)
                return MAX(PRIOR_SIGNATURE, CLASSES[c].prior[1]);
        if (f && f->kin_by && f->kin_class == c)
                return MAX(PRIOR_KIN, CLASSES[c].prior[1]);
        if (named == NAMED_PAIR && key_order(key) == 2)
                return MAX(PRIOR_QUOTED, CLASSES[c].prior[2]);
        if (named == NAMED_AXIS && key_order(key) == 2)
                return MAX(PRIOR_NAMED, CLASSES[c].prior[2]);
        return CLASSES[c].prior[key_order(key)];
}

/* Reads failed cell k's evidence (see fit_feasibility); sets explained[k] when it states a
 * requirement the cell broke. */
static int read_evidence(struct search_model *m, size_t k, bool *explained) {
        const struct search_space *s = m->s;
        const struct search_obs *o = &m->obs[k];
        const size_t *c = s->choice + k * s->n_axes;
        size_t own[16], n_own = 0, need_axis[16], n_need = 0;
        long need_value[16];
        bool flagged[16] = {false};
        for (size_t b = 0; b < s->n_axes; b++) {
                if (!(flagged[b] = search_names_flag(o->evidence, s->axis_flags[b])))
                        continue;
                bool is_own;
                long other;
                search_quoted_values(s, b, o->evidence, c[b], &is_own, &other);
                if (is_own)
                        own[n_own++] = b;
                else if (other >= 0) {
                        need_axis[n_need] = b;
                        need_value[n_need++] = other;
                }
        }
        /* a flag it names raises the pairs with its axis, but where it quotes the pair at fault */
        for (size_t b = 0; b < s->n_axes && (n_own < 2 || n_need > 0); b++)
                for (size_t a = 0; flagged[b] && a < s->n_axes; a++) {
                        size_t ax[2] = {MIN(a, b), MAX(a, b)}, va[2] = {c[ax[0]], c[ax[1]]};
                        struct feat *f = a == b ? NULL : search_feat_find(&m->fm, feat_key(2, ax, va));
                        if (f && f->named < NAMED_AXIS)
                                f->named = NAMED_AXIS;
                }
        /* A line that names two of the cell's values ("FlashInfer backend does not support
         * fp8_e5m2 KV cache"), or two axes by their flags or words, quoting no value ("quantized
         * V cache requires flash_attn to be enabled"), speaks of that pair: the likely culprit. */
        size_t pair[2];
        if (n_own == 0 && n_need == 0 && search_names_pair(s, k, o->evidence, pair)) {
                size_t va[2] = {c[pair[0]], c[pair[1]]};
                struct feat *f = search_feat_find(&m->fm, feat_key(2, pair, va));
                if (f) {
                        f->named = NAMED_PAIR;
                        f->pair_by = f->pair_by ? f->pair_by : k + 1;
                }
        } else if (n_own == 0 && n_need == 0 && !search_names_value(s, k, o->evidence, &(size_t){0})) {
                size_t both[2], n_named = 0;
                for (size_t b = 0; b < s->n_axes; b++)
                        if (search_axis_distance(s, b, o->evidence, o->evidence, o->evidence) != SIZE_MAX && n_named++ < 2)
                                both[n_named - 1] = b;
                if (n_named == 2) {
                        size_t va[2] = {c[both[0]], c[both[1]]};
                        struct feat *f = search_feat_find(&m->fm, feat_key(2, both, va));
                        if (f) {
                                f->named = NAMED_PAIR;
                                f->pair_by = f->pair_by ? f->pair_by : k + 1;
                        }
                }
        }
        if (n_own >= 2 && n_need == 0)
                for (size_t i = 0; i < n_own; i++)
                        for (size_t j = i + 1; j < n_own; j++) {
                                size_t ax[2] = {own[i], own[j]}, va[2] = {c[own[i]], c[own[j]]};
                                struct feat *f = search_feat_find(&m->fm, feat_key(2, ax, va));
                                if (f) {
                                        f->named = NAMED_PAIR;
                                        f->pair_by = f->pair_by ? f->pair_by : k + 1;
                                }
                        }
        for (size_t i = 0; i < n_own; i++)
                for (size_t j = 0; j < n_need; j++) {
                        struct require *r = realloc(m->req, (m->n_req + 1) * sizeof(*r));
                        if (!r)
                                return -ENOMEM;
                        m->req = r;
                        m->req[m->n_req++] = (struct require){own[i], c[own[i]], need_axis[j], (size_t)need_value[j], k};
                        explained[k] = true;
                }
        return 0;
}

/* The requirement cell k breaks (it holds a=x, not b=y, and no cell with a=x and its value
 * of b served right), or NULL; *ret_count: how many failed cells stated requirements it
 * breaks. */
const struct require *search_broken_requirement(const struct search_model *m, size_t k, size_t *ret_count) {
        const size_t *c = m->s->choice + k * m->s->n_axes;
        const struct require *first = NULL;
        size_t count = 0;
        for (size_t i = 0; i < m->n_req; i++) {
                const struct require *r = &m->req[i];
                if (c[r->a] != r->x || c[r->b] == r->y)
                        continue;
                size_t ax[2] = {MIN(r->a, r->b), MAX(r->a, r->b)};
                size_t va[2] = {c[ax[0]], c[ax[1]]};
                const struct feat *f = search_feat_find(&m->fm, feat_key(2, ax, va));
                if (!f || !f->cleared) {
                        first = first ? first : r;
                        count++;
                }
        }
        if (ret_count)
                *ret_count = count;
        return first;
}

/* The value failed cell k's evidence names takes the blame for its class at once
 * (search_names_value); a value that served right somewhere is not condemned by a line.
 * Its namesakes on the other axes become suspects (PRIOR_KIN). */
static int read_named_value(struct search_model *m, size_t k) {
        const struct search_space *s = m->s;
        size_t a;
        enum search_naming how = search_names_value(s, k, m->obs[k].evidence, &a);
        if (how == SEARCH_NAMES_NONE)
                return 0;
        size_t x = s->choice[k * s->n_axes + a];
        unsigned char cls = (unsigned char)obs_class(&m->obs[k]);
        struct feat *f = value_feat(&m->fm, a, x);
        if (!f || f->cleared || f->named_by)
                return 0;
        f->named_by = k + 1;
        f->named_class = cls;
        f->named_how = (unsigned char)how;
        bool configuration = search_says_configuration(m->obs[k].evidence);
        f->named_partly = configuration || search_line_quiet(m->obs[k].kind, m->obs[k].evidence);
        for (size_t b = 0; configuration && b < s->n_axes; b++) {
                size_t ax[2] = {MIN(a, b), MAX(a, b)}, va[2] = {s->choice[k * s->n_axes + ax[0]],
                                                                s->choice[k * s->n_axes + ax[1]]};
                struct feat *g = b == a ? NULL : search_feat_find(&m->fm, feat_key(2, ax, va));
                if (g && g->named < NAMED_AXIS)
                        g->named = NAMED_AXIS;
        }
        const char *name = s->value_names[a][x];
        for (size_t b = 0; name && b < s->n_axes; b++) {
                long y = b == a ? -1 : search_value_on(s, b, name, strlen(name));
                if (y < 0)
                        continue;
                struct feat *g;
                if (search_feat_get(&m->fm, feat_key(1, (size_t[]){b}, (size_t[]){(size_t)y}), &g) < 0)
                        return -ENOMEM;
                if (!g->cleared && !g->named_by && !g->kin_by) {
                        g->kin_by = k + 1;
                        g->kin_class = cls;
                }
        }
        return 0;
}

/* Whether cell o's failure, its signature shared by SIGNATURE_CONDEMNS cells, condemns what
 * they share (line_condemned): a crash, not memory's (hungry values fit beside lean ones), nor
 * a bad answer or a timeout (their lines say what came out, alike for any cause), nor a death
 * whose log holds no error line (its last line says where the server was, not why: a
 * written-apart space's servers killed while "Loading weights" condemned the one attention
 * backend that serves). */
static bool signature_condemns(const struct search_obs *o) {
        return o->kind && startswith(o->kind, "crash/") && !CLASSES[obs_class(o)].memory &&
               !search_line_quiet(o->kind, o->evidence);
}

/* Cells failing with one signature fail for one reason: when the values they all share,
 * less those some cell served right with, are one value, it is the likely culprit. Cells
 * whose lines name an axis's flag or two of their values are left to read_evidence's rules
 * (a pair, a requirement), and so are those a requirement or a named value explains. */
static int read_signatures(struct search_model *m, const bool *explained) {
        const struct search_space *s = m->s;
        size_t A = s->n_axes;
        _cleanup_free_ char **sig = calloc(s->n_cells, sizeof(char *));
        _cleanup_free_ bool *done = calloc(s->n_cells, sizeof(bool));
        int r = 0;
        if (!sig || !done)
                return -ENOMEM;
        for (size_t k = 0; k < s->n_cells; k++) {
                const struct search_obs *o = &m->obs[k];
                if (o->state != SEARCH_INFEASIBLE || explained[k] || !o->evidence)
                        continue;
                bool flagged = false;
                size_t named, pair[2];
                for (size_t a = 0; s->axis_flags && a < A; a++)
                        flagged |= search_names_flag(o->evidence, s->axis_flags[a]);
                if (flagged || search_names_value(s, k, o->evidence, &named) || search_names_pair(s, k, o->evidence, pair))
                        continue;
                if (!(sig[k] = search_signature(s, o->kind, o->evidence))) {
                        r = -ENOMEM;
                        goto out;
                }
        }
        for (size_t k = 0; k < s->n_cells; k++) {
                if (!sig[k] || done[k])
                        continue;
                const size_t *c = s->choice + k * A;
                long same[16]; /* per axis: the value all share, or -1 */
                size_t count = 0;
                for (size_t a = 0; a < A; a++)
                        same[a] = (long)c[a];
                for (size_t j = k; j < s->n_cells; j++) {
                        if (!sig[j] || done[j] || strcmp(sig[j], sig[k]) != 0)
                                continue;
                        done[j] = true;
                        count++;
                        for (size_t a = 0; a < A; a++)
                                if (same[a] != (long)s->choice[j * A + a])
                                        same[a] = -1;
                }
                if (count < 2)
                        continue;
                struct feat *culprit = NULL;
                size_t left = 0, ax[2] = {0, 0};
                for (size_t a = 0; a < A; a++) {
                        if (same[a] < 0)
                                continue;
                        struct feat *f = value_feat(&m->fm, a, (size_t)same[a]);
                        if (f && !f->cleared) {
                                culprit = f;
                                ax[MIN(left, (size_t)1)] = a;
                                left++;
                        }
                }
                /* two values left, and crashes enough to condemn: the pair they make (a
                 * space written apart crashed 94 times with "Failed to initialize cutlass TMA
                 * WS grouped gemm" on --moe-backend auto beside VLLM_FLASHINFER_MOE_BACKEND
                 * latency, each beside other partners) */
                if (left == 2 && count >= SIGNATURE_CONDEMNS && signature_condemns(&m->obs[k])) {
                        size_t va[2] = {(size_t)same[ax[0]], (size_t)same[ax[1]]};
                        culprit = search_feat_find(&m->fm, feat_key(2, ax, va));
                        left = culprit && !culprit->cleared ? 1 : 0;
                }
                if (left == 1 && !culprit->named_by && count > culprit->sig_cells) {
                        culprit->sig_by = k + 1;
                        culprit->sig_cells = count;
                        culprit->sig_class = (unsigned char)obs_class(&m->obs[k]);
                }
        }
out:
        for (size_t k = 0; k < s->n_cells; k++)
                free(sig[k]);
        return r;
}

/* Feasibility: features of launched cells; cleared ones; mean-field blame, class by class. */
static int fit_feasibility(struct search_model *m) {
        const struct search_space *s = m->s;
        size_t F = search_features_per_cell(s->n_axes);
        _cleanup_free_ uint64_t *keys = calloc(F, sizeof(*keys));
        if (!keys)
                return -ENOMEM;
        size_t n_fail = 0;
        for (size_t k = 0; k < s->n_cells; k++) {
                const struct search_obs *o = &m->obs[k];
                if (!launched(o))
                        continue;
                if (o->state == SEARCH_INFEASIBLE) {
                        n_fail++;
                        m->seen[obs_class(o)] = true;
                }
                size_t nf = search_cell_features(s, k, keys);
                for (size_t i = 0; i < nf; i++) {
                        struct feat *f;
                        if (search_feat_get(&m->fm, keys[i], &f) < 0)
                                return -ENOMEM;
                        f->n_launched++;
                        if (o->state == SEARCH_FEASIBLE)
                                f->cleared = true;
                        else
                                f->n_failed++;
                }
        }
        /* What failures' evidence says of other axes: the pairs with an axis whose flag it
         * names are suspects; a pair it quotes with both values is the likely culprit; a
         * requirement it states ("--a x requires --b y") explains the failure by itself. */
        _cleanup_free_ bool *explained = calloc(s->n_cells, sizeof(bool));
        if (!explained)
                return -ENOMEM;
        for (size_t k = 0; k < s->n_cells; k++) {
                const struct search_obs *o = &m->obs[k];
                if (o->state != SEARCH_INFEASIBLE || !o->evidence || !s->axis_flags)
                        continue;
                int r = read_evidence(m, k, explained);
                if (r < 0)
                        return r;
        }
        for (size_t k = 0; k < s->n_cells; k++)
                if (m->obs[k].state == SEARCH_INFEASIBLE && !explained[k] && m->obs[k].evidence) {
                        int r = read_named_value(m, k);
                        if (r < 0)
                                return r;
                }
        int rs = read_signatures(m, explained);
        if (rs < 0)
                return rs;
        for (size_t i = 0; i < m->fm.cap; i++) {
                struct feat *f = &m->fm.slots[i];
                for (size_t c = 0; f->key && c < N_CLASSES; c++)
                        f->b[c] = f->cleared || !m->seen[c] ? 0 : prior(m, c, f->key, f);
        }
        /* A failure a requirement explains blames nothing else. */
        for (size_t k = 0; k < s->n_cells; k++)
                n_fail -= explained[k];

        /* Each failed cell's class and uncleared features. */
        _cleanup_free_ struct feat **list = n_fail ? calloc(n_fail * F, sizeof(*list)) : NULL;
        _cleanup_free_ size_t *len = n_fail ? calloc(n_fail, sizeof(*len)) : NULL, *cls = n_fail ? calloc(n_fail, sizeof(*cls)) : NULL;
        _cleanup_free_ double *pre = calloc(F + 1, sizeof(double)), *suf = calloc(F + 1, sizeof(double));
        if ((n_fail && (!list || !len || !cls)) || !pre || !suf)
                return -ENOMEM;
        size_t q = 0, unexplained = 0;
        for (size_t k = 0; k < s->n_cells; k++) {
                if (m->obs[k].state != SEARCH_INFEASIBLE || explained[k])
                        continue;
                size_t nf = search_cell_features(s, k, keys);
                cls[q] = obs_class(&m->obs[k]);
                for (size_t i = 0; i < nf; i++) {
                        struct feat *f = search_feat_find(&m->fm, keys[i]);
                        if (!f->cleared)
                                list[q * F + len[q]++] = f;
                }
                unexplained += len[q] == 0;
                q++;
        }
        m->unexplained = ((double)unexplained + 0.5) / ((double)m->n_launched + 10.0);

        /* Mean-field, one class at a time: a feature's odds of being a blocker of the class
         * grow with each failed cell of that class that its fellow suspects explain badly
         * (1 / P(the others alone block it)). Damped Jacobi sweeps, a fixed count:
         * deterministic. */
        for (size_t c = 0; c < N_CLASSES; c++) {
                if (!m->seen[c])
                        continue;
                for (int it = 0; it < 30; it++) {
                        for (size_t i = 0; i < m->fm.cap; i++) {
                                struct feat *f = &m->fm.slots[i];
                                if (f->key && !f->cleared) {
                                        double p = prior(m, c, f->key, f);
                                        f->logit_next = log(p / (1 - p));
                                }
                        }
                        for (size_t o = 0; o < n_fail; o++) {
                                if (cls[o] != c)
                                        continue;
                                struct feat **fl = list + o * F;
                                size_t nl = len[o];
                                pre[0] = 1;
                                for (size_t i = 0; i < nl; i++)
                                        pre[i + 1] = pre[i] * (1 - fl[i]->b[c]);
                                suf[nl] = 1;
                                for (size_t i = nl; i-- > 0;)
                                        suf[i] = suf[i + 1] * (1 - fl[i]->b[c]);
                                for (size_t i = 0; i < nl; i++) {
                                        double others = 1 - pre[i] * suf[i + 1]; /* the others block it */
                                        fl[i]->logit_next += -log(MAX(others, 1e-9));
                                }
                        }
                        for (size_t i = 0; i < m->fm.cap; i++) {
                                struct feat *f = &m->fm.slots[i];
                                if (!f->key || f->cleared)
                                        continue;
                                double l = MIN(f->logit_next, 40.0);
                                f->b[c] = 0.5 * f->b[c] + 0.5 / (1 + exp(-l));
                        }
                }
        }
        return 0;
}

/* The chance that feature key (f: its entry, NULL when no launched cell held it) is no
 * blocker of any class seen. */
/* Whether class c is learned by blockers (not by the memory model). */
static bool by_blockers(const struct search_model *m, size_t c) {
        return m->seen[c] && !(m->mem_on && CLASSES[c].memory);
}

static double clear_chance(const struct search_model *m, const struct feat *f, uint64_t key) {
        double p = 1;
        for (size_t c = 0; c < N_CLASSES; c++)
                if (by_blockers(m, c))
                        p *= 1 - (f ? f->b[c] : prior(m, c, key, NULL));
        return p;
}

/* The largest blocker chance of f over the classes, and the class. */
double search_blame(const struct search_model *m, const struct feat *f, size_t *ret_class) {
        double top = 0;
        for (size_t c = 0; c < N_CLASSES; c++)
                if (by_blockers(m, c) && f->b[c] > top) {
                        top = f->b[c];
                        if (ret_class)
                                *ret_class = c;
                }
        return top;
}

/* The chance left to a cell past one that failed by its sizes (a larger size where a smaller
 * ran out of memory, less context for each request where more was refused): for an engine
 * that is not monotone in them after all. */
#define PAST_FITS 0.02
/* The memory model's chance that cell k runs out of memory (0 while none did): sure, but
 * for PAST_FITS, where a launched cell with smaller sizes ran out; none where one with
 * larger sizes loaded. */
double search_oom_chance(const struct search_model *m, size_t k) {
        if (!m->mem_on)
                return 0;
        if (m->mem_over && m->mem_over[k] >= 0)
                return 1 - PAST_FITS;
        if (m->mem_under && m->mem_under[k] >= 0)
                return 0;
        const size_t *c = m->s->choice + k * m->s->n_axes;
        double z = m->mem_b;
        for (size_t a = 0; a < m->s->n_axes; a++)
                z += m->mem_w[m->voff[a] + c[a]];
        return 1 / (1 + exp(-z));
}

/* Whether launched cell o ran out of memory; whether it loaded (it served, or answered
 * garbage or wrong, or broke under load): the other failures say nothing of memory. */
static bool ran_out(const struct search_obs *o) {
        return o->state == SEARCH_INFEASIBLE && CLASSES[obs_class(o)].memory;
}
static bool did_load(const struct search_obs *o) {
        return o->state == SEARCH_FEASIBLE ||
               (o->state == SEARCH_INFEASIBLE && o->kind &&
                (startswith(o->kind, "garbage") || startswith(o->kind, "wrong") || startswith(o->kind, "overload")));
}

/* What a line says fits (docs/search.md, "What a line says fits"): a cell that ran out of
 * memory with a line that gives the longest context the memory left holds (vLLM's "estimated
 * maximum model length"). A cell that holds its values but for a context past that length
 * (and sizes no smaller elsewhere) runs out too: the same room, a longer context. One of a
 * context no longer (and sizes no larger) fits, as far as that line goes. ctx: the one axis of
 * a context's length among the sizes (room_axis). out: the cells that ran out, room: what each
 * one's line says fits (search_alloc_room, -1 for nothing). Sets mem_over, else mem_under,
 * of cell k, and mem_by_room. */
static void by_room(struct search_model *m, double *const *sz, size_t ctx, const size_t *out, const double *room,
                    size_t n_out, size_t k) {
        const struct search_space *s = m->s;
        size_t A = s->n_axes;
        const size_t *ck = s->choice + k * A;
        double here = sz[ctx][ck[ctx]];
        long over = -1, under = -1;
        for (size_t i = 0; i < n_out && over < 0 && here >= 0; i++) {
                if (room[i] < 0)
                        continue;
                const size_t *cx = s->choice + out[i] * A;
                bool past = here > room[i], same = true; /* past the room, or within it */
                for (size_t a = 0; a < A && same; a++)
                        if (a != ctx && ck[a] != cx[a])
                                same = sz[a] && sz[a][ck[a]] >= 0 && sz[a][cx[a]] >= 0 &&
                                       (past ? sz[a][ck[a]] >= sz[a][cx[a]] : sz[a][ck[a]] <= sz[a][cx[a]]);
                if (same && past)
                        over = (long)out[i];
                else if (same && under < 0)
                        under = (long)out[i];
        }
        if (over >= 0)
                m->mem_over[k] = over;
        else if (under >= 0)
                m->mem_under[k] = under;
        m->mem_by_room[k] = over >= 0 || under >= 0;
}

/* The axis of a context's length among the sizes, where there is one alone (which length a
 * line means is then plain), else n_axes. */
static size_t room_axis(const struct search_space *s, double *const *sz) {
        size_t ctx = s->n_axes;
        for (size_t a = 0; a < s->n_axes; a++)
                if (sz[a] && search_axis_context(s, a)) {
                        if (ctx < s->n_axes)
                                return s->n_axes;
                        ctx = a;
                }
        return ctx;
}

/* Sets mem_over and mem_under (see struct search_model). An axis counts as one of sizes
 * when two of its values or more are sizes and no other is a number, its words are not of
 * parallelism or offloading, and no two launched cells that differ on it alone say the
 * contrary (the larger loaded where the smaller ran out). */
static int fit_sizes(struct search_model *m) {
        const struct search_space *s = m->s;
        size_t A = s->n_axes, N = s->n_cells, n_sized = 0;
        double *sz[16] = {0};
        _cleanup_free_ size_t *seen = NULL;
        _cleanup_free_ double *said = NULL; /* per cell that ran out: its line's size (search_alloc_size) */
        _cleanup_free_ double *room = NULL; /* and the context it says fits (search_alloc_room) */
        int r = 0;
        if (!m->mem_on || !s->value_names)
                return 0;
        if ((r = search_sizes(s, sz)) < 0)
                goto done;
        for (size_t a = 0; a < A; a++)
                n_sized += sz[a] != NULL;
        /* the launched cells (not in flight: a lie teaches no memory) that ran out, then
         * those that loaded */
        size_t n_out = 0, n_in = 0, n_said = 0, n_room = 0;
        if (!(seen = malloc(N * sizeof(size_t))) || !(said = malloc(N * sizeof(double))) ||
            !(room = malloc(N * sizeof(double)))) {
                r = -ENOMEM;
                goto done;
        }
        for (size_t x = 0; x < N; x++)
                if (!m->obs[x].pending && ran_out(&m->obs[x])) {
                        said[n_out] = search_alloc_size(m->obs[x].evidence);
                        room[n_out] = search_alloc_room(m->obs[x].evidence, NULL);
                        n_said += said[n_out] >= 0;
                        n_room += room[n_out] >= 0;
                        seen[n_out++] = x;
                }
        for (size_t y = 0; y < N; y++)
                if (!m->obs[y].pending && did_load(&m->obs[y]))
                        seen[n_out + n_in++] = y;
        /* neither sizes nor two lines that say what they failed to allocate */
        if (n_sized == 0 && n_said < 2)
                goto done;
        for (size_t i = 0; i < n_out; i++)
                for (size_t j = n_out; j < n_out + n_in; j++) {
                        const size_t *cx = s->choice + seen[i] * A, *cy = s->choice + seen[j] * A;
                        size_t differ = 0, on = 0;
                        for (size_t a = 0; a < A; a++)
                                if (cx[a] != cy[a]) {
                                        differ++;
                                        on = a;
                                }
                        if (differ == 1 && sz[on] && sz[on][cx[on]] >= 0 && sz[on][cy[on]] > sz[on][cx[on]]) {
                                free(sz[on]);
                                sz[on] = NULL;
                        }
                }
        m->mem_over = malloc(N * sizeof(long));
        m->mem_under = malloc(N * sizeof(long));
        m->mem_by_alloc = calloc(N, sizeof(bool));
        m->mem_by_room = calloc(N, sizeof(bool));
        if (n_sized > 0)
                m->mem_size = malloc((m->voff[A - 1] + s->n_values[A - 1]) * sizeof(double));
        if (!m->mem_over || !m->mem_under || !m->mem_by_alloc || !m->mem_by_room || (n_sized > 0 && !m->mem_size)) {
                r = -ENOMEM;
                goto done;
        }
        for (size_t a = 0; a < A && m->mem_size; a++)
                for (size_t x = 0; x < s->n_values[a]; x++)
                        m->mem_size[m->voff[a] + x] = sz[a] ? sz[a][x] : -1;
        size_t ctx = n_room > 0 ? room_axis(s, sz) : A;
        for (size_t k = 0; k < N; k++) {
                m->mem_over[k] = m->mem_under[k] = -1;
                if (m->obs[k].state != SEARCH_UNKNOWN)
                        continue;
                for (size_t i = 0; i < n_out && m->mem_over[k] < 0; i++)
                        if (search_sizes_at_least(s, sz, k, seen[i]))
                                m->mem_over[k] = (long)seen[i];
                for (size_t j = n_out; j < n_out + n_in && m->mem_over[k] < 0 && m->mem_under[k] < 0; j++)
                        if (search_sizes_at_least(s, sz, seen[j], k))
                                m->mem_under[k] = (long)seen[j];
                if (ctx < A && m->mem_over[k] < 0 && m->mem_under[k] < 0)
                        by_room(m, sz, ctx, seen, room, n_out, k);
        }
        if (n_said >= 2)
                r = search_alloc_predict(s, m->obs, seen, said, n_out, seen + n_out, n_in, sz, m->mem_over,
                                         m->mem_under, m->mem_by_alloc);
done:
        for (size_t a = 0; a < A; a++)
                free(sz[a]);
        return r;
}

/* Fits the memory model: a logistic regression on the values (one weight each, a normal
 * prior of sd 2; the intercept's sd 10) by Newton's method, a fixed number of steps. A cell
 * that ran out of memory counts 1; one that loaded (it served, or answered garbage or
 * wrong, or broke under load) 0; the other failures say nothing of memory. */
static int fit_memory(struct search_model *m) {
        const struct search_space *s = m->s;
        size_t d = 0;
        for (size_t c = 0; c < N_CLASSES; c++)
                m->mem_on |= m->seen[c] && CLASSES[c].memory;
        if (!m->mem_on)
                return 0;
        if (!(m->voff = calloc(s->n_axes, sizeof(size_t))))
                return -ENOMEM;
        for (size_t a = 0; a < s->n_axes; a++) {
                m->voff[a] = d;
                d += s->n_values[a];
        }
        size_t D = d + 1; /* the intercept last */
        _cleanup_free_ double *theta = calloc(D, sizeof(double)), *g = calloc(D, sizeof(double)),
                              *h = calloc(D * D, sizeof(double));
        _cleanup_free_ size_t *rows = calloc(s->n_cells, sizeof(size_t));
        _cleanup_free_ bool *y = calloc(s->n_cells, sizeof(bool));
        m->mem_w = calloc(d, sizeof(double));
        if (!theta || !g || !h || !rows || !y || !m->mem_w)
                return -ENOMEM;
        for (size_t k = 0; k < s->n_cells; k++) {
                const struct search_obs *o = &m->obs[k];
                bool oom = ran_out(o), loaded = did_load(o);
                if (!oom && !loaded)
                        continue;
                y[m->n_mem] = oom;
                m->n_oom += oom;
                rows[m->n_mem++] = k;
        }
        for (int it = 0; it < 20; it++) {
                for (size_t i = 0; i < D; i++) {
                        double prec = i == d ? 0.01 : 0.25;
                        g[i] = prec * theta[i];
                        for (size_t j = 0; j < D; j++)
                                h[i * D + j] = i == j ? prec : 0;
                }
                for (size_t r = 0; r < m->n_mem; r++) {
                        const size_t *c = s->choice + rows[r] * s->n_axes;
                        double z = theta[d];
                        for (size_t a = 0; a < s->n_axes; a++)
                                z += theta[m->voff[a] + c[a]];
                        double p = 1 / (1 + exp(-z)), w = p * (1 - p), e = p - (y[r] ? 1 : 0);
                        size_t idx[17];
                        size_t ni = 0;
                        for (size_t a = 0; a < s->n_axes; a++)
                                idx[ni++] = m->voff[a] + c[a];
                        idx[ni++] = d;
                        for (size_t i = 0; i < ni; i++) {
                                g[idx[i]] += e;
                                for (size_t j = 0; j < ni; j++)
                                        h[idx[i] * D + idx[j]] += w;
                        }
                }
                if (search_cholesky(h, D) < 0)
                        break;
                search_forward(h, D, g);
                search_backward(h, D, g);
                for (size_t i = 0; i < D; i++)
                        theta[i] -= g[i];
        }
        memcpy(m->mem_w, theta, d * sizeof(double));
        m->mem_b = theta[d];
        return 0;
}

static double feasibility(const struct search_model *m, size_t k, uint64_t *keys) {
        size_t nf = search_cell_features(m->s, k, keys);
        double p = (1 - m->unexplained) * (1 - search_oom_chance(m, k)) * (m->ctx_over[k] >= 0 ? PAST_FITS : 1);
        size_t stated;
        if (search_broken_requirement(m, k, &stated))
                p *= pow(REQUIRE_BROKEN, (double)stated);
        for (size_t i = 0; i < nf; i++)
                p *= clear_chance(m, search_feat_find(&m->fm, keys[i]), keys[i]);
        return p;
}

/* Cell k's chance to serve were its value of axis a innocent (other features, memory). */
static double feasible_but_for(const struct search_model *m, size_t k, size_t a, uint64_t *keys) {
        size_t nf = search_cell_features(m->s, k, keys), stated;
        double p = 1 - search_oom_chance(m, k);
        if (search_broken_requirement(m, k, &stated))
                p *= pow(REQUIRE_BROKEN, (double)stated);
        for (size_t i = 0; i < nf; i++) {
                bool holds = false;
                for (int j = 0; j < key_order(keys[i]); j++)
                        holds |= key_axis(keys[i], j) == a;
                if (!holds)
                        p *= clear_chance(m, search_feat_find(&m->fm, keys[i]), keys[i]);
        }
        return p;
}

/* ---- the speed model: a Gaussian process on the axes' agreement ----------------------- */

static double norm_cdf(double z) {
        return 0.5 * erfc(-z / M_SQRT2);
}

/* Hyper-parameters of less weight than this (relative to the heaviest) are left out. */
#define HYPER_MIN_WEIGHT 1e-3
/* Before it stops, the best cell's neighbours (one axis away) of at least this chance to
 * serve right are launched. */
#define NEIGHBOUR_MIN_FEASIBLE 0.3

/* Into m->rows (the first half, or with second the other): how alike cell k is to each
 * figure's cell, a row of n_y for each likeness, once for all the grid points that read them
 * (there are 48 for each). */
static const struct search_agree *alike_rows(const struct search_model *m, size_t k, bool second) {
        size_t n = m->n_y, rows = 1 + m->ords.n;
        if (!m->rows) /* no figure yet */
                return NULL;
        struct search_agree *r = m->rows + (second ? rows * n : 0);
        for (size_t o = 0; o < rows; o++)
                for (size_t i = 0; i < n; i++)
                        r[o * n + i] = search_alike(m->s, &m->ords, o, k, m->idx[i]);
        return r;
}

/* A cell's prior variance under grid point g: its kernel with itself. */
static double gp_prior(const struct search_model *m, const struct search_gp *g) {
        double all = (double)m->s->n_axes;
        return search_kern(g->s1, g->s2, (struct search_agree){all, all});
}

/* The latent mean and sd (log units) under grid point g of the cell whose rows (alike_rows)
 * are given. Without ret_sd, the sd is bounded instead in *ret_bound (when given): what the
 * single nearest figure leaves of the prior variance, which the posterior's never exceeds. */
static void gp_cell(const struct search_model *m, const struct search_gp *g, const struct search_agree *rows,
                    double *ret_mu, double *ret_sd, double *ret_bound) {
        size_t n = m->n_y;
        const struct search_agree *row = rows + g->ord * n;
        double mu = m->y_mean, near = 0, prior = gp_prior(m, g);
        for (size_t i = 0; i < n; i++) {
                m->scratch[i] = search_kern(g->s1, g->s2, row[i]);
                mu += m->scratch[i] * g->alpha[i];
                near = MAX(near, m->scratch[i]);
        }
        *ret_mu = mu;
        if (ret_bound)
                *ret_bound = sqrt(MAX(prior - near * near / (prior + g->noise * g->noise), 1e-12));
        if (!ret_sd)
                return;
        search_forward(g->l, n, m->scratch);
        double var = prior;
        for (size_t i = 0; i < n; i++)
                var -= m->scratch[i] * m->scratch[i];
        *ret_sd = sqrt(MAX(var, 1e-12));
}

/* The mixture's mean and sd of cell k (exact: every weighty grid point's variance). */
static void mixture(const struct search_model *m, size_t k, double *ret_mu, double *ret_sd) {
        double m1 = 0, m2 = 0;
        const struct search_agree *rows = alike_rows(m, k, false);
        for (size_t h = 0; h < m->n_gp; h++) {
                double mu, sd;
                gp_cell(m, &m->gp[h], rows, &mu, &sd, NULL);
                m1 += m->gp[h].w * mu;
                m2 += m->gp[h].w * (sd * sd + mu * mu);
        }
        *ret_mu = m1;
        *ret_sd = sqrt(MAX(m2 - m1 * m1, 1e-12));
}

/* Cell k's expected improvement over the best and its chance to beat it by the margin,
 * grid point by grid point (the model's y_best and margin set). A point where the cell's
 * mean is more than 5 sds (bounded) below the best adds nothing worth the exact variance. */
static void gains(const struct search_model *m, size_t k, double *ret_ei, double *ret_chance) {
        double ei = 0, chance = 0;
        const struct search_agree *rows = alike_rows(m, k, false);
        for (size_t h = 0; h < m->n_gp; h++) {
                const struct search_gp *g = &m->gp[h];
                double mu, sd, bound;
                gp_cell(m, g, rows, &mu, NULL, &bound);
                if (mu + 5 * bound < m->y_best)
                        continue;
                gp_cell(m, g, rows, &mu, &sd, NULL);
                double z = (mu - m->y_best) / sd;
                ei += g->w * (sd * exp(-0.5 * z * z) / sqrt(2 * M_PI) + (mu - m->y_best) * norm_cdf(z));
                chance += g->w * norm_cdf((mu - m->y_best - m->margin) / sd);
        }
        *ret_ei = ei;
        *ret_chance = chance;
}

static int fit_speed(struct search_model *m) {
        const struct search_space *s = m->s;
        size_t n = 0, N = s->n_cells;
        for (size_t k = 0; k < N; k++)
                n += m->obs[k].state == SEARCH_FEASIBLE && m->obs[k].has_value && m->obs[k].value > 0;
        m->n_y = n;
        for (size_t k = 0; k < N; k++)
                m->mu[k] = m->sd[k] = NAN;
        if (n == 0)
                return 0;
        size_t n_ord = 1 + m->ords.n, n_hyper = SEARCH_N_HYPER * n_ord;
        _cleanup_free_ struct search_agree *ag = calloc(n_ord * n * n, sizeof(*ag));
        _cleanup_free_ double *y = calloc(n, sizeof(*y));
        m->idx = calloc(n, sizeof(*m->idx));
        m->per = calloc(n, sizeof(double));
        m->scratch = calloc(2 * n, sizeof(double));
        m->rows = calloc(2 * n_ord * n, sizeof(*m->rows));
        m->ls = calloc(n_hyper * n * n, sizeof(double));
        m->alphas = calloc(n_hyper * n, sizeof(double));
        m->gp = calloc(n_hyper, sizeof(struct search_gp));
        if (!ag || !y || !m->idx || !m->per || !m->scratch || !m->rows || !m->ls || !m->alphas || !m->gp)
                return -ENOMEM;
        double mean = 0;
        for (size_t k = 0, i = 0; k < N; k++)
                if (m->obs[k].state == SEARCH_FEASIBLE && m->obs[k].has_value && m->obs[k].value > 0) {
                        m->idx[i] = k;
                        m->per[i] = 1.0 / MAX(m->obs[k].measured, 1u);
                        y[i] = m->sign * log(m->obs[k].value);
                        mean += y[i++];
                }
        mean /= (double)n;
        m->y_mean = mean;
        for (size_t i = 0; i < n; i++)
                y[i] -= mean;
        for (size_t o = 0; o < n_ord; o++) {
                for (size_t i = 0; i < n; i++)
                        for (size_t j = 0; j <= i; j++)
                                ag[o * n * n + i * n + j] = ag[o * n * n + j * n + i] =
                                        search_alike(s, &m->ords, o, m->idx[i], m->idx[j]);
        }

        /* Each grid point's fit and marginal likelihood; the weights. */
        struct search_gp *g = m->gp;
        size_t h = 0;
        double top = search_gp_grid(ag, n_ord, y, m->per, n, m->ls, m->alphas, g);
        if (!isfinite(top))
                return -EDOM;
        double wsum = 0;
        for (h = 0; h < n_hyper; h++)
                wsum += g[h].w = exp(g[h].lml - top);
        /* The points of next to no weight are dropped. */
        m->noise = 0;
        m->n_gp = 0;
        for (h = 0; h < n_hyper; h++) {
                struct search_gp x = g[h];
                x.w = isfinite(x.lml) ? x.w / wsum : 0;
                if (x.w < HYPER_MIN_WEIGHT / (double)n_hyper)
                        continue;
                m->noise += x.w * x.noise;
                g[m->n_gp++] = x;
        }
        double wk = 0;
        for (h = 0; h < m->n_gp; h++)
                wk += g[h].w;
        m->noise /= wk;
        for (h = 0; h < m->n_gp; h++)
                g[h].w /= wk;

        /* The mixture's means; the best among launched cells (exact there). */
        for (size_t k = 0; k < N; k++) {
                double m1 = 0;
                const struct search_agree *rows = alike_rows(m, k, false);
                for (h = 0; h < m->n_gp; h++) {
                        double mu;
                        gp_cell(m, &g[h], rows, &mu, NULL, NULL);
                        m1 += g[h].w * mu;
                }
                m->mu[k] = m1;
        }
        m->y_best = -INFINITY;
        for (size_t i = 0; i < n; i++)
                m->y_best = MAX(m->y_best, m->mu[m->idx[i]]);
        /* the candidates' expected improvement and chance to beat the best (gains) */
        m->margin = MAX(m->noise / 2, log(1.01));
        for (size_t k = 0; k < N; k++) {
                m->ei[k] = m->chance[k] = 0;
                if (m->obs[k].state == SEARCH_UNKNOWN)
                        gains(m, k, &m->ei[k], &m->chance[k]);
        }
        return 0;
}

/* Whether cell k holds a value a failure's line named (its own blame for that class, not
 * cleared by a cell that served with it): condemned at once, it is no candidate, however
 * cheap a failed launch is (m->condemned, set by fit_once). Without this the choice per second of launch finds a doomed
 * cell worth trying where a crash at load costs a thirtieth of a served launch (llama-server
 * on the CPU: 0.1 s against 3 s): on the issue's 324-cell space each quantized cache was
 * launched a third time, its line naming it again. So is a cell of sizes past one that ran
 * out of memory (fit_sizes): a crash at load is cheap beside a served launch on the CPU, and
 * on the real llama-server each larger context was tried beside every partner; and one that
 * gives each request no more context than one refused the bench for its length (ctx_over). */
static bool line_condemned(const struct search_model *m, size_t k) {
        const struct search_space *s = m->s;
        if ((m->mem_over && m->mem_over[k] >= 0) || m->ctx_over[k] >= 0)
                return true;
        const size_t *c = s->choice + k * s->n_axes;
        for (size_t i = 0; i < m->n_named_pairs; i++) {
                uint64_t key = m->named_pairs[i];
                if (c[key_axis(key, 0)] == key_value(key, 0) && c[key_axis(key, 1)] == key_value(key, 1))
                        return true;
        }
        for (size_t a = 0; a < s->n_axes; a++) {
                const struct feat *f = value_feat(&m->fm, a, s->choice[k * s->n_axes + a]);
                if (f && f->named_by && !f->named_partly && !f->cleared && search_blame(m, f, NULL) >= 0.5)
                        return true;
                /* the one value SIGNATURE_CONDEMNS cells that crashed with one line share: a
                 * space written apart crashed 94 times with "No compiled cutlass_scaled_mm
                 * for CUDA device capability: 120", each beside other partners of --moe-backend
                 * cutlass, a cheap crash each (docs/search.md, "Spaces written apart, again").
                 * Not a line of memory's (hungry values fit beside lean ones), nor of a bad
                 * answer or a timeout (their lines say what came out, alike for any cause). */
                if (f && f->sig_by && f->sig_cells >= SIGNATURE_CONDEMNS && !f->cleared &&
                    signature_condemns(&m->obs[f->sig_by - 1]) && search_blame(m, f, NULL) >= 0.5)
                        return true;
        }
        return false;
}

static int fit_once(const struct search_space *s, const struct search_obs *obs, struct search_model **ret) {
        if (!s || !obs || s->n_axes == 0 || s->n_axes > 16 || s->n_cells == 0)
                return -EINVAL;
        for (size_t k = 0; k < s->n_cells * s->n_axes; k++)
                if (s->choice[k] >= s->n_values[k % s->n_axes] || s->choice[k] > 255)
                        return -EINVAL;
        struct search_model *m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->s = s;
        m->obs = obs;
        m->sign = s->higher_better ? 1 : -1;
        m->best = -1;
        for (size_t a = 0; a < s->n_axes; a++)
                m->context_axes |= (unsigned)search_axis_context(s, a) << a;
        if (search_ords(s, &m->ords) < 0) {
                search_model_free(m);
                return -ENOMEM;
        }
        m->y_best = -INFINITY;
        double sum[2] = {0, 0};
        size_t count[2] = {0, 0};
        for (size_t k = 0; k < s->n_cells; k++) {
                const struct search_obs *o = &obs[k];
                m->n_launches += o->abandoned;
                if (!launched(o))
                        continue;
                if (o->seconds > 0 && isfinite(o->seconds)) {
                        bool ok = o->state == SEARCH_FEASIBLE;
                        sum[ok] += o->seconds;
                        count[ok] += MAX(o->launches, 1u);
                }
                m->n_launched++;
                m->served |= o->state == SEARCH_FEASIBLE;
                m->n_launches += MAX(o->launches, 1u);
                m->n_again += MAX(o->launches, 1u) - 1;
                if (o->state == SEARCH_FEASIBLE && o->has_value && o->value > 0 &&
                    (m->best < 0 || m->sign * o->value > m->sign * obs[m->best].value))
                        m->best = (long)k;
        }
        m->t_fail = count[0] ? sum[0] / (double)count[0] : 0;
        m->t_pass = count[1] ? sum[1] / (double)count[1] : m->t_fail;
        if (!count[0])
                m->t_fail = m->t_pass;
        m->pf = calloc(s->n_cells, sizeof(double));
        m->mu = calloc(s->n_cells, sizeof(double));
        m->sd = calloc(s->n_cells, sizeof(double));
        m->ei = calloc(s->n_cells, sizeof(double));
        m->chance = calloc(s->n_cells, sizeof(double));
        m->condemned = calloc(s->n_cells, sizeof(bool));
        m->ctx_over = calloc(s->n_cells, sizeof(long));
        _cleanup_free_ uint64_t *keys = calloc(search_features_per_cell(s->n_axes), sizeof(uint64_t));
        int r = !m->pf || !m->mu || !m->sd || !m->ei || !m->chance || !m->condemned || !m->ctx_over || !keys
                        ? -ENOMEM
                        : search_context_over(s, obs, m->context_axes, m->ctx_over);
        if (r >= 0)
                r = fit_feasibility(m);
        if (r >= 0)
                r = fit_memory(m);
        if (r >= 0)
                r = fit_sizes(m);
        if (r >= 0)
                r = fit_speed(m);
        if (r < 0) {
                search_model_free(m);
                return r;
        }
        /* A pair a failure's line named ("the triton attention backend does not support an
         * fp8_e4m3 KV cache", "--a x cannot be used with --b y"), never seen serving, and
         * the likely culprit: as a value a line names, condemned at once. Without it the
         * choice per second of launch found the pair's cells, a cheap crash each, worth a
         * launch beside other partners, and launched the pair three times. */
        for (size_t i = 0; i < m->fm.cap && m->n_named_pairs < SEARCH_NAMED_PAIRS_MAX; i++) {
                const struct feat *f = &m->fm.slots[i];
                if (f->key && key_order(f->key) == 2 && !f->cleared &&
                    (f->named == NAMED_PAIR || (f->sig_by && f->sig_cells >= SIGNATURE_CONDEMNS)) &&
                    search_blame(m, f, NULL) >= 0.5)
                        m->named_pairs[m->n_named_pairs++] = f->key;
        }
        for (size_t k = 0; k < s->n_cells; k++) {
                m->pf[k] = obs[k].state == SEARCH_FEASIBLE ? 1 : obs[k].state == SEARCH_INFEASIBLE ? 0
                                                                                 : feasibility(m, k, keys);
                m->condemned[k] = line_condemned(m, k);
        }
        *ret = m;
        return 0;
}

/* The observation a cell in flight is fitted as (search_model_fit): its predicted outcome. */
static void lie(const struct search_model *m, size_t k, struct search_obs *o) {
        struct search_prediction p;
        search_model_predict(m, k, &p);
        *o = (struct search_obs){.pending = true, .launches = 1, .abandoned = o->abandoned};
        if (p.p_feasible >= SEARCH_LIAR_FEASIBLE) {
                o->state = SEARCH_FEASIBLE;
                o->has_value = isfinite(p.mean) && p.mean > 0;
                o->value = o->has_value ? p.mean : 0;
        } else {
                o->state = SEARCH_INFEASIBLE;   /* of no kind: no class is taught by a lie */
        }
}

int search_model_fit(const struct search_space *s, const struct search_obs *obs, struct search_model **ret) {
        size_t pending = 0, lies = 0;
        for (size_t k = 0; s && obs && k < s->n_cells; k++) {
                pending += obs[k].pending && obs[k].state != SEARCH_OUT;
                lies += obs[k].pending && obs[k].state == SEARCH_UNKNOWN;
        }
        if (pending == 0)
                return fit_once(s, obs, ret);
        /* first without the cells in flight, for their predictions; then with them */
        struct search_model *first = NULL;
        int r = lies ? fit_once(s, obs, &first) : 0;
        if (r < 0)
                return r;
        struct search_obs *liars = malloc(s->n_cells * sizeof(*liars));
        if (!liars) {
                search_model_free(first);
                return -ENOMEM;
        }
        memcpy(liars, obs, s->n_cells * sizeof(*liars));
        for (size_t k = 0; k < s->n_cells; k++) {
                if (!liars[k].pending || liars[k].state == SEARCH_OUT)
                        continue;
                if (liars[k].state == SEARCH_UNKNOWN)
                        lie(first, k, &liars[k]);
                else
                        liars[k].launches = MAX(liars[k].launches, 1u) + 1; /* measured again */
        }
        search_model_free(first);
        if ((r = fit_once(s, liars, ret)) < 0) {
                free(liars);
                return r;
        }
        (*ret)->liars = liars;
        (*ret)->n_pending = pending;
        return 0;
}

size_t search_model_pending(const struct search_model *m) {
        return m->n_pending;
}

void search_model_costs(const struct search_model *m, double *ret_pass, double *ret_fail) {
        *ret_pass = m->t_pass;
        *ret_fail = m->t_fail;
}

size_t search_model_launched(const struct search_model *m) {
        return m->n_launched;
}

size_t search_model_launches(const struct search_model *m) {
        return m->n_launches;
}

long search_model_best(const struct search_model *m) {
        return m->best;
}

long search_model_named(const struct search_model *m) {
        long best = -1;
        for (size_t i = 0; i < m->n_y; i++) {
                size_t k = m->idx[i];
                if (m->obs[k].state == SEARCH_FEASIBLE && (best < 0 || m->mu[k] > m->mu[best]))
                        best = (long)k;
        }
        return best >= 0 ? best : m->best;
}

/* ---- measuring again ------------------------------------------------------------------ */

/* With a few percent of noise per launch, one lucky launch of a runner-up outdoes one
 * unlucky launch of the best, and pooling with the neighbours does not always tell them
 * apart. Before the search names its best, the launched cells whose figures are too close
 * to the best's are measured again (a new launch of the same cell): the chance that a
 * launched cell beats the named one by more than CONFIRM_MARGIN must add up to less than
 * CONFIRM_RISK, or one of the two is measured again, at most SEARCH_MEASURE_MAX times each. */
#define CONFIRM_MARGIN 0.03
#define CONFIRM_RISK 0.05
/* A cell whose own chance of beating the named one by the margin is below this is never
 * the one measured again: however it comes out, the named best stays (the risk of many
 * such cells together is a tie within the noise, which measuring one again cannot end). */
#define CONFIRM_PICK_MIN 0.025
/* With a budget, the launches measuring again come out of its last share (a fifth, or
 * measuring again whenever its risk outweighs the chance left in new cells, did no better
 * on the simulator: docs/search.md "Measuring again under a budget"). */
#define CONFIRM_BUDGET_SHARE 0.10

/* Under grid point g, the chance that the latent figure of cell a beats cell b's by more
 * than margin (log units): their difference's mean and variance, the covariance included
 * (two cells that share values share their errors). ra, rb: their rows (alike_rows); ab:
 * how alike the two are, for each likeness. */
static double gp_apart(const struct search_model *m, const struct search_gp *g, const struct search_agree *ra,
                       const struct search_agree *rb, const struct search_agree *ab, double margin) {
        size_t n = m->n_y;
        double *va = m->scratch, *vb = m->scratch + n, mu = 0;
        ra += g->ord * n;
        rb += g->ord * n;
        for (size_t i = 0; i < n; i++) {
                va[i] = search_kern(g->s1, g->s2, ra[i]);
                vb[i] = search_kern(g->s1, g->s2, rb[i]);
                mu += (va[i] - vb[i]) * g->alpha[i];
        }
        search_forward(g->l, n, va);
        search_forward(g->l, n, vb);
        double var = 2 * gp_prior(m, g) - 2 * search_kern(g->s1, g->s2, ab[g->ord]);
        for (size_t i = 0; i < n; i++)
                var -= (va[i] - vb[i]) * (va[i] - vb[i]);
        return norm_cdf((mu - margin) / sqrt(MAX(var, 1e-12)));
}

static double apart(const struct search_model *m, size_t a, size_t b, double margin) {
        const struct search_agree *ra = alike_rows(m, a, false), *rb = alike_rows(m, b, true);
        struct search_agree ab[1 + ORD_RHOS];
        for (size_t o = 0; o <= m->ords.n; o++)
                ab[o] = search_alike(m->s, &m->ords, o, a, b);
        double p = 0;
        for (size_t h = 0; h < m->n_gp; h++)
                p += m->gp[h].w * gp_apart(m, &m->gp[h], ra, rb, ab, margin);
        return p;
}

static unsigned measured(const struct search_obs *o) {
        return MAX(o->measured, 1u);
}

/* The launched cell to measure again before the best is named, or -1: of the named best
 * and the cell likeliest to beat it, the one measured fewer times (the named one on a
 * tie: a lucky figure is what misleads). */
static long confirm(const struct search_model *m) {
        long named = search_model_named(m);
        if (named < 0 || m->n_y < 2 || m->n_gp == 0 || m->n_again >= SEARCH_MAX_AGAIN(m->s->n_cells))
                return -1;
        double risk = 0;
        long pick = -1;
        double pick_p = 0;
        for (size_t i = 0; i < m->n_y; i++) {
                size_t c = m->idx[i];
                if ((long)c == named || m->obs[c].state != SEARCH_FEASIBLE || m->obs[c].pending)
                        continue;
                /* far below the best: nothing to weigh (its sd is at most the prior's) */
                if (m->mu[c] < m->mu[named] - 6 * MAX(m->noise, 0.01))
                        continue;
                double p = apart(m, c, (size_t)named, CONFIRM_MARGIN);
                risk += p;
                if (measured(&m->obs[c]) < SEARCH_MEASURE_MAX || measured(&m->obs[named]) < SEARCH_MEASURE_MAX)
                        if (p > pick_p && p >= CONFIRM_PICK_MIN) {
                                pick_p = p;
                                pick = (long)c;
                        }
        }
        if (risk < CONFIRM_RISK || pick < 0)
                return -1;
        unsigned mn = measured(&m->obs[named]), mc = measured(&m->obs[pick]);
        long c = mn <= mc && mn < SEARCH_MEASURE_MAX ? named : mc < SEARCH_MEASURE_MAX ? pick : named;
        return m->obs[c].pending ? -1 : c;  /* in flight: its figure is coming */
}

/* ---- once more before believing ------------------------------------------------------ */

/* A failure nothing of the matrix explains, every value and every pair of its cell having
 * served right in other cells and its line naming none of them, may be the host's doing:
 * NCCL's watchdog timing out a collective, a straggling rank, a port lost between the
 * pick and the bind. Only a third value, or chance, is left to blame, and one failure
 * cannot tell the two apart. A cell so failed, launched once, whose figure had it served
 * has at least RETRY_MIN_CHANCE of beating the named best by the margin, is launched once
 * more before the best is named, as measuring again is; the second verdict stands (the
 * journal's latest launch is the cell's). On the third held-out stand-in's S1, one NCCL
 * watchdog timeout on the best's only launch hid the best and, by its triple, its family:
 * the search named a cell at 92% of it. */
#define RETRY_MIN_CHANCE 0.05

static bool nothing_explains(const struct search_model *m, size_t k, uint64_t *keys) {
        const struct search_obs *o = &m->obs[k];
        size_t axis;
        /* memory is the memory model's to explain (a sum of the values' sizes) */
        if (o->state != SEARCH_INFEASIBLE || o->pending || MAX(o->launches, 1u) > 1 || ran_out(o) ||
            search_oom_chance(m, k) >= 0.5)
                return false;
        size_t nf = search_cell_features(m->s, k, keys);
        for (size_t i = 0; i < nf; i++) {
                const struct feat *f = key_order(keys[i]) <= 2 ? search_feat_find(&m->fm, keys[i]) : NULL;
                if (key_order(keys[i]) <= 2 && (!f || !f->cleared || f->named))
                        return false;
        }
        /* the line, read last (the dearest test) */
        if (o->evidence && search_names_value(m->s, k, o->evidence, &axis) != SEARCH_NAMES_NONE)
                return false;
        /* a cell of three values in common that failed alike when launched once more says
         * the failure is theirs, not the host's */
        for (size_t j = 0; j < m->s->n_cells; j++) {
                const struct search_obs *p = &m->obs[j];
                if (j != k && p->state == SEARCH_INFEASIBLE && MAX(p->launches, 1u) > 1 && streq_ptr(p->kind, o->kind) &&
                    search_alike(m->s, &m->ords, 0, j, k).m1 >= 3)
                        return false;
        }
        return true;
}

/* The failed cell to launch once more before the best is named, or -1: of those nothing
 * explains, the likeliest to beat the best. */
static long retry(const struct search_model *m, uint64_t *keys) {
        const struct search_space *s = m->s;
        long pick = -1;
        double pick_p = RETRY_MIN_CHANCE;
        if (m->n_y == 0 || m->n_gp == 0)
                return -1;
        for (size_t k = 0; k < s->n_cells; k++) {
                double ei, p;
                if (!nothing_explains(m, k, keys))
                        continue;
                gains(m, k, &ei, &p);
                if (p >= pick_p) {
                        pick_p = p;
                        pick = (long)k;
                }
        }
        return pick;
}

/* ---- decisions ------------------------------------------------------------------------ */

/* Cell k's mixture sd, computed once (the model's caches are not its meaning). */
double search_cell_sd(const struct search_model *m, size_t k) {
        if (isnan(m->sd[k])) {
                double mu;
                mixture(m, k, &mu, &m->sd[k]);
        }
        return m->sd[k];
}

/* The acquisition (expected improvement weighed by the chance to serve right) and the
 * chance to serve right and beat the best, without the exact sd that predict computes. */
static double acquisition(const struct search_model *m, size_t k) {
        return m->n_y > 0 ? m->pf[k] * m->ei[k] : m->pf[k];
}
static double chance(const struct search_model *m, size_t k) {
        return m->n_y > 0 ? m->pf[k] * m->chance[k] : m->pf[k];
}
#define SUSPECTS_WEIGHT 0.1
/* How many of cell k's values are suspects: in a failed cell, never in one that served;
 * *ret_failed (may be NULL): the failed cells they were in, summed. */
static size_t suspects(const struct search_model *m, size_t k, size_t *ret_failed) {
        const struct search_space *s = m->s;
        size_t n = 0, failed = 0;
        for (size_t a = 0; a < s->n_axes; a++) {
                const struct feat *f = value_feat(&m->fm, a, s->choice[k * s->n_axes + a]);
                if (f && !f->cleared && f->n_failed > 0) {
                        n++;
                        failed += f->n_failed;
                }
        }
        if (ret_failed)
                *ret_failed = failed;
        return n;
}
/* Two candidates whose acquisitions differ by less than this share are a tie, as far as
 * their suspects go: the model's figures are not that exact. */
#define TIE_SHARE 0.01

/* What cell k's launch is expected to take (0: nothing measured yet). */
static double cost(const struct search_model *m, size_t k) {
        return m->pf[k] * m->t_pass + (1 - m->pf[k]) * m->t_fail;
}
/* The acquisition per second of launch: a launch that fails early costs less than one
 * that serves and is benchmarked, and the budget that matters is the machine's time.
 * Before any figure, acquisition is the chance to serve, and this still grows with it. */
static double per_second(const struct search_model *m, size_t k) {
        double c = cost(m, k);
        return c > 0 ? acquisition(m, k) / c : acquisition(m, k);
}

void search_model_predict(const struct search_model *m, size_t k, struct search_prediction *ret) {
        struct search_prediction p = {.p_feasible = m->pf[k], .mean = NAN, .high = NAN, .chance = m->pf[k], .ei = m->pf[k],
                                      .seconds = cost(m, k)};
        if (m->n_y > 0) {
                double sd = search_cell_sd(m, k);
                p.mean = exp(m->sign * m->mu[k]);
                p.high = exp(m->sign * (m->mu[k] + 2 * sd));
                p.ei = acquisition(m, k);
                p.chance = chance(m, k);
        }
        *ret = p;
}

bool search_cell_has(const struct search_space *s, size_t k, uint64_t key) {
        const size_t *c = s->choice + k * s->n_axes;
        for (int i = 0; i < key_order(key); i++)
                if (c[key_axis(key, i)] != key_value(key, i))
                        return false;
        return true;
}

static bool holds_axis(uint64_t key, size_t b) {
        for (int i = 0; i < key_order(key); i++)
                if (key_axis(key, i) == b)
                        return true;
        return false;
}

/* The axes on which every failed cell holding feature key (a value, or a pair), of its
 * blame's class cls (not beside a pair that ran out of memory), has one same value
 * (partners that may be the failures' doing rather than key): ret_same[b] is that value,
 * -1 on an axis where they differ (and on key's own). How many such axes; 0 when a cell
 * holding it crashed for the GPU's architecture (one value's doing). */
static size_t confounded_axes(const struct search_model *m, uint64_t key, size_t cls, long *ret_same) {
        const struct search_space *s = m->s;
        size_t A = s->n_axes, n = 0;
        for (size_t b = 0; b < A; b++)
                ret_same[b] = -1; /* -1 unset, -2 varies (search_model_fit: at most 16 axes) */
        for (size_t k = 0; k < s->n_cells; k++) {
                const size_t *c = s->choice + k * A;
                if (m->obs[k].state != SEARCH_INFEASIBLE || !search_cell_has(s, k, key))
                        continue;
                if (obs_class(&m->obs[k]) == CLASS_ARCH)
                        return 0;
                if (obs_class(&m->obs[k]) != cls)
                        continue;
                for (size_t b = 0; b < A; b++)
                        ret_same[b] = ret_same[b] == -1 || ret_same[b] == (long)c[b] ? (long)c[b] : -2;
        }
        for (size_t b = 0; b < A; b++) {
                if (holds_axis(key, b) || s->n_values[b] < 2 || ret_same[b] < 0)
                        ret_same[b] = -1;
                n += ret_same[b] >= 0;
        }
        return n;
}

/* Whether feature key is still unknown: a value no cell that served right holds, that
 * nothing condemns (its own blame, or a failing prediction for every candidate holding it),
 * and a candidate holds; or a pair of values that each served elsewhere, blamed by failures
 * that all shared a third value (T1 of the second held-out stand-in: pytorch with DEEPGEMM
 * blamed for two aborts that both held tp=4, the three together at fault). Then *ret_pick
 * is that candidate of highest expected improvement.
 * Blame alone does not condemn a value whose failures all shared a partner value (on one
 * axis or more): it gets one cell with other partners, whatever the model predicts for it:
 * one where it is the only suspect (a second makes its failure say nothing of it: on the
 * real llama-server a --rope-freq-base that answered wrong beside one chat template was
 * tried beside another template that had answered wrong too, twice) and that would serve
 * but for it (no pair that failed, no memory that runs out: those would say nothing of it
 * either; the likelier it would, the better), and away from as many of the shared partners
 * as such a cell can be. With no such cell, its blame condemns it. A pair gets such a cell
 * only when its failures shared a value, and none once a line named it. */
static bool uncovered(const struct search_model *m, uint64_t key, uint64_t *keys, long *ret_pick, double *ret_ei) {
        const struct search_space *s = m->s;
        const struct feat *f = search_feat_find(&m->fm, key);
        long same[16];
        size_t shared = 0, cls = 0, a = key_axis(key, 0);
        if (f && f->cleared)
                return false;
        if (f && ((f->named_by && !f->named_partly) || f->named) && search_blame(m, f, NULL) >= 0.5)
                return false; /* its own failure's line named it (not as the configuration's) */
        for (int i = 0; key_order(key) > 1 && i < key_order(key); i++) {
                const struct feat *v = value_feat(&m->fm, key_axis(key, i), key_value(key, i));
                if (!v || !v->cleared)
                        return false; /* a pair of values that served elsewhere only */
        }
        if (f && search_blame(m, f, &cls) >= 0.5 && (shared = confounded_axes(m, key, cls, same)) == 0)
                return false;
        if (key_order(key) > 1 && shared == 0)
                return false; /* a pair: only when its failures shared a value */
        long pick = -1;
        double best = -1;
        size_t best_apart = 0;
        for (size_t k = 0; k < s->n_cells; k++) {
                const size_t *c = s->choice + k * s->n_axes;
                if (m->obs[k].state != SEARCH_UNKNOWN || !search_cell_has(s, k, key) || m->condemned[k])
                        continue;
                double ei;
                size_t apart = 0;
                if (shared) {
                        for (size_t b = 0; b < s->n_axes; b++)
                                apart += same[b] >= 0 && c[b] != (size_t)same[b];
                        double fb = apart == 0 || apart < best_apart ? 0 : feasible_but_for(m, k, a, keys);
                        if (fb < 0.5 || suspects(m, k, NULL) > 1)
                                continue;
                        ei = fb * (m->ei[k] + m->pf[k]); /* what it may gain, if it can tell */
                } else {
                        if (m->pf[k] < SEARCH_FAIL_CHANCE)
                                continue;
                        ei = acquisition(m, k);
                }
                if (apart > best_apart || ei > best) {
                        best = ei;
                        best_apart = apart;
                        pick = (long)k;
                }
        }
        *ret_pick = pick;
        *ret_ei = best;
        return pick >= 0;
}

/* A cell one axis away from the best (by the model's mean among the launched cells), not
 * launched and not predicted to fail: the one of highest acquisition, or -1. Before the
 * search stops, the best is a local optimum: an interaction with one more value would
 * show there. */
static long neighbour(const struct search_model *m) {
        const struct search_space *s = m->s;
        long best = -1;
        for (size_t i = 0; i < m->n_y; i++)
                if (best < 0 || m->mu[m->idx[i]] > m->mu[best])
                        best = (long)m->idx[i];
        if (best < 0)
                return -1;
        const size_t *b = s->choice + (size_t)best * s->n_axes;
        long pick = -1;
        double top = -1;
        for (size_t k = 0; k < s->n_cells; k++) {
                if (m->obs[k].state != SEARCH_UNKNOWN || m->pf[k] < NEIGHBOUR_MIN_FEASIBLE)
                        continue;
                const size_t *c = s->choice + k * s->n_axes;
                size_t apart = 0;
                for (size_t a = 0; a < s->n_axes && apart < 2; a++)
                        apart += c[a] != b[a];
                if (apart == 1 && acquisition(m, k) > top) {
                        top = acquisition(m, k);
                        pick = (long)k;
                }
        }
        return pick;
}

/* ---- a failure no value explains ----------------------------------------------------- */

/* While no cell has served: a failure no value explains but for an axis that may change it
 * (the bench does not fit, and -np sets the context of a request) is put to that axis first:
 * the unknown cell nearest the failed one with another value of it, so that its line, the
 * same or not, says within a launch whether any value can pass. -1 when there is none. */
static long hopeless_probe(const struct search_model *m) {
        const struct search_space *s = m->s;
        size_t A = s->n_axes;
        if (m->served)
                return -1;
        for (size_t k = 0; k < s->n_cells; k++) {
                long a;
                if (m->obs[k].state != SEARCH_INFEASIBLE || search_hopeless_class(s, m->obs, k, &a) || a < 0)
                        continue;
                long pick = -1;
                size_t pick_d = SIZE_MAX;
                for (size_t x = 0; x < s->n_cells; x++) {
                        if (m->obs[x].state != SEARCH_UNKNOWN || m->obs[x].pending || m->condemned[x] ||
                            s->choice[x * A + (size_t)a] == s->choice[k * A + (size_t)a])
                                continue;
                        size_t d = 0;
                        for (size_t b = 0; b < A; b++)
                                d += s->choice[x * A + b] != s->choice[k * A + b];
                        if (d < pick_d) {
                                pick_d = d;
                                pick = (long)x;
                        }
                }
                if (pick >= 0)
                        return pick;
        }
        return -1;
}

/* Before any cell served, once the launches number the speed model's parameters (1 + each
 * axis's values less one: as many as it takes to try every value), the chances the failures
 * taught are all near nothing, and their order says little: each failure is read as one
 * value's doing, and a value that failed often enough is condemned beside partners it was
 * never tried with. Where only two values together serve, that never finds them: a space
 * written apart served only with vLLM's triton MoE beside an unquantized KV cache (the FP8
 * caches answered garbage with it, every other MoE backend crashed or hung) and the search
 * spent its 192 launches without a cell that served. From there the next cell is the one
 * holding the most pairs of values never launched together, of the candidates no line, no
 * rule of memory or of context and no requirement rules out (and not expected to run out of
 * memory); ties to the higher acquisition per second. -1 when no candidate holds such a pair. */
size_t search_speed_parameters(const struct search_space *s) {
        size_t p = 1;
        for (size_t a = 0; a < s->n_axes; a++)
                p += s->n_values[a] - 1;
        return p;
}

static long untried_pairs(const struct search_model *m) {
        const struct search_space *s = m->s;
        size_t A = s->n_axes, V = 0, off[16];
        if (m->served || m->n_launched < search_speed_parameters(s))
                return -1;
        for (size_t a = 0; a < A; a++) {
                off[a] = V;
                V += s->n_values[a];
        }
        _cleanup_free_ bool *tried = calloc(V * V, sizeof(bool));
        if (!tried)
                return -1;
        for (size_t k = 0; k < s->n_cells; k++) {
                if (m->obs[k].state == SEARCH_UNKNOWN && !m->obs[k].pending)
                        continue;
                const size_t *c = s->choice + k * A;
                for (size_t a = 0; a < A; a++)
                        for (size_t b = a + 1; b < A; b++)
                                tried[(off[a] + c[a]) * V + off[b] + c[b]] = true;
        }
        long pick = -1;
        size_t pick_n = 0;
        double pick_ps = -1;
        for (size_t k = 0; k < s->n_cells; k++) {
                if (m->obs[k].state != SEARCH_UNKNOWN || m->obs[k].pending || m->condemned[k] ||
                    search_broken_requirement(m, k, NULL) || search_oom_chance(m, k) >= 0.5)
                        continue;
                const size_t *c = s->choice + k * A;
                size_t n = 0;
                for (size_t a = 0; a < A; a++)
                        for (size_t b = a + 1; b < A; b++)
                                n += !tried[(off[a] + c[a]) * V + off[b] + c[b]];
                double ps = per_second(m, k);
                if (n > 0 && (n > pick_n || (n == pick_n && ps > pick_ps))) {
                        pick = (long)k;
                        pick_n = n;
                        pick_ps = ps;
                }
        }
        return pick;
}

/* Whether a failure of this kind says in its line why, a reason that may lie outside the
 * values: not garbage, wrong answers nor timeouts (their lines quote what came out), nor a
 * kernel for another GPU or flags that do not go together (values' doing by kind, several
 * values of an axis may share one line: a build lacking the kernels of 5 K-cache types of 6
 * said "no kernel image" for 3, over every axis, and was stopped as if nothing could pass). */
static bool kind_says_why(const char *kind) {
        return kind && !startswith(kind, "garbage") && !startswith(kind, "wrong") && !startswith(kind, "timeout") &&
               strcmp(kind, "crash/arch") != 0 && strcmp(kind, "crash/config") != 0;
}


/* Whether every failed cell ran out of memory and one of them holds the smallest of axis a,
 * an axis of sizes all of whose values are sizes (fit_sizes): its larger sizes would run
 * out as well, so the failures span it as two values would. */
static bool smallest_ran_out(const struct search_model *m, size_t a) {
        const struct search_space *s = m->s;
        if (!m->mem_size)
                return false;
        const double *sz = m->mem_size + m->voff[a];
        size_t least = 0;
        for (size_t x = 0; x < s->n_values[a]; x++) {
                if (sz[x] < 0)
                        return false;
                if (sz[x] < sz[least])
                        least = x;
        }
        bool held = false;
        for (size_t k = 0; k < s->n_cells; k++)
                if (m->obs[k].state == SEARCH_INFEASIBLE) {
                        if (!ran_out(&m->obs[k]))
                                return false;
                        held |= s->choice[k * s->n_axes + a] == least;
                }
        return held;
}

/* Whether every value of one axis was condemned by a line that names it (read_named_value:
 * TensorRT-LLM's "world_size (8) does not match tp_size (1)" at each --tp_size of the
 * matrix): then no cell of the matrix can serve. Says so into b, quoting the first line. */
static bool axis_named_out(const struct search_model *m, struct buf *b) {
        const struct search_space *s = m->s;
        for (size_t a = 0; a < s->n_axes; a++) {
                bool all = s->n_values[a] > 1;
                for (size_t x = 0; all && x < s->n_values[a]; x++) {
                        const struct feat *f = value_feat(&m->fm, a, x);
                        all = f && !f->cleared && f->named_by && !f->named_partly && search_blame(m, f, NULL) >= 0.5;
                }
                if (!all)
                        continue;
                /* the line that condemned the axis's first value */
                size_t by = value_feat(&m->fm, a, 0)->named_by;
                buf_printf(b, "every value of %s failed by a line that names it, and none of the %zu launched cells "
                              "served (cell %.8s: \"",
                           s->axis_names[a], m->n_launched, s->ids ? s->ids[by - 1] : "?");
                search_put_quote(b, m->obs[by - 1].evidence);
                buf_printf(b, "\"): no cell of the matrix can serve: fix what the lines say outside the matrix, or give "
                              "%s a value they allow",
                           s->axis_names[a]);
                return true;
        }
        return false;
}

/* Why no cell of the space can pass, in one line into b (what failed, and what to change),
 * or false while some may. Only while no launched cell served right, and once at least
 * SEARCH_HOPELESS_LAUNCHES cells were launched (or none is left to launch):
 *  - a cell failed in a way no value explains (HOPELESS): the first such, by index (a class
 *    gauntlet launches again itself, on another port, once its launches are that many);
 *  - every value of one axis was condemned by a line that names it (axis_named_out);
 *  - at least 3 cells were launched, all failed with one signature whose line says why, and
 *    they span two values or more of every axis: no value explains it;
 *  - every value of every axis failed, each beside more than one partner, the failures alike
 *    and none named by its line (search_every_value_failed). */
static bool hopeless(const struct search_model *m, bool none_left, struct buf *b) {
        const struct search_space *s = m->s;
        size_t A = s->n_axes;
        bool enough = m->n_launched >= SEARCH_HOPELESS_LAUNCHES || none_left;
        if (m->n_launched == 0 || m->served)
                return false;
        for (size_t k = 0; k < s->n_cells; k++) {
                const struct search_hopeless *c = search_hopeless_class(s, m->obs, k, NULL);
                if (!c || (!enough && !(c->retried && m->obs[k].abandoned + 1 >= SEARCH_HOPELESS_LAUNCHES)))
                        continue;
                size_t alike = 0;
                for (size_t x = 0; x < s->n_cells; x++)
                        alike += m->obs[x].state == SEARCH_INFEASIBLE && streq_ptr(m->obs[x].kind, m->obs[k].kind);
                buf_printf(b, "%s: %zu of %zu launched cell%s answered %s", c->about, alike, m->n_launched,
                           m->n_launched == 1 ? "" : "s", m->obs[k].kind);
                if (m->n_launches > m->n_launched)
                        buf_printf(b, " (%zu launches in all)", m->n_launches);
                buf_printf(b, " and none served (cell %.8s: \"", s->ids ? s->ids[k] : "?");
                search_put_quote(b, m->obs[k].evidence);
                buf_printf(b, "\"), and no value of the matrix changes that: %s",
                           search_hopeless_change(c, m->obs[k].evidence));
                return true;
        }
        if (!enough)
                return false;
        if (axis_named_out(m, b))
                return true;
        /* one signature over different values of every axis */
        _cleanup_free_ char *sig = NULL;
        long first = -1;
        bool alike = m->n_launched >= 3;
        for (size_t k = 0; alike && k < s->n_cells; k++) {
                if (m->obs[k].state != SEARCH_INFEASIBLE)
                        continue;
                _cleanup_free_ char *t = search_signature(s, m->obs[k].kind, m->obs[k].evidence);
                if (!t || !kind_says_why(m->obs[k].kind) || !m->obs[k].evidence || !m->obs[k].evidence[0])
                        alike = false;
                else if (!sig) {
                        sig = TAKE_PTR(t);
                        first = (long)k;
                } else
                        alike = streq_ptr(sig, t);
        }
        long smallest = -1; /* an axis spanned by its smallest size (smallest_ran_out) */
        bool memory = first >= 0;
        for (size_t k = 0; memory && k < s->n_cells; k++)
                memory = m->obs[k].state != SEARCH_INFEASIBLE || ran_out(&m->obs[k]);
        for (size_t a = 0; alike && a < A; a++) {
                long v = -1;
                bool varies = false;
                for (size_t k = 0; k < s->n_cells; k++)
                        if (m->obs[k].state == SEARCH_INFEASIBLE) {
                                varies |= v >= 0 && (size_t)v != s->choice[k * A + a];
                                v = (long)s->choice[k * A + a];
                        }
                if (s->n_values[a] == 1)
                        continue;
                if (smallest_ran_out(m, a)) {
                        if (!varies)
                                smallest = smallest < 0 ? (long)a : smallest;
                } else
                        alike = varies && (!memory || search_failed_ends(s, m->obs, a));
        }
        if (alike && first >= 0) {
                _cleanup_buf_ struct buf past;
                buf_init(&past, 256);
                const char *noun;
                search_kind_words(m->obs[first].kind, &past, &noun);
                buf_printf(b, "every one of the %zu launched cells %s with one line, over different values of every "
                              "axis",
                           m->n_launched, buf_str(&past));
                if (smallest >= 0)
                        buf_printf(b, " (%s at its smallest: a larger size needs no less memory)",
                                   s->axis_names[smallest]);
                buf_printf(b, ", and none served (cell %.8s: \"", s->ids ? s->ids[first] : "?");
                search_put_quote(b, m->obs[first].evidence);
                const char *hint = search_host_hint(m->obs[first].evidence);
                if (memory)
                        buf_puts(b, "\"): no value of the matrix fits in memory: give the server more memory (more "
                                    "GPUs, or a smaller quantization of the model) or leaner values than the matrix "
                                    "holds (a shorter context, fewer sequences at once)");
                else if (hint)
                        buf_printf(b, "\"): no value of the matrix explains it: %s", hint);
                else
                        buf_puts(b, "\"): no value of the matrix explains it: fix what that line names outside the "
                                    "matrix");
                return true;
        }
        /* every value failed, each beside more than one partner, the failures alike */
        if (!search_every_value_failed(s, m->obs))
                return false;
        buf_printf(b, "every value of every axis failed, each beside more than one partner, and none of the %zu "
                      "launched cells served: the cause is likely outside the matrix: read the cells' lines "
                      "(gauntlet report) and fix what they name",
                   m->n_launched);
        return true;
}

/* For pick k, a cell the memory model expects to run out of memory: the cell that holds its
 * values but for smaller sizes (fit_sizes), not known to fit and worth at least
 * SMALLER_WORTH of k's acquisition per second, of the smallest sizes (their ranks summed;
 * then the larger acquisition), or k itself. It says more for its launch: if it runs out, so
 * would k and every size between, and those are not launched. The share keeps a search
 * under a tight budget from spending it on sizes too small to be fast (in the simulator,
 * where hungrier is faster, without it success at 5% of the grid fell by a point). */
#define SMALLER_WORTH 0.5
static long smaller_sizes(const struct search_model *m, long k) {
        const struct search_space *s = m->s;
        size_t A = s->n_axes;
        if (k < 0 || !m->mem_size || search_oom_chance(m, (size_t)k) < 0.5)
                return k;
        const size_t *ck = s->choice + (size_t)k * A;
        long pick = k;
        size_t pick_rank = SIZE_MAX;
        for (size_t x = 0; x < s->n_cells; x++) {
                if (m->obs[x].state != SEARCH_UNKNOWN || m->obs[x].pending || m->condemned[x] || m->mem_under[x] >= 0 ||
                    (long)x == k)
                        continue;
                const size_t *cx = s->choice + x * A;
                bool below = true;
                for (size_t a = 0; a < A && below; a++) {
                        double vx = m->mem_size[m->voff[a] + cx[a]], vk = m->mem_size[m->voff[a] + ck[a]];
                        below = cx[a] == ck[a] || (vx >= 0 && vk >= 0 && vx < vk);
                }
                if (!below || per_second(m, x) < SMALLER_WORTH * per_second(m, (size_t)k))
                        continue;
                size_t rank = 0; /* how many sizes lie below x's, axis by axis */
                for (size_t a = 0; a < A; a++)
                        for (size_t y = 0; y < s->n_values[a]; y++)
                                rank += m->mem_size[m->voff[a] + y] >= 0 &&
                                        m->mem_size[m->voff[a] + y] < m->mem_size[m->voff[a] + cx[a]];
                if (rank < pick_rank || (rank == pick_rank && acquisition(m, x) > acquisition(m, (size_t)pick))) {
                        pick = (long)x;
                        pick_rank = rank;
                }
        }
        return pick;
}

int search_model_decide(const struct search_model *m, const struct search_options *o, struct search_decision *ret) {
        const struct search_space *s = m->s;
        struct search_decision d = {.next = -1, .stop = NULL, .would_next = -1};
        long pick = -1;
        double pick_ei = -1, chance_sum = 0;
        size_t pick_failed = 0;
        bool prune = !(o && o->no_prune);
        for (size_t k = 0; k < s->n_cells; k++) {
                if (m->obs[k].state != SEARCH_UNKNOWN)
                        continue;
                /* A cell of sizes past one that ran out of memory keeps a chance only in case
                 * the engine proves the rule wrong, and it is never launched: counted, the
                 * chances of hundreds of such cells kept the stop away, and the search
                 * launched every other cell (the simulator's space 6565190562182731026: 880
                 * launches and more of 1800 cells, 229 before sizes). */
                if (!(prune && ((m->mem_over && m->mem_over[k] >= 0) || m->ctx_over[k] >= 0)))
                        chance_sum += chance(m, k);
                /* a search that launches every cell launches these too, last */
                if (prune && m->condemned[k])
                        continue;
                double ei = per_second(m, k);
                /* Two suspects in one cell: if it fails, its line names one of them at
                 * most, and the other needs a launch of its own all the same. */
                size_t failed;
                if (suspects(m, k, &failed) >= 2)
                        ei *= SUSPECTS_WEIGHT;
                /* On a tie, the cell clearing the suspect of more failed cells: each of
                 * those cells' other suspects is then tried beside a value that served,
                 * where a failure's line speaks of it alone (on the issue's llama.cpp
                 * space, fa=on before a quantized V cache tried with fa=off). */
                bool tie = fabs(ei - pick_ei) <= TIE_SHARE * MAX(ei, pick_ei);
                if (tie && failed != pick_failed ? failed > pick_failed : ei > pick_ei) {
                        pick_ei = ei;
                        pick = (long)k;
                        pick_failed = failed;
                }
        }
        /* Before it stops: a value no cell has served with yet, and that nothing condemns,
         * gets its best candidate launched (a crash may have been its partner's doing). */
        long cover = -1;
        double cover_ei = -1;
        _cleanup_free_ uint64_t *keys = calloc(search_features_per_cell(s->n_axes), sizeof(uint64_t));
        if (!keys)
                return -ENOMEM;
        for (size_t a = 0; a < s->n_axes && m->n_y > 0; a++)
                for (size_t x = 0; x < s->n_values[a]; x++) {
                        long k;
                        double ei;
                        if (uncovered(m, feat_key(1, (size_t[]){a}, (size_t[]){x}), keys, &k, &ei) && ei > cover_ei) {
                                cover = k;
                                cover_ei = ei;
                        }
                }
        for (size_t i = 0; i < m->fm.cap && m->n_y > 0; i++) {
                const struct feat *f = &m->fm.slots[i];
                long k;
                double ei;
                if (f->key && key_order(f->key) == 2 && uncovered(m, f->key, keys, &k, &ei) && ei > cover_ei) {
                        cover = k;
                        cover_ei = ei;
                }
        }
        size_t budget = o ? o->max_launches : 0;
        /* measuring again is for a search that prunes: one that launches every cell is
         * asked for every cell, once */
        long again = prune ? confirm(m) : -1, probe;
        if (prune && again < 0)
                again = retry(m, keys);
        _cleanup_buf_ struct buf why;
        buf_init(&why, SEARCH_WHY_MAX);
        if (prune && hopeless(m, pick < 0, &why)) {
                d.stop = "nothing can pass";
                snprintf(d.why, sizeof(d.why), "%s", buf_str(&why));
        } else if (pick < 0 && again < 0) {
                d.stop = "no candidate left";
        } else if (budget && m->n_launches >= budget) {
                d.stop = "budget";
                d.would_next = pick;
        } else if (m->n_launched == 0 && s->first < s->n_cells && m->obs[s->first].state == SEARCH_UNKNOWN) {
                d.next = (long)s->first;
        } else if (prune && (probe = hopeless_probe(m)) >= 0) {
                d.next = probe;
        } else if (prune && (probe = untried_pairs(m)) >= 0) {
                d.next = probe;
        } else if (again >= 0 && (pick < 0 || (budget && (double)(budget - m->n_launches) <=
                                                                     MAX(1.0, CONFIRM_BUDGET_SHARE * (double)budget)))) {
                d.next = again;
        } else if (prune && chance_sum < SEARCH_STOP_CHANCE && m->served) {
                /* Before any cell served, "no chance left" would be the model's claim that
                 * nothing can pass without the line that says why: hopeless() makes that
                 * claim, each stop for its reason; short of them the likeliest cell goes on
                 * (a space written apart stopped so after 19 failures, the memory model,
                 * with no cell that fit to learn from, giving every cell 99% to run out). */
                long near = neighbour(m);
                if (cover >= 0)
                        d.next = cover;
                else if (near >= 0)
                        d.next = near;
                else if (again >= 0)
                        d.next = again;
                else
                        d.stop = "no chance left";
        } else {
                d.next = smaller_sizes(m, pick);
        }
        d.again = d.next >= 0 && m->obs[d.next].state != SEARCH_UNKNOWN;
        /* budget.time, to the launch: one that may serve needs a served launch's time */
        if (d.next >= 0 && prune && o && o->timed) {
                double need = d.again || m->pf[d.next] >= SEARCH_FAIL_CHANCE ? m->t_pass : m->t_fail;
                if (o->time_left <= 0 || need > o->time_left)
                        d = (struct search_decision){.next = -1, .stop = "budget", .would_next = d.next};
        }
        d.in_flight = d.next < 0 && m->n_pending > 0;
        *ret = d;
        return 0;
}
