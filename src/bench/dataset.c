/* dataset.c -- the bench's workload data: dataset options, ShareGPT and JSONL files, draws. */
#include "bench/dataset.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/rng.h"
#include "base/util.h"
#include "text/buf.h"
#include "text/text.h"

static const char *const kind_names[_DATASET_MAX] = {
        [DATASET_RANDOM] = "random",
        [DATASET_SHAREGPT] = "sharegpt",
        [DATASET_PREFIX_REPETITION] = "prefix_repetition",
        [DATASET_CUSTOM] = "custom",
        [DATASET_MULTI_TURN] = "multi_turn",
        [DATASET_TRACE] = "trace",
};

const char *dataset_kind_name(enum dataset_kind k) {
        return k >= 0 && k < _DATASET_MAX ? kind_names[k] : NULL;
}

int dataset_kind_from_name(const char *s, enum dataset_kind *ret) {
        for (int i = 0; i < _DATASET_MAX; i++)
                if (strcmp(s, kind_names[i]) == 0) {
                        *ret = (enum dataset_kind)i;
                        return 0;
                }
        return -EINVAL;
}

void dataset_options_init(struct dataset_options *o) {
        *o = (struct dataset_options){
                .kind = DATASET_RANDOM,
                .prefix_len = 256,
                .suffix_len = 256,
                .num_prefixes = 10,
                .prefix_output_len = 128,
                .sharegpt_min_len = 4,
                .sharegpt_max_prompt_len = 1024,
                .sharegpt_max_total_len = 2048,
                .multi_turn_input_len = 128,
                .trace_speed = 1,
                .trace_unit_ms = 1,
                .trace_block_size = 512,
        };
}

bool dataset_has_file(const struct dataset_options *o) {
        return o->kind == DATASET_SHAREGPT || o->kind == DATASET_CUSTOM || o->kind == DATASET_TRACE ||
               (o->kind == DATASET_MULTI_TURN && o->path);
}

int dataset_multi_turn_turns(const struct dataset_options *o) {
        return o->multi_turn_turns > 0 ? o->multi_turn_turns : 4;
}

int dataset_multi_turn_output(const struct dataset_options *o) {
        return o->multi_turn_output_len > 0 ? o->multi_turn_output_len : 128;
}

void dataset_options_release(struct dataset_options *o) {
        free(o->path);
        o->path = NULL;
}

const char *dataset_options_check(const struct dataset_options *o) {
        bool file = o->kind == DATASET_SHAREGPT || o->kind == DATASET_CUSTOM || o->kind == DATASET_TRACE;
        if (file && (!o->path || !*o->path))
                return "this dataset needs a file (dataset path)";
        if (o->kind == DATASET_MULTI_TURN && o->path && !*o->path)
                return "the dataset path is empty";
        if (!file && o->kind != DATASET_MULTI_TURN && o->path)
                return "only the sharegpt, custom, multi_turn and trace datasets read a file";
        if (o->kind == DATASET_MULTI_TURN && !o->path && o->multi_turn_input_len < 1)
                return "multi_turn needs user turns of at least one token";
        if (!(o->trace_speed > 0) || o->trace_speed > 1e6)
                return "the trace speed must be above 0 (1: the trace's own times)";
        if (!(o->trace_unit_ms > 0))
                return "the trace unit must be s, ms, us or ns";
        if (o->trace_block_size < 1)
                return "the trace block size must be at least one token";
        if (!(o->range_ratio >= 0 && o->range_ratio < 1))
                return "the range ratio must be at least 0 and less than 1";
        if (o->kind == DATASET_PREFIX_REPETITION) {
                int n = o->num_prompts ? o->num_prompts : DATASET_DEFAULT_PROMPTS;
                if (o->num_prefixes < 1 || n < o->num_prefixes)
                        return "prefix_repetition needs at least as many prompts as prefixes";
                if (o->prefix_len + o->suffix_len < 1 || o->prefix_output_len < 1)
                        return "prefix_repetition needs a prompt and an output of at least one token";
        }
        if (o->sharegpt_max_total_len > 0 && o->sharegpt_max_prompt_len > o->sharegpt_max_total_len)
                return "the longest prompt kept is longer than the longest prompt and output kept";
        return NULL;
}

