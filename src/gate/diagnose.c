/* diagnose.c -- log signatures and exit statuses to causes. */
#include "gate/diagnose.h"

#include <ctype.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "text/buf.h"
#include "text/text.h"
#include "base/util.h"

/* Compiled signature tables, one per profile, built on first use. A literal "needle" cut
 * from each regex lets most lines skip regexec entirely. */
struct compiled {
        const struct signature *sig;
        regex_t re;
        char needle[64];
};

struct table {
        const struct profile *profile;
        struct compiled *entries;
        size_t n;
};

static struct table tables[16];
static size_t n_tables;

/* The longest run of plain characters in an ERE: every match must contain it. */
static void regex_needle(const char *re, char out[static 64]) {
        const char *meta = ".[]()*+?{}|^$\\";
        size_t best = 0, best_at = 0;
        size_t i = 0, n = strlen(re);
        while (i < n) {
                size_t start = i;
                while (i < n && !strchr(meta, re[i]))
                        i++;
                size_t len = i - start;
                /* a quantifier after the run makes its last character optional */
                if (len > 0 && i < n && strchr("*?{", re[i]))
                        len--;
                if (len > best) {
                        best = len;
                        best_at = start;
                }
                if (i < n && re[i] == '\\')
                        i++; /* skip the escaped character: it breaks the run */
                if (i < n && re[i] == '[') {
                        while (i < n && re[i] != ']')
                                i++;
                }
                i++;
        }
        /* Alternation makes no literal mandatory. */
        if (strchr(re, '|'))
                best = 0;
        best = MIN(best, (size_t)63);
        memcpy(out, re + best_at, best);
        out[best] = '\0';
}

static int table_add(struct table *t, const struct signature *sigs) {
        for (const struct signature *s = sigs; s && s->regex; s++) {
                struct compiled *n = realloc(t->entries, (t->n + 1) * sizeof(*n));
                if (!n)
                        return -ENOMEM;
                t->entries = n;
                struct compiled *c = &t->entries[t->n];
                if (regcomp(&c->re, s->regex, REG_EXTENDED | REG_NOSUB) != 0)
                        return -EINVAL;
                c->sig = s;
                regex_needle(s->regex, c->needle);
                t->n++;
        }
        return 0;
}

static const struct table *table_for(const struct profile *p) {
        for (size_t i = 0; i < n_tables; i++)
                if (tables[i].profile == p)
                        return &tables[i];
        if (n_tables == ELEMENTSOF(tables))
                return NULL;
        struct table *t = &tables[n_tables];
        *t = (struct table){.profile = p};
        /* engine-specific signatures first: at equal tier and line they win */
        if ((p && table_add(t, p->signatures) < 0) || table_add(t, profile_common_signatures()) < 0)
                return NULL;
        n_tables++;
        return t;
}

/* Length of llama.cpp's time stamp at the start of a line ("0.00.007.063 ", minutes then
 * seconds, ms, us); 0 if there is none. */
static size_t stamp_len(const char *line, size_t len) {
        static const size_t digits[] = {0, 2, 3, 3}; /* 0: one or more */
        size_t i = 0;
        for (size_t f = 0; f < ELEMENTSOF(digits); f++) {
                size_t start = i;
                while (i < len && line[i] >= '0' && line[i] <= '9')
                        i++;
                if (i == start || (digits[f] && i - start != digits[f]))
                        return 0;
                char sep = f + 1 < ELEMENTSOF(digits) ? '.' : ' ';
                if (i >= len || line[i] != sep)
                        return 0;
                i++;
        }
        return i;
}

/* Whether line (len bytes) holds, from *i, one digit or more and then the byte end: *i
 * moves past them. */
static bool skip_digits_to(const char *line, size_t len, size_t *i, char end) {
        size_t start = *i;
        while (*i < len && line[*i] >= '0' && line[*i] <= '9')
                (*i)++;
        if (*i == start || *i >= len || line[*i] != end)
                return false;
        (*i)++;
        return true;
}

/* Length of vLLM's prefix at the start of a line: the process's "(EngineCore_DP0 pid=123) ",
 * then "ERROR 12-05 19:41:05 [core.py:708] " (any level; V0 wrote "engine.py:400] ", without
 * the opening bracket); either alone; 0 if there is none. */
