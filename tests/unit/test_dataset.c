/* test_dataset.c -- the workload's data: ShareGPT and JSONL files (good and malformed, each
 * error at its line), seeded orders, length ranges, prefix groups, gamma arrivals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench_metrics.h"
#include "bench/dataset.h"
#include "base/util.h"

static struct dataset *parse_ok(enum dataset_kind k, const char *text) {
        struct dataset *d = NULL;
        char *err = NULL;
        int r = dataset_parse(k, text, strlen(text), "f", &d, &err);
        if (r < 0)
                fail_msg("r=%d %s", r, err ? err : "");
        free(err);
        return d;
}

static char *parse_err(enum dataset_kind k, const char *text, size_t len) {
        struct dataset *d = NULL;
        char *err = NULL;
        assert_int_equal(dataset_parse(k, text, len, "f", &d, &err), -EINVAL);
        assert_null(d);
        assert_non_null(err);
        assert_null(strchr(err, '\n')); /* one line */
        return err;
}

static void test_sharegpt(void **state) {
        const char *text = "[\n"
                           " {\"id\": \"a\", \"conversations\": [\n"
                           "   {\"from\": \"human\", \"value\": \"What is 2+2?\"},\n"
                           "   {\"from\": \"gpt\", \"value\": \"4, of course. [] {} \\\"quoted\\\"\"},\n"
                           "   {\"from\": \"human\", \"value\": \"and 3+3?\"}]},\n"
                           " {\"id\": \"empty\", \"conversations\": []},\n"
                           " {\"id\": \"one\", \"conversations\": [{\"from\": \"human\", \"value\": \"hi\"}]},\n"
                           " {\"id\": \"gpt first\", \"conversations\": [{\"from\": \"gpt\", \"value\": \"Hello!\"},\n"
                           "   {\"from\": \"human\", \"value\": \"Tell me a story\"}, {\"from\": \"gpt\", \"value\": \"Once\"}]},\n"
                           " {\"conversations\": [{\"value\": \"no from\"}, {\"value\": \"reply\"}], \"extra\": [1, {\"x\": \"]\"}]}\n"
                           "]\n";
        struct dataset *d = parse_ok(DATASET_SHAREGPT, text);
        assert_int_equal(d->entries, 5);
        assert_int_equal(d->n, 3);
        assert_int_equal(d->no_reply, 2);
        assert_string_equal(d->v[0].prompt, "What is 2+2?");
        assert_string_equal(d->v[0].reply, "4, of course. [] {} \"quoted\"");
        assert_int_equal(d->v[0].line, 2);
        /* the first human turn and the turn after it, not the first two turns */
        assert_string_equal(d->v[1].prompt, "Tell me a story");
        assert_string_equal(d->v[1].reply, "Once");
        assert_int_equal(d->v[1].line, 8);
        assert_string_equal(d->v[2].prompt, "no from");
        dataset_free(d);
        /* an empty list is valid JSON but no workload */
        char *err = parse_err(DATASET_SHAREGPT, "[]", 2);
        assert_string_equal(err, "f:1: no conversation has a human turn and a reply (0 entries)");
        free(err);
}

