/* compare_report.h -- a comparison of two sweeps (compare.h) drawn as text, Markdown, JSON
 * or one self-contained HTML page (docs/compare.md). They draw what compare.c decided;
 * every text that came from a journal (labels, causes, provenance lines, paths) is escaped
 * for its medium (report_escape_text, report_escape_markdown, text_escape_html). */
#ifndef GAUNTLET_COMPARE_REPORT_H
#define GAUNTLET_COMPARE_REPORT_H

#include <jansson.h>

#include "results/compare.h"
#include "text/buf.h"

int compare_report_text(const struct compare_result *r, struct buf *out);
int compare_report_markdown(const struct compare_result *r, struct buf *out);
int compare_report_json(const struct compare_result *r, json_t **ret);
int compare_report_html(const struct compare_result *r, struct buf *out);

#endif
