/* text.h -- one way to show text that came from a server or a user: escaped so that a
 * terminal, or a Markdown renderer, shows it and never acts on it.
 *
 * Terminal: printable UTF-8 kept; \n \t \r as those two characters; other control
 * characters and bytes that are not UTF-8 as \xNN; C1 controls and the bidirectional
 * overrides and isolates as \uNNNN (text_hidden_control). Markdown: the same, and
 * | ` \ * _ [ ] ~ # ! as \X, < > & as entities, a newline as <br>. max_chars > 0 cuts after
 * that many characters shown and appends "…". Every renderer and every line gauntlet
 * prints goes through here (report.c, report_html.c for its own markup, ytree's messages,
 * the CLI's lines).
 */
#ifndef GAUNTLET_TEXT_H
#define GAUNTLET_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

enum text_mode { TEXT_TERMINAL, TEXT_MARKDOWN };

/* Code points a terminal or a renderer would act on rather than show: C1 controls (some
 * terminals read U+009B as CSI) and the bidirectional overrides that reorder text. */
bool text_hidden_control(uint32_t cp);
/* Appends s escaped for the mode. 0 or -ENOMEM. NULL s appends nothing. */
int text_escape(struct buf *out, const char *s, size_t max_chars, enum text_mode mode);

#endif
