/* report.h -- the renderers: a sweep's results (results.h), drawn as text, JSON, Markdown
 * and HTML, and the lines they share.
 *
 * Every renderer (report_text.c, report_json.c, report_md.c, report_html.c) reads only the
 * view of results.h, never the journal, and decides nothing: the verdicts, the scores, the
 * best cell, its ties and the SLA are the results layer's. Each renderer masks (secrets.h)
 * and escapes for its own medium.
 */
#ifndef GAUNTLET_REPORT_H
#define GAUNTLET_REPORT_H

#include "results/results.h"
#include "text/buf.h"

/* "up to 48 streams (64 broke it)", "none met it", ...; caller frees; NULL without an SLA. */
char *report_sla_text(const struct report_view *v, const struct report_cell *c);

/* Where the server's usage.completion_tokens disagreed with gauntlet's count of its output
 * (docs/metrics.md "Output tokens"), one clause per level that did: "usage disagrees with
 * gauntlet's count: @4 the server said 8000000 output tokens on 8 requests (8 above
 * max_tokens), gauntlet counted 64". NULL when no level did (or out of memory); caller
 * frees; raw: escape it. */
char *report_usage_note(const struct report_cell *c);
/* How the view's output tokens were counted (count.h): the model's tokenizer, the sweep's
 * bytes per token and the cell that set it, or each cell's own counts; and the cells whose
 * own counts disagreed before a rule was set. NULL when no cell says (older journals). */
char *report_count_summary(const struct report_view *v);
/* "probes: long-context pass (165 prompt tokens (64% of 256, ...), ...), sampling/ok pass (right
 * in 5 of 5 ...), ..." for a cell whose checks include probes (docs/checks.md "Probes"; the
 * controls left out), else NULL (also on ENOMEM). Unescaped: server text is in it. */
char *report_probes_note(const struct report_cell *c);
/* "abandoned launches: 2, the latest: port 40002 was taken by another process (...)" for a
 * cell launched and abandoned (a run interrupted, a port taken, an exit no line explained:
 * the launch that settled, if any, is another), else NULL (also on ENOMEM). Unescaped. */
char *report_abandoned_note(const struct report_cell *c);
/* The levels at which the client itself was the bottleneck (client_cpu.bound): "the client
 * was the bottleneck @1024 (busiest of 8 loops at 97% of a core, send delay p50 0.2 ms)";
 * NULL when none was (or no memory). Caller frees. */
char *report_client_note(const struct report_cell *c);

/* The server's own figures of one bench level (its /metrics, its per-request timings), in a
 * line: "KV cache peak 42.0%, running peak 4, waiting peak 0, prefix cache hits 87.5%,
 * preemptions 0, prompt cached 80.0% (...)"; NULL when the level has neither (or out of
 * memory). Caller frees; raw: escape it. */
char *report_server_line(json_t *level);
/* The same for every level of a cell: "the server's own figures: @1 ...; @4 ...", or NULL. */
char *report_server_note(const struct report_cell *c);
/* What the bench's own outputs and the eval under load came to: "bench outputs: 80 judged,
 * 2 flagged (@4 repeat: EVIDENCE); eval under load @32: 20/50 right, accuracy 0.400 [0.276,
 * 0.538]; alone 49/50, accuracy 0.980 [...]; the reference alone 50/50, accuracy 1.000 [...]
 * (z = -6.12, p < 0.001)". NULL for a cell without a bench (or no memory). Caller frees; raw:
 * escape it. */
char *report_load_note(const struct report_view *v, const struct report_cell *c);


/* The figure a person reads for a passing cell: "172.3 tok/s @1" or "smoke 1.42s".
 * Caller frees; NULL when there is none or out of memory. */
char *report_cell_figure(const struct report_view *v, const struct report_cell *c);

/* A cell's eval in one line: "eval 198/200 right, accuracy 0.990 [0.964, 0.997]", then
 * "; the reference" or "; 97.5% answers identical to the reference" (and the logprob
 * drift when there is one). NULL when the cell has no eval of the view's set. Caller frees. */
char *report_cell_eval_line(const struct report_view *v, const struct report_cell *c);
/* The search in one line (NULL for another strategy; caller frees): cells launched, pruned
 * and inferred, the budget, why it stopped, and what it would launch next. Raw: escape it. */