static size_t vllm_prefix_len(const char *line, size_t len) {
        static const char *const levels[] = {"DEBUG ", "INFO ", "WARNING ", "ERROR ", "CRITICAL "};
        size_t i = 0, done = 0;
        if (len > 0 && line[0] == '(') {
                const char *pid = memmem(line, MIN(len, (size_t)80), " pid=", 5);
                i = pid ? (size_t)(pid - line) + 5 : 0;
                if (pid && skip_digits_to(line, len, &i, ')') && i < len && line[i] == ' ')
                        done = ++i;
                i = done;
        }
        for (size_t l = 0; l < ELEMENTSOF(levels); l++) {
                size_t n = strlen(levels[l]), j = i + n;
                if (len - i < n || memcmp(line + i, levels[l], n) != 0)
                        continue;
                /* MM-DD HH:MM:SS [file:line] */
                if (!skip_digits_to(line, len, &j, '-') || !skip_digits_to(line, len, &j, ' ') ||
                    !skip_digits_to(line, len, &j, ':') || !skip_digits_to(line, len, &j, ':') ||
                    !skip_digits_to(line, len, &j, ' ') || j >= len)
                        break;
                if (line[j] == '[') {
                        const char *close = memchr(line + j, ']', len - j);
                        if (close && (size_t)(close - line) + 1 < len && close[1] == ' ')
                                done = (size_t)(close - line) + 2;
                        break;
                }
                /* V0: a file name without blanks, ':', its line number, "] " */
                size_t f = j;
                while (f < len && line[f] != ' ' && line[f] != ':' && line[f] != ']')
                        f++;
                if (f > j && f < len && line[f] == ':' && (f++, skip_digits_to(line, len, &f, ']')) && f < len &&
                    line[f] == ' ')
                        done = f + 1;
                break;
        }
        return done < len ? done : 0;
}

/* The evidence a line gives: blanks, llama.cpp's time stamp and vLLM's prefix trimmed at the
 * start (the rest is still a substring of the line, for the report to find), blanks at the
 * end, control characters as '?', cut to DIAGNOSE_MAX_EVIDENCE. */
static char *evidence_from(const char *line, size_t len) {
        while (len > 0 && (line[0] == ' ' || line[0] == '\t')) {
                line++;
                len--;
        }
        size_t stamp = stamp_len(line, len);
        line += stamp;
        len -= stamp;
        stamp = vllm_prefix_len(line, len);
        line += stamp;
        len -= stamp;
        while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
                len--;
        len = MIN(len, (size_t)DIAGNOSE_MAX_EVIDENCE);
        char *e = malloc(len + 1);
        if (!e)
                return NULL;
        for (size_t i = 0; i < len; i++) {
                unsigned char c = (unsigned char)line[i];
                e[i] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
        }
        e[len] = '\0';
        return e;
}

/* One line at a time, without its '\n' and trailing '\r', with a NUL-terminated copy for
 * regexec. The copy grows to the longest line: the text itself is capped by read_log. */
struct line_iter {
        const char *text;
        size_t len;
        size_t pos;
        const char *start;      /* the current line in text */
        size_t line_len;        /* its length */
        size_t no;              /* its 1-based number */
        char *copy;             /* owned: the current line, NUL-terminated */
        size_t cap;
};

/* Returns 1 with the next line in it, 0 at the end, -ENOMEM. */
static int line_next(struct line_iter *it) {
        if (it->pos >= it->len)
                return 0;
        const char *start = it->text + it->pos;
        const char *nl = memchr(start, '\n', it->len - it->pos);
        size_t k = nl ? (size_t)(nl - start) : it->len - it->pos;
        it->pos += k + 1;
        it->no++;
        it->start = start;
        while (k > 0 && start[k - 1] == '\r')
                k--;
        it->line_len = k;
        if (k + 1 > it->cap) {
                char *n = realloc(it->copy, k + 1);
                if (!n)
                        return -ENOMEM;
                it->copy = n;
                it->cap = k + 1;
        }
        memcpy(it->copy, start, k);
        it->copy[k] = '\0';
        return 1;
}

static void line_iter_release(struct line_iter *it) {
        free(it->copy);
        it->copy = NULL;
}

/* ---- kinds of lines, for evidence ---- */

