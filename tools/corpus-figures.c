/* corpus-figures.c -- the detectors' figures on tests/corpus: garbage caught and clean
 * outputs flagged (false alarms), per kind, for the tuning part and the held-back part.
 * A measurement, not a test: `make corpus-figures` prints the tables that
 * docs/detectors.md records (tests/unit/test_detect.c asserts file by file).
 *
 *   corpus-figures [--details] [--details-holdout] [--mark-misses] [CORPUS_DIR]
 *
 * Then the same garbage judged with the forced subset (detect_input.forced: what the bench's
 * outputs forced past their end get), and tests/corpus/forced/ (honest answers forced past
 * their end) with it.
 *
 * --details lists every miss and false alarm of the tuning part with its evidence;
 * --details-holdout does the same for the held-back part, which is for reporting only
 * (tuning on it would make its figures worthless). --mark-misses rewrites the `known_miss=1`
 * line of every collected (engine/) garbage file to match the verdict now, so that
 * tests/unit/test_detect.c holds the detectors to today's figures: a file caught today must
 * stay caught, and one caught one day shows up there. A file NAME.txt may have NAME.reasoning
 * (the reasoning part) and NAME.meta (`finish_reason=`, `completion_tokens=`, `kind=`, `known_miss=1`,
 * and the question: `question=`, or the messages of a collected file's `request=`).
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate/detect.h"
#include "base/util.h"
#include "../tests/corpus-meta.h"

#define FILE_MAX ((size_t)16 << 20)

struct part {
        const char *dir;
        bool holdout, garbage;
        const char *source;  /* "hand" (written for the corpus) or "engine" (collected) */
        bool forced;         /* judged with detect_input.forced (the bench's subset) */
};

/* The forced rows judge the same garbage again with the forced subset (what the bench's
 * forced outputs get), and tests/corpus/forced/: honest answers forced past their end. */
static const struct part parts[] = {
        {"garbage", false, true, "hand", false},
        {"clean", false, false, "hand", false},
        {"holdout/garbage", true, true, "hand", false},
        {"holdout/clean", true, false, "hand", false},
        {"engine/garbage", false, true, "engine", false},
        {"engine/clean", false, false, "engine", false},
        {"holdout/engine/garbage", true, true, "engine", false},
        {"holdout/engine/clean", true, false, "engine", false},
        {"garbage", false, true, "hand", true},
        {"holdout/garbage", true, true, "hand", true},
        {"engine/garbage", false, true, "engine", true},
        {"holdout/engine/garbage", true, true, "engine", true},
        {"forced", false, false, "hand", true},
};

struct row {
        char *kind;           /* "engine: word-repeat", "hand: hand-written", ... */
        bool garbage, forced;
        size_t n[2], flagged[2];  /* [0] tuning, [1] holdout */
};

static struct row *rows;
static size_t n_rows;

static struct row *row_get(const char *kind, bool garbage, bool forced) {
        for (size_t i = 0; i < n_rows; i++)
                if (rows[i].garbage == garbage && rows[i].forced == forced && strcmp(rows[i].kind, kind) == 0)
                        return &rows[i];
        struct row *nr = realloc(rows, (n_rows + 1) * sizeof(*rows));
        if (!nr)
                return NULL;
        rows = nr;
        rows[n_rows] = (struct row){.kind = strdup(kind), .garbage = garbage, .forced = forced};
        return rows[n_rows].kind ? &rows[n_rows++] : NULL;
}

/* The value of "key=" at the start of a line of meta, into buf (empty when absent). */
static void meta_get(const char *meta, const char *key, char *buf, size_t size) {
        size_t kl = strlen(key);
        buf[0] = '\0';
        for (const char *p = meta; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
                        size_t n = strcspn(p + kl + 1, "\n");
                        if (n >= size)
                                n = size - 1;
                        memcpy(buf, p + kl + 1, n);
                        buf[n] = '\0';
                        return;
                }
}


static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_row(const void *a, const void *b) {
        const struct row *x = a, *y = b;
        if (x->forced != y->forced)
                return x->forced ? 1 : -1;
        if (x->garbage != y->garbage)
                return x->garbage ? -1 : 1;
        return strcmp(x->kind, y->kind);
}

/* Rewrites meta without its known_miss line, and with "known_miss=1" when missed. */
static int mark_miss(const char *path, const char *meta, bool missed) {
        _cleanup_free_ char *tmp = strdup_printf("%s.tmp", path);
        if (!tmp)
                return -ENOMEM;
        FILE *f = fopen(tmp, "we");
        if (!f)
                return -errno;
        for (const char *p = meta; p && *p;) {
                size_t n = strcspn(p, "\n");
                if (strncmp(p, "known_miss=", 11) != 0)
                        fprintf(f, "%.*s\n", (int)n, p);
                p += n;
                if (*p)
                        p++;
        }
        if (missed)
                fputs("known_miss=1\n", f);
        if (fclose(f) != 0 || rename(tmp, path) < 0) {
                int r = -errno;
                unlink(tmp);
                return r;
        }
        return 0;
}

