/* search_view.h -- the search (search.h) over a report view: its space and what settled.
 *
 * One reading of the journal for both who ask: the sweep, to choose the next cell and to
 * word why the others are pruned, and report_load, to say in every report how far the
 * search got and what it would launch next. Both read the same view (report_load.h), so a
 * search resumed from the journal decides as the interrupted one would have.
 *
 * How a view cell reads (docs/search.md): excluded, or skipped/inferred: out of the search;
 * never settled, or skipped/pruned: a candidate; pass: served right, its figure the
 * objective's (report_cell_score); any other verdict: failed, its "verdict/cause" and
 * evidence the feasibility model's to learn from.
 */
#ifndef GAUNTLET_SEARCH_VIEW_H
#define GAUNTLET_SEARCH_VIEW_H

#include "results/results.h"
#include "search/search.h"

/* The space and observations of a view, and the model fitted to them. Cell k of the space
 * is cell k of the view. Owns everything but the view's strings, which it borrows: the
 * view must outlive it. */
struct search_fit {
        struct search_space space;
        struct search_obs *obs;
        struct search_model *model;
        /* storage the space points into */
        size_t *n_values, *choice;
        const char **axis_names, **flags, **ids, ***value_names;
        const char *const **words;  /* per axis: the engine profile's words for its flag */
        const char *const **aliases; /* per axis: the profile's names for its values */
        const char **other_words;    /* the profile's words for settings no axis sets */
        const char *const **spellings; /* per axis: the matrix's (report_view_search) */
        const char *const **forms;   /* per axis: the profile's spellings of its flag */
        char **kinds;
};

/* Fits the search's model to the view's cells (v->search.on or not: the settings it has
 * are used). -ENOMEM, -EINVAL (a view without axes or cells). */
int search_fit_view(const struct report_view *v, struct search_fit **ret);
/* search_fit_view with the cells in flight in other workers: pending[k] marks view cell k
 * (search_obs.pending: fitted as its predicted outcome, not chosen again). */
int search_fit_view_pending(const struct report_view *v, const bool *pending, struct search_fit **ret);
void search_fit_free(struct search_fit *f);
static inline void search_fit_freep(struct search_fit **f) { if (*f) search_fit_free(*f); }
#define _cleanup_search_fit_ _cleanup_(search_fit_freep)

/* The next decision under the view's budget (launches and time; no_prune: neither, nor the
 * stopping rule). */
int search_fit_decide(const struct search_fit *f, const struct report_view *v, bool no_prune,
                      struct search_decision *ret);

/* Fills v->search's figures (counts, the launch order and best so far, what would launch
 * next) for a view whose latest sweep was a search. 0, -ENOMEM. */
int search_view_fill(struct report_view *v);

#endif