/* Backtrace frames and debugger chatter (glibc backtrace_symbols, gdb, ggml's unwinder,
 * Python, Rust): they name functions, never the reason, whatever the function is called. */
static const char *const frame_lines[] = {
        "^[[:space:]]*File \".*\", line [0-9]+",
        "^[^[:space:]]+\\([^()]*\\) *\\[0x[0-9a-fA-F]+\\]$",
        "^#[0-9]+ +",
        "^0x[0-9a-fA-F]+ in ",
        "^[[:space:]]*[0-9]+: +0x[0-9a-fA-F]+",
        "^ +[0-9]+: [A-Za-z_<]",
        "^[[:space:]]+at [^[:space:]]",
        "^\\[(New LWP|New Thread|Thread debugging|Inferior [0-9]+)",
        "^Using host libthread_db",
        "^[0-9]+\t",                                   /* gdb's source line */
        NULL,
};

/* Lines whose own level says they are not errors, whatever words they hold. */
static const char *const quiet_lines[] = {
        "^([0-9]+\\.[0-9]{2}\\.[0-9]{3}\\.[0-9]{3} )?[IWD] ", /* llama.cpp's level letter */
        "^(\\([^)]*\\) )?(INFO|WARNING|WARN|DEBUG)[ :]",     /* Python logging, vLLM, uvicorn */
        "^([Ww]arn(ing)?|WARNING|[Nn]ote): ",
        "\\[(INFO|WARNING|WARN|DEBUG)\\]",                  /* TensorRT-LLM */
        NULL,
};

/* Lines that look like an error. */
static const char *const error_lines[] = {
        "^([0-9]+\\.[0-9]{2}\\.[0-9]{3}\\.[0-9]{3} )?E ", /* llama.cpp's level letter */
        "(^|[^A-Za-z0-9_])([Ee]rror|ERROR|[Ff]atal|FATAL|CRITICAL|PANIC)([^A-Za-z0-9_]|$)",
        "(^|\\[)[EF][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}", /* glog, torch c10 */
        "[A-Za-z0-9_](Error|Exception)(: |:?$)",          /* a Python exception, logged */
        "panicked at ",                                   /* Rust */
        "Segmentation fault",
        NULL,
};

/* Lines that say another process failed: NCCL's and a socket's word that the peer went
 * away (diagnose_text). */
static const char *const peer_lines[] = {
        "remote process exited",
        "[Cc]onnection closed by remote peer",
        "ncclRemoteError",
        NULL,
};

/* The line that ends a Python traceback: the exception and its message. */
#define TRACEBACK "Traceback (most recent call last):"
static const char *const exception_lines[] = {"^[A-Za-z_][A-Za-z0-9_.]*(: |:?$)", NULL};

struct rx_list {
        regex_t *re;
        size_t n;
};

static struct line_rules {
        bool ready;
        struct rx_list frame, quiet, error, exception, wrapper, foreign, peer;
} rules;

static void rx_list_release(struct rx_list *l) {
        for (size_t i = 0; i < l->n; i++)
                regfree(&l->re[i]);
        free(l->re);
        *l = (struct rx_list){0};
}

static int rx_list_compile(struct rx_list *l, const char *const *src) {
        size_t n = 0;
        while (src[n])
                n++;
        *l = (struct rx_list){.re = calloc(n + 1, sizeof(regex_t))};
        if (!l->re)
                return -ENOMEM;
        for (; l->n < n; l->n++)
                if (regcomp(&l->re[l->n], src[l->n], REG_EXTENDED | REG_NOSUB) != 0) {
                        rx_list_release(l);
                        return -EINVAL;
                }
        return 0;
}

static bool rx_list_match(const struct rx_list *l, const char *s) {
        for (size_t i = 0; i < l->n; i++)
                if (regexec(&l->re[i], s, 0, NULL, 0) == 0)
                        return true;
        return false;
}

/* The compiled line kinds, built on first use; NULL when out of memory. Under a lock: the
 * search reads lines with them (diagnose_line_quiet), and gauntlet-search-bench fits its
 * searches on several threads. */