/* Judges every file of one part; returns 0, or -errno on a file it cannot read. */
static int run_part(const char *corpus, const struct part *pt, bool details, bool mark) {
        _cleanup_free_ char *dir = strdup_printf("%s/%s", corpus, pt->dir);
        if (!dir)
                return -ENOMEM;
        DIR *d = opendir(dir);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        _cleanup_strv_free_ char **names = NULL;
        struct dirent *e;
        int r = 0;
        while ((e = readdir(d)))
                if (endswith(e->d_name, ".txt") && (r = strv_push(&names, e->d_name)) < 0)
                        break;
        closedir(d);
        if (r < 0)
                return r;
        size_t n = strv_length(names);
        if (n)
                qsort(names, n, sizeof(char *), cmp_str);
        for (size_t i = 0; i < n; i++) {
                int stem = (int)(strlen(names[i]) - 4);
                _cleanup_free_ char *path = strdup_printf("%s/%s", dir, names[i]);
                _cleanup_free_ char *mpath = strdup_printf("%s/%.*s.meta", dir, stem, names[i]);
                _cleanup_free_ char *rpath = strdup_printf("%s/%.*s.reasoning", dir, stem, names[i]);
                if (!path || !mpath || !rpath)
                        return -ENOMEM;
                _cleanup_free_ char *text = NULL, *meta = NULL, *why = NULL;
                size_t len = 0, why_len = 0;
                r = read_file_capped(path, FILE_MAX, &text, &len);
                if (r < 0) {
                        fprintf(stderr, "corpus-figures: cannot read '%s': %s\n", path, strerror(-r));
                        return r;
                }
                char finish[32], kind[64], miss[8], tokens[24];
                if (read_file_capped(mpath, 1 << 16, &meta, NULL) < 0)
                        meta = NULL;
                meta_get(meta, "finish_reason", finish, sizeof finish);
                meta_get(meta, "kind", kind, sizeof kind);
                meta_get(meta, "known_miss", miss, sizeof miss);
                meta_get(meta, "completion_tokens", tokens, sizeof tokens);
                if (read_file_capped(rpath, FILE_MAX, &why, &why_len) < 0)
                        why = NULL;
                _cleanup_free_ char *question = meta_question(meta);
                struct detect_input in = {.text = text, .len = len, .reasoning = why, .reasoning_len = why_len,
                                          .completion_tokens = strtoll(tokens, NULL, 10),
                                          .finish_reason = *finish ? finish : NULL, .question = question,
                                          .question_len = question ? strlen(question) : 0, .forced = pt->forced};
                struct detect_result res;
                r = detect_output(&in, &res);
                if (r < 0)
                        return r;
                _cleanup_free_ char *label = strdup_printf("%s: %s", pt->source, *kind ? kind : "hand-written");
                struct row *row = label ? row_get(label, pt->garbage, pt->forced) : NULL;
                if (!row) {
                        detect_result_release(&res);
                        return -ENOMEM;
                }
                bool flagged = res.verdict == VERDICT_GARBAGE;
                row->n[pt->holdout]++;
                row->flagged[pt->holdout] += flagged;
                if (mark && !pt->forced && pt->garbage && strcmp(pt->source, "engine") == 0 && meta &&
                    (strcmp(miss, "1") == 0) != !flagged) {
                        r = mark_miss(mpath, meta, !flagged);
                        if (r < 0) {
                                detect_result_release(&res);
                                return r;
                        }
                }
                if (details && flagged != pt->garbage)
                        printf("%s%s %s/%s (%s): %s %s\n", pt->garbage ? "miss" : "FALSE ALARM",
                               pt->forced ? " (forced)" : "", pt->dir, names[i],
                               *kind ? kind : "hand-written", flagged ? res.cause : "pass",
                               flagged ? res.evidence : "");
                detect_result_release(&res);
        }
        return 0;
}

static void print_table(bool garbage, bool forced) {
        size_t tot[2][2] = {{0}};
        if (forced)
                printf("\n| %s | tuning | held back |\n| --- | --- | --- |\n",
                       garbage ? "forced subset: garbage, caught / files"
                               : "forced subset: honest forced continuations, false alarms / files");
        else
                printf("\n| %s | tuning | held back |\n| --- | --- | --- |\n",
                       garbage ? "garbage, caught / files" : "clean, false alarms / files");
        for (size_t i = 0; i < n_rows; i++) {
                const struct row *w = &rows[i];
                if (w->garbage != garbage || w->forced != forced)
                        continue;
                printf("| %s | %zu / %zu | %zu / %zu |\n", w->kind, w->flagged[0], w->n[0], w->flagged[1], w->n[1]);
                for (int h = 0; h < 2; h++) {
                        tot[h][0] += w->flagged[h];
                        tot[h][1] += w->n[h];
                }
        }
        printf("| **all** | **%zu / %zu** | **%zu / %zu** |\n", tot[0][0], tot[0][1], tot[1][0], tot[1][1]);
}

int main(int argc, char **argv) {
        bool details = false, details_holdout = false, mark = false;
        const char *corpus = "tests/corpus";
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--details") == 0)
                        details = true;
                else if (strcmp(argv[i], "--details-holdout") == 0)
                        details_holdout = true;
                else if (strcmp(argv[i], "--mark-misses") == 0)
                        mark = true;
                else if (argv[i][0] == '-') {
                        fprintf(stderr, "corpus-figures: unknown option '%s'\n"
                                        "usage: corpus-figures [--details] [--details-holdout] [--mark-misses] [CORPUS_DIR]\n",
                                argv[i]);
                        return 2;
                } else
                        corpus = argv[i];
        }
        for (size_t i = 0; i < ELEMENTSOF(parts); i++) {
                int r = run_part(corpus, &parts[i], parts[i].holdout ? details_holdout : details, mark);
                if (r < 0) {
                        fprintf(stderr, "corpus-figures: %s/%s: %s\n", corpus, parts[i].dir, strerror(-r));
                        return 1;
                }
        }
        if (n_rows == 0) {
                fprintf(stderr, "corpus-figures: no corpus files under '%s'\n", corpus);
                return 1;
        }
        qsort(rows, n_rows, sizeof(*rows), cmp_row);
        print_table(true, false);
        print_table(false, false);
        print_table(true, true);
        print_table(false, true);
        for (size_t i = 0; i < n_rows; i++)
                free(rows[i].kind);
        free(rows);
        return fclose(stdout) == 0 ? 0 : 1;
}