/* ---- files ---------------------------------------------------------------------------- */

struct reader {
        const char *name;
        const char *p, *start, *end;
        unsigned line;          /* of *p */
        char **ret_error;
        struct dataset *d;
};

/* The message is escaped (text_escape): it quotes the file's bytes (jansson's "near '...'",
 * a character found where an entry was expected), which may be control characters or not
 * UTF-8, and it must stay one printable line. */
static int fail(struct reader *rd, unsigned line, const char *fmt, ...) _printf_(3, 4);
static int fail(struct reader *rd, unsigned line, const char *fmt, ...) {
        if (rd->ret_error) {
                va_list ap;
                va_start(ap, fmt);
                char *msg = NULL;
                if (vasprintf(&msg, fmt, ap) < 0)
                        msg = NULL;
                va_end(ap);
                _cleanup_buf_ struct buf b;
                buf_init(&b, BUF_DEFAULT_MAX);
                free(*rd->ret_error);
                *rd->ret_error = msg && text_escape(&b, msg, 0, TEXT_TERMINAL) == 0
                                         ? strdup_printf("%s:%u: %s", rd->name, line, buf_str(&b))
                                         : NULL;
                free(msg);
        }
        return -EINVAL;
}

static void advance(struct reader *rd) {
        if (*rd->p == '\n')
                rd->line++;
        rd->p++;
}

static void skip_ws(struct reader *rd) {
        while (rd->p < rd->end && (*rd->p == ' ' || *rd->p == '\t' || *rd->p == '\n' || *rd->p == '\r'))
                advance(rd);
}

/* At the start of a JSON value: moves past it without building anything (strings with
 * their escapes, nesting counted), so that jansson only ever reads one entry at a time. */
static int skip_value(struct reader *rd) {
        unsigned line = rd->line;
        size_t depth = 0;
        bool in_string = false;
        const char *cap = rd->end - rd->p > (ptrdiff_t)DATASET_MAX_ENTRY_BYTES ? rd->p + DATASET_MAX_ENTRY_BYTES : NULL;
        while (rd->p < rd->end) {
                char c = *rd->p;
                if (rd->p == cap)
                        return fail(rd, line, "an entry is longer than %zu bytes", DATASET_MAX_ENTRY_BYTES);
                if (in_string) {
                        if (c == '\\') {
                                advance(rd);
                                if (rd->p >= rd->end)
                                        break;
                        } else if (c == '"')
                                in_string = false;
                        else if (c == '\n')
                                return fail(rd, rd->line, "a line break inside a string");
                        advance(rd);
                        if (!in_string && depth == 0)
                                return 0;
                        continue;
                }
                if (c == '"')
                        in_string = true;
                else if (c == '{' || c == '[')
                        depth++;
                else if (c == '}' || c == ']') {
                        if (depth == 0)
                                return 0; /* the end of the enclosing array */
                        depth--;
                } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'))
                        return 0;
                advance(rd);
                if (depth == 0 && (c == '}' || c == ']'))
                        return 0;
        }
        if (depth || in_string)
                return fail(rd, line, "the entry starting here does not end before the file does");
        return 0;
}