static pthread_mutex_t rules_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct line_rules *rules_build(void) {
        if (rules.ready)
                return &rules;
        if (rx_list_compile(&rules.frame, frame_lines) < 0 || rx_list_compile(&rules.quiet, quiet_lines) < 0 ||
            rx_list_compile(&rules.error, error_lines) < 0 ||
            rx_list_compile(&rules.exception, exception_lines) < 0 ||
            rx_list_compile(&rules.wrapper, profile_wrapper_lines()) < 0 ||
            rx_list_compile(&rules.foreign, profile_foreign_lines()) < 0 ||
            rx_list_compile(&rules.peer, peer_lines) < 0) {
                rx_list_release(&rules.frame);
                rx_list_release(&rules.quiet);
                rx_list_release(&rules.error);
                rx_list_release(&rules.exception);
                rx_list_release(&rules.wrapper);
                rx_list_release(&rules.foreign);
                rx_list_release(&rules.peer);
                return NULL;
        }
        rules.ready = true;
        return &rules;
}
static const struct line_rules *rules_get(void) {
        pthread_mutex_lock(&rules_lock);
        const struct line_rules *r = rules_build();
        pthread_mutex_unlock(&rules_lock);
        return r;
}

/* C++'s terminate handler names the exception's type; the line after it, what(), carries
 * its message: that line is the better evidence when it is there. */
static void prefer_what_line(const char *text, size_t len, const char **line, size_t *line_len, size_t *no) {
        static const char terminate[] = "terminate called after throwing";
        if (!memmem(*line, *line_len, terminate, sizeof(terminate) - 1))
                return;
        const char *end = text + len;
        const char *p = *line + *line_len;
        size_t n = *no;
        while (p < end && *p != '\n')
                p++; /* the '\r' evidence_from would trim */
        while (p < end) {
                p++; /* the '\n' */
                n++;
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t k = nl ? (size_t)(nl - p) : (size_t)(end - p);
                size_t lead = 0;
                while (lead < k && (p[lead] == ' ' || p[lead] == '\t' || p[lead] == '\r'))
                        lead++;
                if (lead == k) {
                        p += k;
                        continue; /* blank */
                }
                if (k - lead >= 7 && memcmp(p + lead, "what():", 7) == 0) {
                        *line = p;
                        *line_len = k;
                        *no = n;
                }
                return;
        }
}

/* text[0..len) without its colours, in a copy the caller frees, when it has an escape; NULL
 * (and *ret_len untouched) when it has none, or out of memory (then read as it is). */
static char *uncoloured(const char *text, size_t len, size_t *ret_len) {
        if (!memchr(text, '\033', len))
                return NULL;
        char *copy = malloc(len + 1);
        if (!copy)
                return NULL;
        memcpy(copy, text, len);
        *ret_len = text_strip_ansi(copy, len);
        copy[*ret_len] = '\0';
        return copy;
}

int diagnose_text(const char *text, size_t len, const struct profile *p, struct diagnosis *ret) {
        _cleanup_free_ char *plain = uncoloured(text, len, &len);
        if (plain)
                text = plain;
        const struct table *t = table_for(p);
        const struct line_rules *r = rules_get();
        if (!t || !r)
                return -ENOMEM;
        const struct compiled *best = NULL;
        const char *best_line = NULL;
        size_t best_len = 0, best_no = 0;
        struct line_iter it = {.text = text, .len = len};
        int k;
        while ((k = line_next(&it)) > 0) {
                if (it.line_len == 0)
                        continue;
                /* a line cannot beat the best unless its tier could be lower */
                if (best && best->sig->tier == TIER_ROOT)
                        break;
                bool frame_checked = false;
                for (size_t j = 0; j < t->n; j++) {
                        const struct compiled *c = &t->entries[j];
                        if (best && c->sig->tier >= best->sig->tier)
                                continue;
                        if (c->needle[0] && !strstr(it.copy, c->needle))
                                continue;
                        if (regexec(&c->re, it.copy, 0, NULL, 0) != 0)
                                continue;
                        /* gdb prints a frame's arguments: "ggml_abort (... fmt="GGML_ASSERT(%s) failed")"
                         * repeats the text of the line above it */
                        if (!frame_checked && rx_list_match(&r->frame, it.copy))
                                break;
                        frame_checked = true;
                        best = c;
                        best_line = it.start;
                        best_len = it.line_len;
                        best_no = it.no;
                        break; /* table order: earlier entries win on the same line */
                }
        }
        line_iter_release(&it);
        if (k < 0)
                return k;
        if (!best)
                return 0;
        /* A line that says another process failed is no reason where a line before it says
         * what did: a rank that died of its own error ("RuntimeError: DeepGEMM kernels ... JIT
         * compilation is turned off by SGL_ENABLE_JIT_DEEPGEMM=0") leaves the other ranks to
         * print NCCL's "remote process exited". That line's signature is the reason, else
         * none (diagnose_log quotes the first error line). */
        if (best->sig->tier > TIER_ROOT && best_line > text) {
                _cleanup_free_ char *line = strndup(best_line, best_len);
                if (!line)
                        return -ENOMEM;
                if (rx_list_match(&r->peer, line)) {
                        size_t before = (size_t)(best_line - text);
                        int q = diagnose_text(text, before, p, ret);
                        if (q != 0)
                                return q;
                        _cleanup_free_ char *first = NULL;
                        size_t first_no;
                        q = diagnose_error_line(text, before, &first, &first_no);
                        if (q != 0)
                                return q < 0 ? q : 0;
                }
        }
        prefer_what_line(text, len, &best_line, &best_len, &best_no);
        char *e = evidence_from(best_line, best_len);
        if (!e)
                return -ENOMEM;
        *ret = (struct diagnosis){
                .verdict = strcmp(best->sig->cause, "hang") == 0 ? VERDICT_TIMEOUT : VERDICT_CRASH,
                .cause = best->sig->cause,
                .evidence = e,
                .line = best_no,
        };
        return 1;
}

