/* report_load.h -- a sweep's view (results.h) read from a journal (journal.h).
 *
 * Sits above the journal and below the renderers: it reads the journal's rows through
 * journal.h's read API (no column is known here), and the renderers know nothing of SQLite.
 * What it reads is raw, as journaled (results.h says who masks and escapes).
 */
#ifndef GAUNTLET_REPORT_LOAD_H
#define GAUNTLET_REPORT_LOAD_H

#include "journal/journal.h"
#include "results/results.h"

/* Gathers what the reports need: the latest sweep's matrix, engine and host, and for
 * every cell of that sweep its latest settled attempt in any sweep, and the command it
 * ran ({host} and {port} filled in: the attempt's port, else the matrix's). Excluded cells
 * show as skipped/excluded, cells never settled as not run. -ENOENT when the journal
 * holds no sweep; other negative errnos as journal.h (journal_last_error has SQLite's
 * words). On success the caller owns *ret (report_view_free). */
int report_load_view(struct journal *j, struct report_view **ret);
/* The view's verdicts are the journal's (the verdicts table, schema 8) where the run wrote
 * them: for a cell whose shown attempt has a row, the row's verdict, cause and evidence,
 * over what report_view_apply_eval decides on this load (report_cell_take_verdict). A
 * sweep without rows (an older journal, a run killed before it wrote them) is decided on
 * load, as the run would have. */

/* Decides the verdicts of the sweep with that id (0: the latest) (report_view_apply_eval,
 * on a view built afresh) and journals them: one row per shown attempt of the sweep's
 * cells, the sweep's earlier rows replaced, in one transaction. For `run`, as each cell
 * settles and at the sweep's end: the eval's gate compares a cell with the reference among
 * all that settled, so a later cell can change an earlier one's verdict. A worker side by
 * side names its own sweep: the latest may be another worker's, begun a moment ago and
 * still recording its cells. Returns the rows written, or a negative errno (journal.h). */
int report_settle_verdicts(struct journal *j, int64_t sweep_id);
/* The same for the sweep with that id, as the journal was when it ended: each cell's
 * latest settled attempt of that sweep or an earlier one (gauntlet compare --sweeps).
 * -ENOENT when the journal has no such sweep. */
int report_load_view_sweep(struct journal *j, int64_t sweep_id, struct report_view **ret);
/* The view of the sweep with that id as the journal stands now: its matrix, settings and
 * cells, and for each cell its latest settled attempt in any sweep, later ones included.
 * For a run's own sweep while it runs (side by side, the workers' sweeps begin one after
 * another, so the latest is not always the reader's own, nor always complete). -ENOENT
 * when the journal has no such sweep. */
int report_load_view_current(struct journal *j, int64_t sweep_id, struct report_view **ret);
/* Reads the raw bench samples of every passing cell's attempt into c->samples (an array,
 * empty when the attempt has none). 0 or a negative errno as journal.h. */
int report_load_samples(struct journal *j, struct report_view *v);

/* The evidence journaled with verdict v, taken apart once (report.h, struct
 * report_evidence): *ret owns its line. 0 or -ENOMEM. */
int report_evidence_parse(const char *evidence, enum verdict v, struct report_evidence *ret);

/* Loads the log excerpt (report.h, struct report_log) of every failed cell of the view,
 * from files under the run folder of v->journal_path only (journal_log_root); a relative
 * log path is tried as it is, then under v->cwd. What a log cannot give is a state of the
 * excerpt, not an error: 0, or -ENOMEM. The HTML page is what shows them. */
int report_load_logs(struct report_view *v);

#endif
