/* diagnose.c -- log signatures and exit statuses to causes. */
#include "diagnose.h"

#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "util.h"

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

static char *evidence_from(const char *line, size_t len) {
        while (len > 0 && (line[0] == ' ' || line[0] == '\t')) {
                line++;
                len--;
        }
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

int diagnose_text(const char *text, size_t len, const struct profile *p, struct diagnosis *ret) {
        const struct table *t = table_for(p);
        if (!t)
                return -ENOMEM;
        const struct compiled *best = NULL;
        const char *best_line = NULL;
        size_t best_len = 0, best_no = 0;
        char *line = NULL;
        size_t line_cap = 0, no = 0;
        for (size_t i = 0; i < len;) {
                const char *start = text + i;
                const char *nl = memchr(start, '\n', len - i);
                size_t k = nl ? (size_t)(nl - start) : len - i;
                i += k + 1;
                no++;
                if (k == 0)
                        continue;
                /* a line cannot beat the best unless its tier could be lower */
                if (best && best->sig->tier == TIER_ROOT)
                        break;
                if (k + 1 > line_cap) {
                        char *nlbuf = realloc(line, k + 1);
                        if (!nlbuf) {
                                free(line);
                                return -ENOMEM;
                        }
                        line = nlbuf;
                        line_cap = k + 1;
                }
                memcpy(line, start, k);
                line[k] = '\0';
                for (size_t j = 0; j < t->n; j++) {
                        const struct compiled *c = &t->entries[j];
                        if (best && c->sig->tier >= best->sig->tier)
                                continue;
                        if (c->needle[0] && !strstr(line, c->needle))
                                continue;
                        if (regexec(&c->re, line, 0, NULL, 0) == 0) {
                                best = c;
                                best_line = start;
                                best_len = k;
                                best_no = no;
                                break; /* table order: earlier entries win on the same line */
                        }
                }
        }
        free(line);
        if (!best)
                return 0;
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
        buf_init(out, DIAGNOSE_MAX_HEAD + DIAGNOSE_MAX_TAIL + 64);
        char chunk[65536];
        size_t want_head = MIN(size, DIAGNOSE_MAX_HEAD + DIAGNOSE_MAX_TAIL);
        size_t got = 0;
        while (got < want_head) {
                ssize_t k = read(fd, chunk, MIN(sizeof(chunk), want_head - got));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                if (buf_append(out, chunk, (size_t)k) < 0)
                        return -ENOMEM;
                got += (size_t)k;
        }
        if (size > want_head) {
                /* keep the head, then the tail after a visible gap */
                out->len = MIN(out->len, DIAGNOSE_MAX_HEAD);
                if (buf_puts(out, "\n[...]\n") < 0 || lseek(fd, -(off_t)DIAGNOSE_MAX_TAIL, SEEK_END) < 0)
                        return -EIO;
                for (;;) {
                        ssize_t k = read(fd, chunk, sizeof(chunk));
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k <= 0)
                                break;
                        if (buf_append(out, chunk, (size_t)k) < 0)
                                break;
                }
        }
        return 0;
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
                if (end > start)
                        return evidence_from(t + start, end - start);
                end = start;
        }
        return NULL;
}

int diagnose_exit(const char *log_path, const struct profile *p, int exit_code, int exit_signal,
                  struct diagnosis *ret) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        int r = read_log(log_path, &b);
        if (r >= 0) {
                r = diagnose_text(buf_str(&b), b.len, p, ret);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        _cleanup_free_ char *last = diagnose_last_line(log_path);
        char status[64];
        const char *cause;
        if (exit_signal) {
                const char *name = sigabbrev_np(exit_signal);
                if (name)
                        snprintf(status, sizeof(status), "killed by SIG%s", name);
                else
                        snprintf(status, sizeof(status), "killed by signal %d", exit_signal);
                cause = "signal";
        } else {
                snprintf(status, sizeof(status), "exited with status %d", exit_code);
                cause = "exit";
        }
        char *e = last ? strdup_printf("%s; last log line: %s", status, last) : strdup(status);
        if (!e)
                return -ENOMEM;
        *ret = (struct diagnosis){.verdict = VERDICT_CRASH, .cause = cause, .evidence = e};
        return 0;
}

void diagnosis_release(struct diagnosis *d) {
        free(d->evidence);
        d->evidence = NULL;
}
