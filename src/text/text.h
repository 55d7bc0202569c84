/* text.h -- text that came from a server, a host or a user, made safe to show: escaped so
 * that a terminal, or a Markdown renderer, shows it and never acts on it; or cleaned to one
 * plain line.
 *
 * Escaping (text_escape, text_escape_range), by mode:
 *   TEXT_TERMINAL  printable UTF-8 kept; \n \t \r as those two characters; other control
 *                  characters and bytes that are not UTF-8 as \xNN; the hidden characters
 *                  (text_hidden_control) as \uNNNN. Hex digits in lower case.
 *   TEXT_MARKDOWN  the same, and | ` \ * _ [ ] ~ # ! as \X, < > & as entities, a newline
 *                  as <br>.
 *   TEXT_QUOTED    TEXT_TERMINAL's rules with hex digits in upper case and a backslash
 *                  doubled, so that the quote reads back unambiguously: the detectors'
 *                  excerpts and evidence (detect_excerpt, detect_escape).
 * HTML (text_escape_html) has its own rules: entities, line ends kept.
 * Every renderer and every line gauntlet prints goes through here (report.c,
 * report_html.c for its own markup and the page's text, ytree's messages, the CLI's lines, the detectors'
 * evidence).
 */
#ifndef GAUNTLET_TEXT_H
#define GAUNTLET_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "text/buf.h"

enum text_mode { TEXT_TERMINAL, TEXT_MARKDOWN, TEXT_QUOTED };

/* The one set of hidden characters: code points a terminal or a renderer would act on, or
 * that would hide or reorder text, rather than show: C1 controls (some terminals read
 * U+009B as CSI), the soft hyphen, the zero-width characters (U+200B-U+200D, U+2060-U+2064,
 * U+FEFF, U+180E), the direction marks, line and paragraph separators, embeddings,
 * overrides and isolates (U+200E-U+200F, U+2028-U+202E, U+2066-U+2069), and the
 * noncharacters U+FFFE and U+FFFF. */
bool text_hidden_control(uint32_t cp);
/* The zero-width characters among them (U+200B-U+200D, U+2060-U+2064, U+FEFF, U+180E):
 * also what the detectors count as padding. */
bool text_zero_width(uint32_t cp);

/* Appends the NUL-terminated s escaped for the mode. max_chars > 0 cuts after that many
 * characters shown and appends "…". 0 or -ENOMEM. NULL s appends nothing. */
int text_escape(struct buf *out, const char *s, size_t max_chars, enum text_mode mode);

/* Appends s[from..to) escaped for the mode (a NUL byte included: \x00), at most max bytes
 * of output, whole escapes only. Returns the offset in s where it stopped: `to` when all of
 * it fit, less at the cap (or when out of memory, out's own cap included). */
size_t text_escape_range(struct buf *out, const char *s, size_t from, size_t to, size_t max, enum text_mode mode);

/* HTML text and quoted attribute values (report_html.c's page): & < > " ' as entities; \n
 * and \t kept, a lone \r as \n (CRLF as one \n); other controls, the hidden characters
 * (text_hidden_control) and bytes that are not UTF-8 shown as \xNN or \uNNNN. max_chars > 0
 * shows that many characters of s and then "…" when more follow. 0, or -ENOMEM (-ENOBUFS
 * at out's cap). NULL s appends nothing. */
int text_escape_html(struct buf *out, const char *s, size_t max_chars);

/* Takes the terminal's escape sequences out of s[0..len) in place (a log written with
 * colours: FORCE_COLOR, a logger that colours whatever its output): CSI (ESC [ params
 * final), OSC (ESC ] ... BEL or ESC \\), and the other escapes (ESC, intermediates, a final
 * byte); a lone ESC at the end goes too. Every other byte stays where it was, in order.
 * Returns the new length (s is not NUL-terminated anew). */
size_t text_strip_ansi(char *s, size_t len);

/* One plain line of s[0..len): blanks trimmed at both ends, control characters (C0, DEL)
 * and invalid UTF-8 replaced with '?', cut at max bytes on a character boundary (text from
 * the host: versions, /proc/cpuinfo, os-release; Slurm's replies). Caller frees; NULL on
 * ENOMEM. */
char *text_clean(const char *s, size_t len, size_t max);

#endif