static int add_entry(struct reader *rd, struct dataset_entry e) {
        struct dataset *d = rd->d;
        if (d->n % 1024 == 0) {
                struct dataset_entry *v = realloc(d->v, (d->n + 1024) * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                d->v = v;
        }
        d->v[d->n++] = e;
        return 0;
}

/* A text of an entry: a string, not empty, not over DATASET_MAX_TEXT. */
static int text_of(struct reader *rd, unsigned line, json_t *v, const char *what, char **ret) {
        if (!json_is_string(v))
                return fail(rd, line, "%s is not a string", what);
        size_t n = json_string_length(v);
        if (n > DATASET_MAX_TEXT)
                return fail(rd, line, "%s is %zu bytes, more than the %zu a text may have", what, n, DATASET_MAX_TEXT);
        if (memchr(json_string_value(v), '\0', n))
                return fail(rd, line, "%s holds a NUL character", what);
        *ret = strndup(json_string_value(v), n);
        return *ret ? 0 : -ENOMEM;
}

static bool from_is(json_t *turn, const char *const *names) {
        const char *f = json_string_value(json_object_get(turn, "from"));
        if (!f)
                f = json_string_value(json_object_get(turn, "role"));
        for (; f && *names; names++)
                if (strcmp(f, *names) == 0)
                        return true;
        return false;
}

/* One conversation: the first human turn and the turn after it. Turns that say who spoke
 * ("from" or "role") are read by that; without it the first two turns are taken, as vLLM
 * does. */
static int sharegpt_entry(struct reader *rd, unsigned line, json_t *o) {
        static const char *const human[] = {"human", "user", NULL};
        if (!json_is_object(o))
                return fail(rd, line, "entry %zu is not an object", rd->d->entries);
        json_t *conv = json_object_get(o, "conversations");
        if (!conv)
                conv = json_object_get(o, "conversation");
        if (!json_is_array(conv))
                return fail(rd, line, "entry %zu has no \"conversations\" list", rd->d->entries);
        size_t i, at = SIZE_MAX;
        json_t *turn;
        json_array_foreach(conv, i, turn) {
                if (!json_is_object(turn) || !json_is_string(json_object_get(turn, "value")))
                        return fail(rd, line, "entry %zu: turn %zu is not an object with a \"value\" string",
                                    rd->d->entries, i + 1);
                if (at == SIZE_MAX && (from_is(turn, human) || (i == 0 && !json_object_get(turn, "from") &&
                                                                 !json_object_get(turn, "role"))))
                        at = i;
        }
        if (at == SIZE_MAX || at + 1 >= json_array_size(conv)) {
                rd->d->no_reply++; /* real files have empty and one-turn conversations */
                return 0;
        }
        struct dataset_entry e = {.output_tokens = -1, .line = line};
        int r = text_of(rd, line, json_object_get(json_array_get(conv, at), "value"), "the human turn", &e.prompt);
        if (r >= 0)
                r = text_of(rd, line, json_object_get(json_array_get(conv, at + 1), "value"), "the reply", &e.reply);
        if (r >= 0 && !*e.prompt) {
                free(e.prompt);
                free(e.reply);
                rd->d->no_reply++;
                return 0;
        }
        if (r >= 0)
                r = add_entry(rd, e);
        if (r < 0) {
                free(e.prompt);
                free(e.reply);
        }
        return r;
}

/* multi_turn: the human turns of one conversation, each with the turn that answers it, up to
 * the first human turn without an answer (turns before the first human one, a system
 * prompt, are left out). Who spoke is read as sharegpt_entry reads it. */
static int multi_entry(struct reader *rd, unsigned line, json_t *o) {
        static const char *const human[] = {"human", "user", NULL};
        if (!json_is_object(o))
                return fail(rd, line, "entry %zu is not an object", rd->d->entries);
        json_t *conv = json_object_get(o, "conversations");
        if (!conv)
                conv = json_object_get(o, "conversation");
        if (!json_is_array(conv))
                return fail(rd, line, "entry %zu has no \"conversations\" list", rd->d->entries);
        size_t n = json_array_size(conv), i;
        json_t *turn;
        bool said = false; /* the turns say who spoke */
        json_array_foreach(conv, i, turn) {
                if (!json_is_object(turn) || !json_is_string(json_object_get(turn, "value")))
                        return fail(rd, line, "entry %zu: turn %zu is not an object with a \"value\" string",
                                    rd->d->entries, i + 1);
                said |= json_object_get(turn, "from") || json_object_get(turn, "role");
        }
        struct dataset_entry e = {.output_tokens = -1, .line = line};
        size_t cap = MIN(n / 2 + 1, (size_t)DATASET_MAX_TURNS);
        int r = 0;
        if (!(e.turns = calloc(cap, sizeof(char *))) || !(e.replies = calloc(cap, sizeof(char *))))
                r = -ENOMEM;
        i = 0;
        if (said)
                while (i < n && !from_is(json_array_get(conv, i), human))
                        i++;
        for (; r >= 0 && i + 1 < n && e.n_turns < cap; i += 2) {
                json_t *h = json_array_get(conv, i), *a = json_array_get(conv, i + 1);
                if (said && (!from_is(h, human) || from_is(a, human)))
                        break;
                if (json_string_length(json_object_get(h, "value")) == 0)
                        break;
                r = text_of(rd, line, json_object_get(h, "value"), "a human turn", &e.turns[e.n_turns]);
                if (r >= 0 && (r = text_of(rd, line, json_object_get(a, "value"), "a reply",
                                           &e.replies[e.n_turns])) < 0) {
                        free(e.turns[e.n_turns]);
                        e.turns[e.n_turns] = NULL;
                }
                if (r >= 0)
                        e.n_turns++;
        }
        if (r >= 0 && e.n_turns == 0) {
                rd->d->no_reply++; /* real files have empty and one-turn conversations */
                free(e.turns);
                free(e.replies);
                return 0;
        }
        if (r >= 0)
                r = add_entry(rd, e);
        if (r < 0) {
                for (size_t k = 0; k < e.n_turns; k++) {
                        free(e.turns[k]);
                        free(e.replies[k]);
                }
                free(e.turns);
                free(e.replies);
        }
        return r;
}

static int sharegpt_parse(struct reader *rd) {
        skip_ws(rd);
        if (rd->p >= rd->end || *rd->p != '[')
                return fail(rd, rd->line, "a ShareGPT file is one JSON list of conversations; this does not start "
                            "with '['");
        advance(rd);
        for (;;) {
                skip_ws(rd);
                if (rd->p >= rd->end)
                        return fail(rd, rd->line, "the list of conversations does not end (no ']')");
                if (*rd->p == ']' && rd->d->entries == 0) {
                        advance(rd);
                        break;
                }
                if (rd->d->entries >= DATASET_MAX_ENTRIES)
                        return fail(rd, rd->line, "more than %d entries", DATASET_MAX_ENTRIES);
                const char *s = rd->p;
                unsigned line = rd->line;
                int r = skip_value(rd);
                if (r < 0)
                        return r;
                if (rd->p == s)
                        return fail(rd, line, "an entry was expected, not '%c'", *s);
                json_error_t je;
                json_t *o = json_loadb(s, (size_t)(rd->p - s), JSON_DECODE_ANY, &je);
                rd->d->entries++;
                if (!o)
                        return fail(rd, line + (je.line > 0 ? (unsigned)je.line - 1 : 0), "malformed JSON: %s", je.text);
                r = rd->d->kind == DATASET_MULTI_TURN ? multi_entry(rd, line, o) : sharegpt_entry(rd, line, o);
                json_decref(o);
                if (r < 0)
                        return r;
                skip_ws(rd);
                if (rd->p < rd->end && *rd->p == ',') {
                        advance(rd);
                        continue;
                }
                if (rd->p < rd->end && *rd->p == ']') {
                        advance(rd);
                        break;
                }
                if (rd->p >= rd->end)
                        return fail(rd, rd->line, "the list of conversations does not end (no ']')");
                return fail(rd, rd->line, "',' or ']' expected after entry %zu", rd->d->entries);
        }
        skip_ws(rd);
        if (rd->p < rd->end)
                return fail(rd, rd->line, "text after the list of conversations");
        if (rd->d->n == 0)
                return fail(rd, 1, "no conversation has a human turn and a reply (%zu entries%s)", rd->d->entries,
                            rd->d->entries ? ", all of them empty or without a reply" : "");
        return 0;
}

static int trace_line(struct reader *rd, unsigned line, json_t *o, double *last_ts);

static int custom_parse(struct reader *rd) {
        double last_ts = 0;
        while (rd->p < rd->end) {
                /* the line's end looked for up to the cap only: a longer line is refused
                 * having read the cap, never the whole of it */
                size_t left = (size_t)(rd->end - rd->p);
                const char *s = rd->p, *nl = memchr(s, '\n', MIN(left, DATASET_MAX_LINE + 1));
                if (!nl && left > DATASET_MAX_LINE)
                        return fail(rd, rd->line, "a line is longer than %zu bytes (one request a line)",
                                    DATASET_MAX_LINE);
                if (nl && (size_t)(nl - s) > DATASET_MAX_LINE)
                        return fail(rd, rd->line, "a line is longer than %zu bytes (one request a line)",
                                    DATASET_MAX_LINE);
                const char *e = nl ? nl : rd->end;
                unsigned line = rd->line;
                rd->p = nl ? nl + 1 : rd->end;
                rd->line++;
                const char *q = s;
                while (q < e && (*q == ' ' || *q == '\t' || *q == '\r'))
                        q++;
                if (q == e)
                        continue;
                if (rd->d->entries >= DATASET_MAX_ENTRIES)
                        return fail(rd, line, "more than %d entries", DATASET_MAX_ENTRIES);
                rd->d->entries++;
                json_error_t je;
                _cleanup_json_ json_t *o = json_loadb(s, (size_t)(e - s), JSON_DECODE_ANY, &je);
                if (!o)
                        return fail(rd, line, "malformed JSON: %s", je.text);
                if (rd->d->kind == DATASET_TRACE) {
                        int r = trace_line(rd, line, o, &last_ts);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!json_is_object(o))
                        return fail(rd, line, "a line is one object {\"prompt\": ..., \"output_tokens\": N}");
                json_t *p = json_object_get(o, "prompt");
                if (!p)
                        return fail(rd, line, "no \"prompt\"");
                struct dataset_entry en = {.output_tokens = -1, .line = line};
                json_t *ot = json_object_get(o, "output_tokens");
                if (ot && !json_is_null(ot)) {
                        if (!json_is_integer(ot) || json_integer_value(ot) < 1 ||
                            json_integer_value(ot) > DATASET_MAX_TOKENS)
                                return fail(rd, line, "output_tokens must be an integer from 1 to %d",
                                            DATASET_MAX_TOKENS);
                        en.output_tokens = (int)json_integer_value(ot);
                }
                int r = text_of(rd, line, p, "the prompt", &en.prompt);
                if (r < 0)
                        return r;
                if (!*en.prompt) {
                        free(en.prompt);
                        return fail(rd, line, "the prompt is empty");
                }
                if ((r = add_entry(rd, en)) < 0) {
                        free(en.prompt);
                        return r;
                }
        }
        if (rd->d->n == 0)
                return fail(rd, 1, rd->d->kind == DATASET_TRACE ? "no request in the trace" : "no prompt in the file");
        return 0;
}

/* A non-negative integer field of a trace line, at most max. */
static int trace_int(struct reader *rd, unsigned line, json_t *o, const char *key, long long min, long long max,
                     long long *ret) {
        json_t *v = json_object_get(o, key);
        if (!v)
                return fail(rd, line, "no \"%s\"", key);
        if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
                return fail(rd, line, "\"%s\" must be an integer from %lld to %lld", key, min, max);
        *ret = json_integer_value(v);
        return 0;
}

/* trace: Mooncake's JSONL, one request a line: {"timestamp": ms, "input_length": N,
 * "output_length": N, "hash_ids": [...]?}, in time order. */
static int trace_line(struct reader *rd, unsigned line, json_t *o, double *last_ts) {
        if (!json_is_object(o))
                return fail(rd, line, "a line is one object {\"timestamp\": MS, \"input_length\": N, "
                            "\"output_length\": N, \"hash_ids\": [...]}");
        json_t *ts = json_object_get(o, "timestamp");
        if (!ts)
                return fail(rd, line, "no \"timestamp\"");
        if (!json_is_number(ts) || !(json_number_value(ts) >= 0) || json_number_value(ts) > 1e15)
                return fail(rd, line, "\"timestamp\" must be a number of milliseconds, at least 0");
        double t = json_number_value(ts);
        if (rd->d->n > 0 && t < *last_ts)
                return fail(rd, line, "timestamp %.17g is before the previous line's %.17g (a trace is in time order)",
                            t, *last_ts);
        long long in, out;
        int r = trace_int(rd, line, o, "input_length", 1, DATASET_MAX_TOKENS, &in);
        if (r >= 0)
                r = trace_int(rd, line, o, "output_length", 1, DATASET_MAX_TOKENS, &out);
        if (r < 0)
                return r;
        struct dataset_entry e = {.output_tokens = (int)out, .line = line, .timestamp_ms = t, .input_length = (int)in};
        json_t *h = json_object_get(o, "hash_ids");
        if (h && !json_is_null(h)) {
                if (!json_is_array(h))
                        return fail(rd, line, "\"hash_ids\" is not a list of integers");
                if (json_array_size(h) > DATASET_MAX_HASH_IDS)
                        return fail(rd, line, "more than %d hash_ids", DATASET_MAX_HASH_IDS);
                if (json_array_size(h) && !(e.hash_ids = calloc(json_array_size(h), sizeof(uint64_t))))
                        return -ENOMEM;
                size_t i;
                json_t *v;
                json_array_foreach(h, i, v) {
                        if (!json_is_integer(v) || json_integer_value(v) < 0) {
                                free(e.hash_ids);
                                return fail(rd, line, "hash_ids[%zu] is not an integer of at least 0", i);
                        }
                        e.hash_ids[e.n_hash++] = (uint64_t)json_integer_value(v);
                }
        }
        if ((r = add_entry(rd, e)) < 0) {
                free(e.hash_ids);
                return r;
        }
        *last_ts = t;
        return 0;
}

int dataset_parse(enum dataset_kind kind, const char *text, size_t len, const char *name, struct dataset **ret,
                  char **ret_error) {
        if (kind != DATASET_SHAREGPT && kind != DATASET_CUSTOM && kind != DATASET_MULTI_TURN && kind != DATASET_TRACE)
                return -EINVAL;
        struct dataset *d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->kind = kind;
        struct reader rd = {.name = name, .p = text, .start = text, .end = text + len, .line = 1,
                            .ret_error = ret_error, .d = d};
        int r = kind == DATASET_SHAREGPT || kind == DATASET_MULTI_TURN ? sharegpt_parse(&rd) : custom_parse(&rd);
        if (r < 0) {
                dataset_free(d);
                return r;
        }
        *ret = d;
        return 0;
}

int dataset_load(enum dataset_kind kind, const char *path, struct dataset **ret, char **ret_error) {
        /* O_NONBLOCK: a FIFO opens at once (and is refused below) instead of blocking until
         * a writer comes; a regular file ignores the flag */
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                int r = -errno;
                if (ret_error)
                        *ret_error = strdup_printf("cannot read '%s': %s", path, strerror(-r));
                return r;
        }
        struct stat st;
        int r = 0;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = -EISDIR;
        if (r < 0) {
                close(fd);
                if (ret_error)
                        *ret_error = strdup_printf("cannot read '%s': %s", path,
                                                   r == -EISDIR ? "not a regular file" : strerror(-r));
                return r;
        }
        if ((uint64_t)st.st_size > DATASET_MAX_FILE) {
                close(fd);
                if (ret_error)
                        *ret_error = strdup_printf("%s:1: the file is %lld bytes, more than the %zu a dataset may have",
                                                   path, (long long)st.st_size, DATASET_MAX_FILE);
                return -EINVAL;
        }
        size_t len = (size_t)st.st_size;
        const char *text = "";
        void *map = NULL;
        if (len > 0) {
                map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
                if (map == MAP_FAILED) {
                        r = -errno;
                        close(fd);
                        if (ret_error)
                                *ret_error = strdup_printf("cannot read '%s': %s", path, strerror(-r));
                        return r;
                }
                text = map;
        }
        close(fd);
        r = dataset_parse(kind, text, len, path, ret, ret_error);
        if (map)
                munmap(map, len);
        return r;
}