/* pydantic's ValidationError says what failed on the lines after it: "1 validation error for
 * VllmConfig", then (after the field's name, when one) "  Value error, Total number of
 * attention heads (64) must be divisible by tensor parallel size (3). [type=…]". The
 * first such line of the next few, prefix stripped, into *ret (start, length); false when
 * none. */
#define PYDANTIC_HEAD "validation error"
static bool pydantic_message(struct line_iter *it, const char *prefix, size_t prefix_len, const char **ret,
                             size_t *ret_len) {
        for (int i = 0; i < 3 && line_next(it) > 0; i++) {
                const char *c = it->start;
                size_t n = it->line_len;
                if (prefix_len > 0 && n >= prefix_len && memcmp(c, prefix, prefix_len) == 0) {
                        c += prefix_len;
                        n -= prefix_len;
                }
                if (n == 0 || (c[0] != ' ' && c[0] != '\t'))
                        continue; /* the field's name */
                while (n > 0 && (c[0] == ' ' || c[0] == '\t')) {
                        c++;
                        n--;
                }
                static const char further[] = "For further information";
                if (n == 0 || (n >= sizeof(further) - 1 && memcmp(c, further, sizeof(further) - 1) == 0))
                        continue;
                *ret = c;
                *ret_len = n;
                return true;
        }
        return false;
}

bool diagnose_line_quiet(const char *line) {
        const struct line_rules *r = rules_get();
        return line && r && rx_list_match(&r->quiet, line);
}