static void test_sharegpt_bad(void **state) {
        static const struct {
                const char *text;
                const char *want;
        } cases[] = {
                {"{\"conversations\": []}", "f:1: a ShareGPT file is one JSON list of conversations; this does not start with '['"},
                {"[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, {\"value\": \"b\"}]},\n{\"conversations\": [\n{\"value\": tru}]}\n]",
                 "f:4: malformed JSON: invalid token near 'tru'"},
                {"[\n{\"conversations\": \"no\"}\n]", "f:2: entry 1 has no \"conversations\" list"},
                {"[\n1,\n2]", "f:2: entry 1 is not an object"},
                {"[\n{\"conversations\": [{\"from\": \"human\", \"value\": 5}, {\"value\": \"b\"}]}]",
                 "f:2: entry 1: turn 1 is not an object with a \"value\" string"},
                {"[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, {\"value\": \"b\"}]}\n\n",
                 "f:4: the list of conversations does not end (no ']')"},
                {"[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, {\"value\": \"b\"}]\n",
                 "f:2: the entry starting here does not end before the file does"},
                {"[{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, {\"value\": \"b\"}]} {}]",
                 "f:1: ',' or ']' expected after entry 1"},
                {"[{\"conversations\": [{\"from\": \"human\", \"value\": \"a\"}, {\"value\": \"b\"}]}]\nx",
                 "f:2: text after the list of conversations"},
                {"[{\"conversations\": [{\"from\": \"human\", \"value\": \"a\\u0000b\"}, {\"value\": \"b\"}]}]",
                 "f:1: malformed JSON: \\u0000 is not allowed without JSON_ALLOW_NUL near '\"a\\u0000b\"'"},
                {"[{\"conversations\": [{\"from\": \"human\", \"value\": \"\xff\"}, {\"value\": \"b\"}]}]",
                 "f:1: malformed JSON: unable to decode byte 0xff near '\"'"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *err = parse_err(DATASET_SHAREGPT, cases[i].text, strlen(cases[i].text));
                if (strcmp(err, cases[i].want) != 0)
                        fail_msg("case %zu:\n  got:  %s\n  want: %s", i, err, cases[i].want);
        }
        /* a text over DATASET_MAX_TEXT */
        size_t big = DATASET_MAX_TEXT + 10;
        char *t = malloc(big + 200);
        assert_non_null(t);
        int k = snprintf(t, 200, "[\n{\"conversations\": [{\"from\": \"human\", \"value\": \"");
        memset(t + k, 'a', big);
        strcpy(t + k + big, "\"}, {\"value\": \"b\"}]}]");
        _cleanup_free_ char *err = parse_err(DATASET_SHAREGPT, t, strlen(t));
        assert_string_equal(err, "f:2: the human turn is 1048586 bytes, more than the 1048576 a text may have");
        free(t);
}

static void test_custom(void **state) {
        struct dataset *d = parse_ok(DATASET_CUSTOM, "{\"prompt\": \"one\"}\n\n  \n{\"prompt\": \"two\", \"output_tokens\": 7, "
                                                     "\"other\": 1}\r\n{\"prompt\": \"three\", \"output_tokens\": null}");
        assert_int_equal(d->n, 3);
        assert_string_equal(d->v[0].prompt, "one");
        assert_int_equal(d->v[0].output_tokens, -1);
        assert_int_equal(d->v[1].output_tokens, 7);
        assert_int_equal(d->v[1].line, 4);
        assert_int_equal(d->v[2].line, 5);
        assert_null(d->v[2].reply);
        dataset_free(d);
        static const struct {
                const char *text;
                const char *want;
        } cases[] = {
                {"{\"prompt\": \"a\"}\n{\"prompt\": \"b\"\n", "f:2: malformed JSON: '}' expected near end of file"},
                {"{\"prompt\": \"a\"}\n[1]\n", "f:2: a line is one object {\"prompt\": ..., \"output_tokens\": N}"},
                {"{\"prompt\": \"a\"}\n\n{\"text\": \"b\"}\n", "f:3: no \"prompt\""},
                {"{\"prompt\": 3}\n", "f:1: the prompt is not a string"},
                {"{\"prompt\": \"\"}\n", "f:1: the prompt is empty"},
                {"{\"prompt\": \"a\", \"output_tokens\": 0}\n", "f:1: output_tokens must be an integer from 1 to 10000000"},
                {"{\"prompt\": \"a\", \"output_tokens\": \"5\"}\n", "f:1: output_tokens must be an integer from 1 to 10000000"},
                {"\n\n", "f:1: no prompt in the file"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *err = parse_err(DATASET_CUSTOM, cases[i].text, strlen(cases[i].text));
                if (strcmp(err, cases[i].want) != 0)
                        fail_msg("case %zu:\n  got:  %s\n  want: %s", i, err, cases[i].want);
        }
}

/* The file's bytes quoted in a message (jansson's "near '...'") are escaped: a control byte
 * or a terminal escape sequence stays one printable line (found by fuzz_dataset). */
static void test_bad_bytes_escaped(void **state) {
        (void)state;
        static const struct {
                enum dataset_kind kind;
                const char *text;
                const char *want;
        } cases[] = {
                {DATASET_CUSTOM, "{\"prompt\": \"one\"}\n{\"prompt\": \x03}\n",
                 "f:2: malformed JSON: invalid token near '\\x03'"},
                {DATASET_TRACE, "{\"timestamp\": \x1b[2J}\n", "f:1: malformed JSON: invalid token near '\\x1b'"},
                {DATASET_SHAREGPT, "[\n\x01\n]", "f:2: malformed JSON: invalid token near '\\x01'"},
                {DATASET_MULTI_TURN, "[\n{\"conversations\": [\x7f]}\n]",
                 "f:2: malformed JSON: invalid token near '\\x7f'"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *err = parse_err(cases[i].kind, cases[i].text, strlen(cases[i].text));
                if (strcmp(err, cases[i].want) != 0)
                        fail_msg("case %zu:\n  got:  %s\n  want: %s", i, err, cases[i].want);
                for (const char *c = err; *c; c++)
                        assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
        }
}

static void test_load(void **state) {
        char dir[] = "/tmp/test_dataset.XXXXXX";
        assert_non_null(mkdtemp(dir));
        _cleanup_free_ char *path = strdup_printf("%s/p.jsonl", dir);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs("{\"prompt\": \"hello\"}\n", f);
        fclose(f);
        struct dataset *d = NULL;
        char *err = NULL;
        assert_int_equal(dataset_load(DATASET_CUSTOM, path, &d, &err), 0);
        assert_int_equal(d->n, 1);
        dataset_free(d);
        /* a directory and a missing file: cannot read, with the path */
        d = NULL;
        assert_true(dataset_load(DATASET_CUSTOM, dir, &d, &err) < 0);
        _cleanup_free_ char *want = strdup_printf("cannot read '%s': not a regular file", dir);
        assert_string_equal(err, want);
        free(err);
        err = NULL;
        _cleanup_free_ char *none = strdup_printf("%s/none.json", dir);
        assert_int_equal(dataset_load(DATASET_SHAREGPT, none, &d, &err), -ENOENT);
        assert_non_null(strstr(err, "No such file or directory"));
        free(err);
        /* an empty file */
        err = NULL;
        f = fopen(path, "w");
        fclose(f);
        assert_int_equal(dataset_load(DATASET_CUSTOM, path, &d, &err), -EINVAL);
        _cleanup_free_ char *want2 = strdup_printf("%s:1: no prompt in the file", path);
        assert_string_equal(err, want2);
        free(err);
        unlink(path);
        rmdir(dir);
}

static void test_order(void **state) {
        size_t *a, *b, *c;
        assert_int_equal(dataset_order(1000, 7, &a), 0);
        assert_int_equal(dataset_order(1000, 7, &b), 0);
        assert_int_equal(dataset_order(1000, 8, &c), 0);
        /* a permutation, the same for the same seed, another for another */
        bool seen[1000] = {false}, differs = false, moved = false;
        for (size_t i = 0; i < 1000; i++) {
                assert_true(a[i] < 1000);
                assert_false(seen[a[i]]);
                seen[a[i]] = true;
                assert_int_equal(a[i], b[i]);
                differs |= a[i] != c[i];
                moved |= a[i] != i;
        }
        assert_true(differs);
        assert_true(moved);
        free(a);
        free(b);
        free(c);
        assert_int_equal(dataset_order(0, 1, &a), 0);
        free(a);
}

static void test_lengths(void **state) {
        int lo, hi;
        /* vLLM: [floor(len*(1-r)), ceil(len*(1+r))] */
        dataset_len_range(1024, 0.5, 1, &lo, &hi);
        assert_int_equal(lo, 512);
        assert_int_equal(hi, 1536);
        dataset_len_range(100, 0.1, 1, &lo, &hi);
        assert_int_equal(lo, 90);
        assert_int_equal(hi, 110);
        dataset_len_range(7, 0.25, 1, &lo, &hi);
        assert_int_equal(lo, 5);
        assert_int_equal(hi, 9);
        dataset_len_range(128, 0, 1, &lo, &hi);
        assert_int_equal(lo, 128);
        assert_int_equal(hi, 128);
        dataset_len_range(1, 0.99, 1, &lo, &hi);
        assert_int_equal(lo, 1);
        assert_int_equal(hi, 2);
        /* uniform over the whole range, both ends included, seeded */
        uint64_t rng = 42, again = 42;
        int count[11] = {0};
        for (int i = 0; i < 110000; i++) {
                int x = dataset_draw(&rng, 10, 20);
                assert_true(x >= 10 && x <= 20);
                count[x - 10]++;
        }
        for (int i = 0; i < 11; i++)
                assert_true(abs(count[i] - 10000) < 500);
        rng = 42;
        for (int i = 0; i < 100; i++)
                assert_int_equal(dataset_draw(&rng, 0, 1000), dataset_draw(&again, 0, 1000));
        assert_int_equal(dataset_draw(&rng, 5, 5), 5);
}

static void test_sharegpt_filters(void **state) {
        struct dataset_options o;
        dataset_options_init(&o);
        /* vLLM's is_valid_sequence defaults: 4, 1024, 2048 */
        assert_true(dataset_sharegpt_keep(&o, 4, 4));
        assert_false(dataset_sharegpt_keep(&o, 3, 100));
        assert_false(dataset_sharegpt_keep(&o, 100, 3));
        assert_true(dataset_sharegpt_keep(&o, 1024, 1024));
        assert_false(dataset_sharegpt_keep(&o, 1025, 10));
        assert_false(dataset_sharegpt_keep(&o, 1024, 1025));
        assert_int_equal(dataset_sharegpt_output(&o, 900), 900);
        o.sharegpt_max_output_len = 100;
        assert_int_equal(dataset_sharegpt_output(&o, 900), 100);
        assert_int_equal(dataset_sharegpt_output(&o, 50), 50);
        /* a fixed output length: the short-output filter is off */
        o.sharegpt_output_len = 2;
        assert_int_equal(dataset_sharegpt_output(&o, 900), 2);
        assert_true(dataset_sharegpt_keep(&o, 10, 2));
        assert_null(dataset_options_check(&o));
        o.kind = DATASET_SHAREGPT;
        assert_non_null(dataset_options_check(&o));
        o.path = strdup("x.json");
        assert_null(dataset_options_check(&o));
        o.range_ratio = 1;
        assert_non_null(dataset_options_check(&o));
        dataset_options_release(&o);
        enum dataset_kind k;
        assert_int_equal(dataset_kind_from_name("prefix_repetition", &k), 0);
        assert_int_equal(k, DATASET_PREFIX_REPETITION);
        assert_int_equal(dataset_kind_from_name("ShareGPT", &k), -EINVAL);
        assert_string_equal(dataset_kind_name(DATASET_CUSTOM), "custom");
}

static void test_prefix_groups(void **state) {
        int *g;
        size_t n;
        /* 25 prompts in 4 groups: 6 each, the remainder dropped (as vLLM) */
        assert_int_equal(dataset_prefix_groups(25, 4, 3, &g, &n), 0);
        assert_int_equal(n, 24);
        int count[4] = {0};
        bool shuffled = false;
        for (size_t i = 0; i < n; i++) {
                assert_true(g[i] >= 0 && g[i] < 4);
                count[g[i]]++;
                shuffled |= i > 0 && g[i] < g[i - 1];
        }
        for (int i = 0; i < 4; i++)
                assert_int_equal(count[i], 6);
        assert_true(shuffled);
        int *h;
        assert_int_equal(dataset_prefix_groups(25, 4, 3, &h, &n), 0);
        assert_memory_equal(g, h, n * sizeof(int));
        free(g);
        free(h);
        assert_int_equal(dataset_prefix_groups(3, 4, 3, &g, &n), -EINVAL);
}

/* Gamma gaps: mean 1/rate whatever the shape; coefficient of variation 1/sqrt(shape). */
static void test_multi_turn(void **state) {
        const char *text = "[\n"
                           " {\"conversations\": [{\"from\": \"system\", \"value\": \"be brief\"},\n"
                           "   {\"from\": \"human\", \"value\": \"one\"}, {\"from\": \"gpt\", \"value\": \"1\"},\n"
                           "   {\"from\": \"human\", \"value\": \"two\"}, {\"from\": \"gpt\", \"value\": \"2\"},\n"
                           "   {\"from\": \"human\", \"value\": \"three, unanswered\"}]},\n"
                           " {\"conversations\": []},\n"
                           " {\"conversations\": [{\"value\": \"a\"}, {\"value\": \"b\"}, {\"value\": \"c\"}, {\"value\": \"d\"}]},\n"
                           " {\"conversations\": [{\"from\": \"human\", \"value\": \"x\"}, {\"from\": \"human\", \"value\": \"y\"}]}\n"
                           "]\n";
        struct dataset *d = parse_ok(DATASET_MULTI_TURN, text);
        assert_int_equal(d->entries, 4);
        assert_int_equal(d->n, 2);
        assert_int_equal(d->no_reply, 2); /* the empty one, and two human turns in a row */
        assert_int_equal(d->v[0].n_turns, 2);
        assert_null(d->v[0].prompt);
        assert_string_equal(d->v[0].turns[0], "one");
        assert_string_equal(d->v[0].replies[0], "1");
        assert_string_equal(d->v[0].turns[1], "two");
        assert_string_equal(d->v[0].replies[1], "2");
        assert_int_equal(d->v[0].line, 2);
        /* nobody said who spoke: turns in pairs */
        assert_int_equal(d->v[1].n_turns, 2);
        assert_string_equal(d->v[1].turns[1], "c");
        assert_string_equal(d->v[1].replies[1], "d");
        assert_int_equal(d->v[1].line, 7);
        dataset_free(d);

        char *e = parse_err(DATASET_MULTI_TURN, "[\n{\"conversations\": [{\"value\": 1}]}\n]", strlen("[\n{\"conversations\": [{\"value\": 1}]}\n]"));
        assert_string_equal(e, "f:2: entry 1: turn 1 is not an object with a \"value\" string");
        free(e);
        e = parse_err(DATASET_MULTI_TURN, "[\n{\"conversations\": []},\n{\"conversations\": []}\n]", strlen("[\n{\"conversations\": []},\n{\"conversations\": []}\n]"));
        assert_string_equal(e, "f:1: no conversation has a human turn and a reply (2 entries, all of them empty or "
                               "without a reply)");
        free(e);
        e = parse_err(DATASET_MULTI_TURN, "[\n{\"conversations\": [}\n]", strlen("[\n{\"conversations\": [}\n]"));
        assert_non_null(strstr(e, "f:2: malformed JSON"));
        free(e);

        struct dataset_options o;
        dataset_options_init(&o);
        o.kind = DATASET_MULTI_TURN;
        assert_null(dataset_options_check(&o));
        assert_false(dataset_has_file(&o));
        assert_int_equal(dataset_multi_turn_turns(&o), 4);
        assert_int_equal(dataset_multi_turn_output(&o), 128);
        o.multi_turn_turns = 7;
        o.multi_turn_output_len = 9;
        assert_int_equal(dataset_multi_turn_turns(&o), 7);
        assert_int_equal(dataset_multi_turn_output(&o), 9);
        o.path = strdup("c.json");
        assert_true(dataset_has_file(&o));
        assert_null(dataset_options_check(&o));
        dataset_options_release(&o);
        o.kind = DATASET_RANDOM;
        o.path = strdup("c.json");
        assert_non_null(dataset_options_check(&o));
        dataset_options_release(&o);
}

/* A line over DATASET_MAX_LINE is refused by reading the cap, not the line; a FIFO is
 * refused by fstat after a non-blocking open, never waited on. */
static void test_line_cap_and_fifo(void **state) {
        (void)state;
        size_t n = DATASET_MAX_LINE + 2;
        char *text = malloc(n + 64);
        assert_non_null(text);
        strcpy(text, "{\"prompt\": \"ok\"}\n{\"prompt\": \"");
        size_t k = strlen(text);
        memset(text + k, 'x', n);
        strcpy(text + k + n, "\"}\n");
        struct dataset *d = NULL;
        char *err = NULL;
        assert_int_equal(dataset_parse(DATASET_CUSTOM, text, strlen(text), "f", &d, &err), -EINVAL);
        assert_string_equal(err, "f:2: a line is longer than 8388608 bytes (one request a line)");
        free(err);
        err = NULL;
        /* a trace without a final line break: the same */
        free(text);
        const char *first = "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5}\n";
        text = malloc(strlen(first) + n + 1);
        assert_non_null(text);
        strcpy(text, first);
        memset(text + strlen(first), ' ', n);
        text[strlen(first) + n] = '\0';
        assert_int_equal(dataset_parse(DATASET_TRACE, text, strlen(text), "f", &d, &err), -EINVAL);
        assert_string_equal(err, "f:2: a line is longer than 8388608 bytes (one request a line)");
        free(err);
        err = NULL;
        free(text);

        char dir[] = "/tmp/test_dataset.XXXXXX";
        assert_non_null(mkdtemp(dir));
        _cleanup_free_ char *fifo = strdup_printf("%s/fifo", dir);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        assert_int_equal(dataset_load(DATASET_TRACE, fifo, &d, &err), -EISDIR);
        _cleanup_free_ char *want = strdup_printf("cannot read '%s': not a regular file", fifo);
        assert_string_equal(err, want);
        free(err);
        char *got = NULL;
        assert_int_equal(read_file_capped(fifo, 100, &got, NULL), -ENOTREG);
        assert_null(got);
        assert_non_null(strstr(file_strerror(-ENOTREG), "FIFO"));
        unlink(fifo);
        rmdir(dir);
}

/* Trace units: a trace in nanoseconds read as milliseconds spans days and is refused with
 * the units that would fit; read in ns it is fine; requests farther apart than the request
 * timeout are refused. */
static void test_trace_plausible(void **state) {
        (void)state;
        /* 864 ms in ns, 10 days read as ms */
        const char *ns = "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 5}\n"
                         "{\"timestamp\": 432000000, \"input_length\": 5, \"output_length\": 5}\n"
                         "{\"timestamp\": 864000000, \"input_length\": 5, \"output_length\": 5}\n";
        struct dataset_options o;
        dataset_options_init(&o);
        o.kind = DATASET_TRACE;
        struct dataset *d = parse_ok(DATASET_TRACE, ns);
        char *why = NULL;
        assert_int_equal(dataset_trace_check(d, &o, 300 * USEC_PER_SEC, &why), -EINVAL);
        assert_non_null(why);
        assert_null(strchr(why, '\n'));
        assert_non_null(strstr(why, "the trace spans 10.0 days at speed 1, more than a day"));
        assert_non_null(strstr(why, "(trace_unit us: 14.4 min, ns: 0.864s)"));
        free(why);
        why = NULL;
        dataset_free(d);
        d = parse_ok(DATASET_TRACE, ns);
        assert_int_equal(dataset_trace_unit_from_name("us", &o.trace_unit_ms), 0);
        dataset_trace_apply_unit(d, &o);
        assert_true(d->v[2].timestamp_ms > 863999.0 && d->v[2].timestamp_ms < 864001.0);
        /* in us, 14.4 min in two gaps of 7.2 min: over a 5 min timeout, fine at speed 2 */
        assert_int_equal(dataset_trace_check(d, &o, 300 * USEC_PER_SEC, &why), -EINVAL);
        assert_non_null(strstr(why, "longer than the request timeout (5m)"));
        free(why);
        why = NULL;
        o.trace_speed = 2;
        assert_int_equal(dataset_trace_check(d, &o, 300 * USEC_PER_SEC, &why), 0);
        assert_null(why);
        dataset_free(d);
        assert_int_equal(dataset_trace_unit_from_name("min", &o.trace_unit_ms), -EINVAL);
}

static void test_trace(void **state) {
        const char *text = "{\"timestamp\": 0, \"input_length\": 700, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"
                           "\n"
                           "{\"timestamp\": 27.5, \"input_length\": 10, \"output_length\": 1, \"extra\": true}\n"
                           "{\"timestamp\": 27.5, \"input_length\": 3, \"output_length\": 2, \"hash_ids\": []}\n"
                           "{\"timestamp\": 3027.5, \"input_length\": 3, \"output_length\": 2, \"hash_ids\": null}";
        struct dataset *d = parse_ok(DATASET_TRACE, text);
        assert_int_equal(d->n, 4);
        assert_int_equal(d->v[0].input_length, 700);
        assert_int_equal(d->v[0].output_tokens, 5);
        assert_int_equal(d->v[0].n_hash, 2);
        assert_int_equal(d->v[0].hash_ids[1], 1);
        assert_int_equal(d->v[1].n_hash, 0);
        assert_int_equal(d->v[1].line, 3);
        assert_true(d->v[1].timestamp_ms == 27.5);
        assert_int_equal(d->v[3].line, 5);
        /* replayed: at its times, over the speed, then again one mean gap after its end */
        assert_int_equal(dataset_trace_offset(d, 4, 0, 1), 0);
        assert_int_equal(dataset_trace_offset(d, 4, 1, 1), 27500);
        assert_int_equal(dataset_trace_offset(d, 4, 1, 2), 13750);
        assert_int_equal(dataset_trace_offset(d, 4, 3, 1), 3027500);
        assert_int_equal(dataset_trace_offset(d, 4, 4, 1), 4036667);
        assert_int_equal(dataset_trace_offset(d, 2, 3, 1), 55000 + 27500);
        dataset_free(d);

        static const struct {
                const char *text, *want;
        } bad[] = {
                {"{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1}\n"
                 "{\"timestamp\": 4, \"input_length\": 1, \"output_length\": 1}\n",
                 "f:2: timestamp 4 is before the previous line's 5 (a trace is in time order)"},
                {"{\"timestamp\": 5, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 6,\n",
                 "f:2: malformed JSON"},
                {"\n{\"input_length\": 1, \"output_length\": 1}\n", "f:2: no \"timestamp\""},
                {"{\"timestamp\": 1, \"output_length\": 1}\n", "f:1: no \"input_length\""},
                {"{\"timestamp\": 1, \"input_length\": 1}\n", "f:1: no \"output_length\""},
                {"{\"timestamp\": 1, \"input_length\": 0, \"output_length\": 1}\n",
                 "f:1: \"input_length\" must be an integer from 1 to 10000000"},
                {"{\"timestamp\": -1, \"input_length\": 1, \"output_length\": 1}\n",
                 "f:1: \"timestamp\" must be a number of milliseconds, at least 0"},
                {"{\"timestamp\": \"1\", \"input_length\": 1, \"output_length\": 1}\n",
                 "f:1: \"timestamp\" must be a number of milliseconds, at least 0"},
                {"{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1, \"x\"]}\n",
                 "f:1: hash_ids[1] is not an integer of at least 0"},
                {"{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": 3}\n",
                 "f:1: \"hash_ids\" is not a list of integers"},
                {"[1]\n", "f:1: a line is one object"},
                {"\n\n", "f:1: no request in the trace"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                char *e = parse_err(DATASET_TRACE, bad[i].text, strlen(bad[i].text));
                if (strncmp(e, bad[i].want, strlen(bad[i].want)) != 0)
                        fail_msg("case %zu: got '%s', want '%s'", i, e, bad[i].want);
                free(e);
        }

        struct dataset_options o;
        dataset_options_init(&o);
        o.kind = DATASET_TRACE;
        assert_non_null(dataset_options_check(&o)); /* needs a file */
        o.path = strdup("t.jsonl");
        assert_null(dataset_options_check(&o));
        assert_true(o.trace_speed == 1 && o.trace_block_size == 512);
        o.trace_speed = 0;
        assert_non_null(dataset_options_check(&o));
        dataset_options_release(&o);
        enum dataset_kind k;
        assert_int_equal(dataset_kind_from_name("trace", &k), 0);
        assert_int_equal(k, DATASET_TRACE);
        assert_int_equal(dataset_kind_from_name("multi_turn", &k), 0);
        assert_int_equal(k, DATASET_MULTI_TURN);
}

/* The answer alone, for a session's history: content and text, not the reasoning. */
static void test_event_content(void **state) {
        struct buf all, answer;
        buf_init(&all, 1024);
        buf_init(&answer, 1024);
        struct bench_event ev;
        const char *a = "{\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm \",\"content\":\"Hi\\n\\u00e9\"}}]}";
        assert_int_equal(bench_event_parse_texts(a, strlen(a), &ev, &all, &answer), 0);
        assert_true(ev.token);
        const char *b = "{\"choices\":[{\"text\":\" there\"}]}";
        assert_int_equal(bench_event_parse_texts(b, strlen(b), &ev, NULL, &answer), 0);
        assert_string_equal(buf_str(&all), "hmm Hi\n\xc3\xa9");
        assert_string_equal(buf_str(&answer), "Hi\n\xc3\xa9 there");
        buf_release(&all);
        buf_release(&answer);
}

static void test_sched_gamma(void **state) {
        static const double shapes[] = {0.25, 0.5, 2, 8};
        for (size_t k = 0; k < ELEMENTSOF(shapes); k++) {
                struct bench_sched s;
                double rate = 50;
                bench_sched_init(&s, rate, true, shapes[k], 11);
                size_t n = 100000;
                usec_t prev = bench_sched_next(&s);
                assert_int_equal(prev, 0);
                double sum = 0, sum2 = 0;
                for (size_t i = 1; i < n; i++) {
                        usec_t t = bench_sched_next(&s);
                        assert_true(t >= prev);
                        double gap = (double)(t - prev) / 1e6;
                        sum += gap;
                        sum2 += gap * gap;
                        prev = t;
                }
                double mean = sum / (double)(n - 1), cv = sqrt(sum2 / (double)(n - 1) - mean * mean) / mean;
                if (fabs(mean * rate - 1) > 0.02 || fabs(cv * sqrt(shapes[k]) - 1) > 0.05)
                        fail_msg("shape %g: mean %g (want %g), cv %g (want %g)", shapes[k], mean, 1 / rate, cv,
                                 1 / sqrt(shapes[k]));
        }
        /* the same seed, the same schedule */
        struct bench_sched a, b;
        bench_sched_init(&a, 10, true, 0.3, 5);
        bench_sched_init(&b, 10, true, 0.3, 5);
        for (int i = 0; i < 100; i++)
                assert_int_equal(bench_sched_next(&a), bench_sched_next(&b));
        /* burstiness 1 is Poisson, draw for draw */
        bench_sched_init(&a, 10, true, 1, 5);
        bench_sched_init(&b, 10, true, 0, 5);
        for (int i = 0; i < 100; i++)
                assert_int_equal(bench_sched_next(&a), bench_sched_next(&b));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_sharegpt),      cmocka_unit_test(test_sharegpt_bad),
                cmocka_unit_test(test_custom),        cmocka_unit_test(test_load),
                cmocka_unit_test(test_bad_bytes_escaped),
                cmocka_unit_test(test_order),         cmocka_unit_test(test_lengths),
                cmocka_unit_test(test_sharegpt_filters), cmocka_unit_test(test_prefix_groups),
                cmocka_unit_test(test_sched_gamma),   cmocka_unit_test(test_multi_turn),
                cmocka_unit_test(test_trace),         cmocka_unit_test(test_event_content),
                cmocka_unit_test(test_line_cap_and_fifo), cmocka_unit_test(test_trace_plausible),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