void dataset_free(struct dataset *d) {
        if (!d)
                return;
        for (size_t i = 0; i < d->n; i++) {
                free(d->v[i].prompt);
                free(d->v[i].reply);
                for (size_t k = 0; k < d->v[i].n_turns; k++) {
                        free(d->v[i].turns[k]);
                        free(d->v[i].replies[k]);
                }
                free(d->v[i].turns);
                free(d->v[i].replies);
                free(d->v[i].hash_ids);
        }
        free(d->v);
        free(d);
}

/* ---- draws (the one generator: base/rng.h) ------------------------------------------ */

int dataset_order(size_t n, uint64_t seed, size_t **ret) {
        size_t *v = malloc((n ? n : 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                v[i] = i;
        uint64_t rng = seed ^ UINT64_C(0x73686172656770);
        for (size_t i = n; i > 1; i--) {
                size_t j = (size_t)rng_below(&rng, i);
                size_t t = v[i - 1];
                v[i - 1] = v[j];
                v[j] = t;
        }
        *ret = v;
        return 0;
}

bool dataset_sharegpt_keep(const struct dataset_options *o, int64_t prompt_len, int64_t output_len) {
        if (prompt_len < o->sharegpt_min_len)
                return false;
        if (o->sharegpt_output_len <= 0 && output_len < o->sharegpt_min_len)
                return false;
        if (output_len < 1)
                return false;
        if (o->sharegpt_max_prompt_len > 0 && prompt_len > o->sharegpt_max_prompt_len)
                return false;
        if (o->sharegpt_max_total_len > 0 && prompt_len + output_len > o->sharegpt_max_total_len)
                return false;
        return true;
}

int64_t dataset_sharegpt_output(const struct dataset_options *o, int64_t reply_len) {
        if (o->sharegpt_output_len > 0)
                return o->sharegpt_output_len;
        if (o->sharegpt_max_output_len > 0 && reply_len > o->sharegpt_max_output_len)
                return o->sharegpt_max_output_len;
        return reply_len;
}

void dataset_len_range(int len, double r, int min_len, int *ret_lo, int *ret_hi) {
        /* the small epsilon keeps 100 * (1 - 0.1) at 90, not at 89.99999 floored to 89 */
        double lo = floor((double)len * (1 - r) + 1e-9), hi = ceil((double)len * (1 + r) - 1e-9);
        *ret_lo = MAX((int)lo, min_len);
        *ret_hi = MAX((int)hi, *ret_lo);
}

int dataset_draw(uint64_t *rng, int lo, int hi) {
        if (hi <= lo)
                return lo;
        return lo + (int)rng_below(rng, (uint64_t)(hi - lo) + 1);
}

int dataset_prefix_groups(int num_prompts, int num_prefixes, uint64_t seed, int **ret, size_t *ret_n) {
        if (num_prefixes < 1 || num_prompts < num_prefixes)
                return -EINVAL;
        size_t per = (size_t)(num_prompts / num_prefixes), n = per * (size_t)num_prefixes;
        int *v = malloc(n * sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                v[i] = (int)(i / per);
        uint64_t rng = seed ^ UINT64_C(0x707265666978);
        for (size_t i = n; i > 1; i--) {
                size_t j = (size_t)rng_below(&rng, i);
                int t = v[i - 1];
                v[i - 1] = v[j];
                v[j] = t;
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

usec_t dataset_trace_offset(const struct dataset *d, size_t n, uint64_t i, double speed) {
        if (!d || n == 0 || n > d->n || !(speed > 0))
                return 0;
        double t0 = d->v[0].timestamp_ms, span = d->v[n - 1].timestamp_ms - t0;
        /* a trace sent again starts one mean gap after its end (one line: 1 s later) */
        double period = n > 1 ? span + span / (double)(n - 1) : 1000;
        if (!(period > 0))
                period = 1;
        double ms = (double)(i / n) * period + d->v[i % n].timestamp_ms - t0;
        return (usec_t)llround(ms * 1000.0 / speed);
}

int dataset_trace_unit_from_name(const char *s, double *ret_ms) {
        static const struct {
                const char *name;
                double ms;
        } units[] = {{"s", 1000}, {"ms", 1}, {"us", 1e-3}, {"ns", 1e-6}};
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (strcmp(s, units[i].name) == 0) {
                        *ret_ms = units[i].ms;
                        return 0;
                }
        return -EINVAL;
}

void dataset_trace_apply_unit(struct dataset *d, const struct dataset_options *o) {
        if (!d || d->kind != DATASET_TRACE || o->trace_unit_ms == 1 || !(o->trace_unit_ms > 0))
                return;
        for (size_t i = 0; i < d->n; i++)
                d->v[i].timestamp_ms *= o->trace_unit_ms;
}

/* A span in ms for people: 0.864s, 14.4 min, 2.4 h, 10.0 days. */
static void span_text(double ms, char buf[static 32]) {
        if (ms < 60e3)
                snprintf(buf, 32, "%.3gs", ms / 1e3);
        else if (ms < 3600e3)
                snprintf(buf, 32, "%.1f min", ms / 60e3);
        else if (ms < 48 * 3600e3)
                snprintf(buf, 32, "%.1f h", ms / 3600e3);
        else
                snprintf(buf, 32, "%.1f days", ms / 86400e3);
}

static char *trace_implausible(const struct dataset *d, const struct dataset_options *o, usec_t request_timeout,
                               bool *ret_found) {
        *ret_found = false;
        if (!d || d->kind != DATASET_TRACE || d->n < 2 || !(o->trace_speed > 0))
                return NULL;
        double span = (d->v[d->n - 1].timestamp_ms - d->v[0].timestamp_ms) / o->trace_speed; /* ms, unit applied */
        char a[32], b[32];
        if (span > (double)DATASET_MAX_TRACE_SPAN / 1e3) {
                /* the units that would make it a day or less, from the actual one down */
                static const struct {
                        const char *name;
                        double ms;
                } units[] = {{"s", 1000}, {"ms", 1}, {"us", 1e-3}, {"ns", 1e-6}};
                struct buf hint;
                buf_init(&hint, 0);
                for (size_t i = 0; i < ELEMENTSOF(units); i++) {
                        double s = span / o->trace_unit_ms * units[i].ms;
                        if (units[i].ms >= o->trace_unit_ms || s > (double)DATASET_MAX_TRACE_SPAN / 1e3)
                                continue;
                        span_text(s, b);
                        if (buf_printf(&hint, "%s%s: %s", hint.len ? ", " : "", units[i].name, b) < 0)
                                break;
                }
                span_text(span, a);
                *ret_found = true;
                char *msg = strdup_printf("the trace spans %s at speed %g, more than a day: are its timestamps in "
                                          "another unit than %s? (trace_unit %s)",
                                          a, o->trace_speed,
                                          o->trace_unit_ms == 1      ? "milliseconds"
                                          : o->trace_unit_ms == 1000 ? "seconds"
                                          : o->trace_unit_ms == 1e-3 ? "microseconds"
                                                                     : "nanoseconds",
                                          hint.len ? buf_str(&hint) : "s, ms, us or ns");
                buf_release(&hint);
                return msg;
        }
        double gap = span / (double)(d->n - 1);
        if (request_timeout > 0 && gap * 1e3 > (double)request_timeout) {
                span_text(gap, a);
                format_duration(request_timeout, b);
                *ret_found = true;
                return strdup_printf("the trace's requests come %s apart on average at speed %g, longer than the "
                                     "request timeout (%s): raise trace_speed, or check trace_unit",
                                     a, o->trace_speed, b);
        }
        return NULL;
}

int dataset_trace_check(const struct dataset *d, const struct dataset_options *o, usec_t request_timeout,
                        char **ret_why) {
        bool found;
        char *why = trace_implausible(d, o, request_timeout, &found);
        if (!found)
                return 0;
        if (!why)
                return -ENOMEM;
        *ret_why = why;
        return -EINVAL;
}
