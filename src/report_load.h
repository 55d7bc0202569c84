/* report_load.h -- the report view (report.h) read from a journal (journal.h).
 *
 * Sits above both: the journal knows nothing of the reports, the renderers nothing of
 * SQLite. What it reads is raw, as journaled (report.h says who masks and escapes).
 */
#ifndef GAUNTLET_REPORT_LOAD_H
#define GAUNTLET_REPORT_LOAD_H

#include "journal.h"
#include "report.h"

/* Gathers what the reports need: the latest sweep's matrix, engine and host, and for
 * every cell of that sweep its latest settled attempt in any sweep, and the command it
 * ran ({host} and {port} filled in: the attempt's port, else the matrix's). Excluded cells
 * show as skipped/excluded, cells never settled as not run. -ENOENT when the journal
 * holds no sweep; other negative errnos as journal.h (journal_last_error has SQLite's
 * words). On success the caller owns *ret (report_view_free). */
int report_load_view(struct journal *j, struct report_view **ret);

#endif