int diagnose_error_line(const char *text, size_t len, char **ret_evidence, size_t *ret_line) {
        _cleanup_free_ char *plain = uncoloured(text, len, &len);
        if (plain)
                text = plain;
        const struct line_rules *r = rules_get();
        if (!r)
                return -ENOMEM;
        struct line_iter it = {.text = text, .len = len};
        const char *found = NULL;
        size_t found_len = 0, found_no = 0;
        /* inside a traceback: the text before "Traceback" when every line of it repeats it
         * (vLLM's "ERROR 11-29 07:01:02 [core.py:700] "), stripped from the lines that do */
        bool in_traceback = false;
        const char *prefix = NULL;
        size_t prefix_len = 0;
        int k = 0;
        while (!found && (k = line_next(&it)) > 0) {
                const char *line = it.copy;
                if (rx_list_match(&r->foreign, line))
                        continue; /* gauntlet's or srun's, between the server's lines */
                if (in_traceback) {
                        size_t skip = 0;
                        if (prefix_len > 0 && it.line_len >= prefix_len && memcmp(line, prefix, prefix_len) == 0)
                                skip = prefix_len;
                        const char *c = line + skip;
                        if (c[0] == '\0' || c[0] == ' ' || c[0] == '\t' || strstr(c, TRACEBACK) ||
                            rx_list_match(&r->frame, c))
                                continue; /* a frame, its code, its ^~~~ marks */
                        in_traceback = false;
                        if (rx_list_match(&r->exception, c)) {
                                if (!rx_list_match(&r->wrapper, c)) {
                                        found = it.start + skip;
                                        found_len = it.line_len - skip;
                                        found_no = it.no;
                                }
                                continue;
                        }
                        /* not an exception line: another process's line, read as any other */
                }
                const char *tb = strstr(line, TRACEBACK);
                if (tb) {
                        in_traceback = true;
                        prefix = it.start;
                        prefix_len = (size_t)(tb - line);
                        continue;
                }
                if (it.line_len == 0 || rx_list_match(&r->frame, line) || rx_list_match(&r->quiet, line) ||
                    rx_list_match(&r->wrapper, line))
                        continue;
                if (rx_list_match(&r->error, line)) {
                        found = it.start;
                        found_len = it.line_len;
                        found_no = it.no;
                }
        }
        /* an exception whose message is on its next lines: the two as one */
        const char *more = NULL;
        size_t more_len = 0;
        _cleanup_free_ char *joined = NULL;
        if (k > 0 && found && memmem(found, found_len, PYDANTIC_HEAD, strlen(PYDANTIC_HEAD)) &&
            pydantic_message(&it, prefix, prefix_len, &more, &more_len)) {
                size_t head = MIN(found_len, (size_t)DIAGNOSE_MAX_EVIDENCE);
                if (!(joined = strdup_printf("%.*s: %.*s", (int)head, found, (int)MIN(more_len, (size_t)DIAGNOSE_MAX_EVIDENCE),
                                             more))) {
                        line_iter_release(&it);
                        return -ENOMEM;
                }
        }
        line_iter_release(&it);
        if (k < 0)
                return k;
        if (!found)
                return 0;
        char *e = joined ? evidence_from(joined, strlen(joined)) : evidence_from(found, found_len);
        if (!e)
                return -ENOMEM;
        *ret_evidence = e;
        *ret_line = found_no;
        return 1;
}

/* A log written with colours is read as the same log without them: a signature, an
 * error line's words and the evidence quoted are the engine's text, not the terminal's. */
static void strip_colours(struct buf *b) {
        if (!b->data)
                return;
        b->len = text_strip_ansi(b->data, b->len);
        b->data[b->len] = '\0';
}

/* Reads the head and the tail of a log: the innermost error of a long log is near its end,
 * but the first fatal line can be at its start. */
static int read_log(const char *path, struct buf *out) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        size_t size = (size_t)st.st_size;
        bool cut = size > DIAGNOSE_MAX_HEAD + DIAGNOSE_MAX_TAIL;
        buf_init(out, DIAGNOSE_MAX_HEAD + DIAGNOSE_MAX_TAIL + 64);
        _cleanup_free_ char *head = NULL;
        size_t len;
        int r = read_fd_upto(fd, cut ? DIAGNOSE_MAX_HEAD : size, &head, &len);
        if (r < 0)
                return r;
        if (buf_append(out, head, len) < 0)
                return -ENOMEM;
        if (!cut) {
                strip_colours(out);
                return 0;
        }
        /* the head, then the tail after a visible gap (a tail that cannot be read is left
         * out) */
        _cleanup_free_ char *tail = NULL;
        if (buf_puts(out, "\n[...]\n") < 0 || lseek(fd, -(off_t)DIAGNOSE_MAX_TAIL, SEEK_END) < 0)
                return -EIO;
        if (read_fd_upto(fd, DIAGNOSE_MAX_TAIL, &tail, &len) == 0)
                (void)buf_append(out, tail, len);
        strip_colours(out);
        return 0;
}

/* Whether a line is not the server's (gauntlet's note, srun's). */
static bool foreign_line(const char *p, size_t n) {
        const struct line_rules *r = rules_get();
        _cleanup_free_ char *line = r ? strndup(p, n) : NULL;
        return line && rx_list_match(&r->foreign, line);
}

char *diagnose_last_line(const char *log_path) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        if (read_log(log_path, &b) < 0)
                return NULL;
        const char *t = buf_str(&b);
        size_t end = b.len;
        while (end > 0) {
                while (end > 0 && (t[end - 1] == '\n' || t[end - 1] == '\r' || t[end - 1] == ' '))
                        end--;
                size_t start = end;
                while (start > 0 && t[start - 1] != '\n')
                        start--;
                if (end > start && !foreign_line(t + start, end - start))
                        return evidence_from(t + start, end - start);
                end = start;
        }
        return NULL;
}

