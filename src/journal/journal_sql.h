/* journal_sql.h -- the journal's statement helpers, for the one module that reads its tables.
 *
 * journal.c owns the connection and the schema (journal.h); report_load.c reads the tables
 * into the report view with these helpers, so that the journal needs nothing of the
 * reports. No other module includes this header: they use journal.h.
 *
 * Errors: a helper that fails keeps SQLite's message on j (journal_last_error) and returns
 * a negative errno, as every journal function (journal.h).
 */
#ifndef GAUNTLET_JOURNAL_SQL_H
#define GAUNTLET_JOURNAL_SQL_H

#include <sqlite3.h>

#include "journal/journal.h"

static inline void journal_finalizep(sqlite3_stmt **s) { sqlite3_finalize(*s); }
#define _cleanup_stmt_ _cleanup_(journal_finalizep)

/* Remembers SQLite's message for rc and turns rc into a negative errno. */
int journal_fail(struct journal *j, int rc);
/* Prepares sql; the caller finalizes *ret (_cleanup_stmt_). */
int journal_prepare(struct journal *j, const char *sql, sqlite3_stmt **ret);
/* Binds every argument in order, by types: 's' a string (NULL binds NULL), 'i' an int64_t. */
int journal_bind(struct journal *j, sqlite3_stmt *s, const char *types, ...);
/* A copy of a text column (caller frees), NULL for SQL NULL. -ENOMEM only when a copy fails. */
int journal_col_strdup(sqlite3_stmt *s, int i, char **ret);
/* A text column as SQLite holds it (valid until the next step), NULL for SQL NULL. */
const char *journal_col_str(sqlite3_stmt *s, int i);
/* The path the journal was opened with (owned by j). */
const char *journal_path(const struct journal *j);

#endif