char *report_search_summary(const struct report_view *v);
/* run --against: what the sweep found against the old run, as it journaled it (the object
 * compare_against_json made; docs/compare.md "Checking the winner again"), one sentence a
 * line ("Checked against journal J (sweep N):", the winner's change, its verdict and
 * objective, what the provenance says changed), appended to *lines. 0 or -ENOMEM. */
int report_against_lines(json_t *a, char ***lines);
/* The same in one line; NULL for a sweep run without --against (or ENOMEM). Raw: escape it. */
char *report_against_summary(const struct report_view *v);
/* The provenance in one line (report_provenance.c): the engine's version, the libraries,
 * the model's size and hash, the GPU, driver and CUDA, the cell's env; NULL when the view
 * has none (or ENOMEM). With several cell environments, the first, and how many. */
char *report_provenance_summary(const struct report_view *v);
/* The changes since the earlier sweep in one line ("since sweep 3: engine version: a -> b;
 * ..."), "unchanged since sweep 3", or NULL when there is nothing to compare. */
char *report_provenance_changes(const struct report_view *v);
/* The JSON report's "provenance": {"sweep", "records": [...], "compared_with": id|null,
 * "changes": [...]|null}, or null. New reference; NULL on ENOMEM. */
json_t *report_provenance_json(const struct report_view *v);
/* The view's eval in one line: its source, question count, the reference and why it is
 * the reference, the test. NULL without an eval. Caller frees. */
char *report_eval_summary(const struct report_view *v);


/* What the text and Markdown renderers share. */
/* "3 cells: 2 pass, 1 garbage, 1 not run" in the vocabulary's order. */
int report_put_summary(struct buf *out, const struct report_view *v);
/* "within the measured noise of: ID, ID" after the best line, when repeats say so. */
int report_put_ties(struct buf *out, const struct report_view *v, bool markdown);
/* "moe=a gemm=b" ("(base)" without axes), escaped as text or as one Markdown code span.
 * Caller frees; NULL: ENOMEM. */
char *report_cell_axes_label(const struct report_view *v, const struct report_cell *c, bool markdown);
/* A wall time (microseconds since the epoch) as "2026-01-31 12:00:00", local time; "?"
 * when it cannot be shown. Caller frees; NULL: ENOMEM. */
char *report_format_wall(usec_t wall);

/* The shortest id prefix (at least 8) that tells the view's cells apart, as the text
 * report prints them; `gauntlet emit --cell` takes any unique prefix. */
size_t report_id_width(const struct report_view *v);

struct report_text_options {
        size_t width;         /* columns to fit; 0: 120 */
        bool color;           /* ANSI colours on the verdicts */
};
/* A table for a terminal: axes, verdict, cause or figure, evidence cut to fit; the best
 * cell; a summary line. Server text has control characters escaped. */
int report_text(const struct report_view *v, const struct report_text_options *o, struct buf *out);
/* The JSON contract of DESIGN.md (plus fields). version: the "gauntlet" field. */
int report_json(const struct report_view *v, const char *version, json_t **ret);
/* A table for a PR: winner on top, then each failure's evidence in a fenced block. */
int report_markdown(const struct report_view *v, struct buf *out);
/* One self-contained HTML page (report_html.c, docs/report.md): inline CSS and SVG, no
 * fetches, works without JavaScript. Shows each failure's log excerpt as the view holds it
 * (report_load_logs); it opens no file. */
int report_html(const struct report_view *v, struct buf *out);

/* Escaping, shared with other renderers. Text: printable UTF-8 kept; \n \t \r as such;
 * other control characters, C1 controls and bytes that are not UTF-8 as \xNN, so nothing
 * reaches a terminal as a control sequence. max_chars > 0 cuts after that many characters
 * and appends "…". */
int report_escape_text(struct buf *out, const char *s, size_t max_chars);
/* Markdown table cell: text escaping as above, then | ` \ * _ [ ] ~ # ! as \X, < > & as
 * entities, newlines as <br>, so it cannot break the table, format, link or inject HTML. */
int report_escape_markdown(struct buf *out, const char *s, size_t max_chars);
/* A value as a Markdown code span, as people write flags and values in PR comments
 * (`flashinfer_cutlass`, not flashinfer\_cutlass): text escaping as above (newlines as
 * \n), fenced with one backtick more than the longest run of them in s, padded with a
 * space when s starts or ends with one; in_table: | as \| (GFM splits a table cell at a |
 * even in a code span). Nothing for an empty or NULL s. */
int report_code_span(struct buf *out, const char *s, size_t max_chars, bool in_table);

#endif