/* A port number at p (1-65535, not followed by another digit), or 0. */
static int port_at(const char *p) {
        long v = 0;
        size_t n = 0;
        for (; n < 6 && p[n] >= '0' && p[n] <= '9'; n++)
                v = v * 10 + (p[n] - '0');
        return n > 0 && n < 6 && v >= 1 && v <= 65535 ? (int)v : 0;
}

/* Whether the text before p (an address's ':') ends in an IPv4 address, "]" (IPv6) or
 * "localhost": a clock's "05:26:03" is no address. */
static bool address_before(const char *start, const char *p) {
        if (p > start && p[-1] == ']')
                return true;
        if (p - start >= 9 && strncmp(p - 9, "localhost", 9) == 0)
                return true;
        size_t dots = 0;
        const char *q = p;
        while (q > start && (isdigit((unsigned char)q[-1]) || q[-1] == '.'))
                dots += *--q == '.';
        return dots == 3 && q < p && isdigit((unsigned char)p[-1]);
}

int diagnose_named_port(const char *evidence) {
        if (!evidence)
                return 0;
        for (const char *p = evidence; *p; p++) {
                /* the word "port" alone: not "support 16", "Transport", "port_args" */
                if (strncasecmp(p, "port", 4) == 0 && (p == evidence || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
                    !isalnum((unsigned char)p[4]) && p[4] != '_') {
                        const char *q = p + 4;
                        q += strspn(q, " :=");
                        int v = port_at(q);
                        if (v)
                                return v;
                }
                /* ('127.0.0.1', 30000) and 127.0.0.1:30000, [::1]:30000 */
                if ((p[0] == '\'' && p[1] == ',' && p[2] == ' ') || (p[0] == ':' && address_before(evidence, p))) {
                        int v = port_at(p + (p[0] == ':' ? 1 : 3));
                        if (v)
                                return v;
                }
        }
        return 0;
}

/* A log read for its reason: a signature's diagnosis when one matches; else `status`
 * (what gauntlet saw: an exit status, a deadline) with the log's first error line, else
 * its last line, else `if_empty` when given, as verdict/cause. */
static int diagnose_log(const char *log_path, const struct profile *p, const char *status, const char *if_empty,
                        enum verdict v, const char *cause, struct diagnosis *ret) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        _cleanup_free_ char *first = NULL;
        size_t first_no = 0;
        int r = read_log(log_path, &b);
        if (r >= 0) {
                r = diagnose_text(buf_str(&b), b.len, p, ret);
                if (r != 0)
                        return r < 0 ? r : 0;
                r = diagnose_error_line(buf_str(&b), b.len, &first, &first_no);
                if (r < 0)
                        return r;
        }
        _cleanup_free_ char *last = first ? NULL : diagnose_last_line(log_path);
        char *e = first      ? strdup_printf("%s" DIAGNOSE_FIRST_ERROR "%s", status, first)
                  : last     ? strdup_printf("%s" DIAGNOSE_LAST_LINE "%s", status, last)
                  : if_empty ? strdup_printf("%s; %s", status, if_empty)
                             : strdup(status);
        if (!e)
                return -ENOMEM;
        *ret = (struct diagnosis){.verdict = v, .cause = cause, .evidence = e, .line = first_no};
        return 0;
}

int diagnose_exit(const char *log_path, const struct profile *p, int exit_code, int exit_signal,
                  struct diagnosis *ret) {
        char status[64];
        exit_describe(exit_code, exit_signal, status);
        return diagnose_log(log_path, p, status, NULL, VERDICT_CRASH, exit_signal ? "signal" : "exit", ret);
}

int diagnose_deadline(const char *log_path, const struct profile *p, usec_t timeout, struct diagnosis *ret) {
        char dur[32];
        _cleanup_free_ char *status = strdup_printf("not ready after %s", format_duration(timeout, dur));
        if (!status)
                return -ENOMEM;
        return diagnose_log(log_path, p, status, "the log is empty", VERDICT_TIMEOUT, "startup", ret);
}

void diagnosis_release(struct diagnosis *d) {
        free(d->evidence);
        d->evidence = NULL;
}
