/* fuzz_scrape.c -- libFuzzer target: the server's /metrics text (scrape_parse), llama.cpp's
 * /slots JSON (scrape_slots_parse) and a level's figures made of them (scrape_level_add,
 * scrape_level_add_slots, scrape_level_json) (scrape.h).
 *
 * Input: byte 0 picks where each page is cut in two for the split check; the rest is up to
 * 8 pages separated by form feeds ('\f'), each the body of one scrape. Every page is parsed
 * both as /metrics and as /slots, and folded into one level as the scraper folds them.
 * Invariants: no crash, leak or hang; per page: samples and skipped lines no more than the
 * page has lines, duplicates and non-finite samples no more than the samples; a figure
 * read is finite; the engine and the KV series are NULL or from the fixed lists (a KV
 * series exactly when the KV figure is there); a page cut at a line end gives the same
 * samples (and skipped lines, below SCRAPE_MAX_SERIES lines) as its two halves; /slots is 0
 * with 1..SCRAPE_MAX_SLOTS slots, 0 <= held <= cells, or -EBADMSG with *ret untouched; the
 * level's object is made (never NULL: NULL means out of memory to the bench), and every
 * number in it is finite.
 */
#include <errno.h>
#include <math.h>

#include "fuzz.h"
#include "bench/scrape.h"

static size_t lines_of(const char *p, size_t n) {
        size_t lines = n > 0;
        for (size_t i = 0; i < n; i++)
                lines += p[i] == '\n' && i + 1 < n;
        return lines;
}

static void check_sample(const struct scrape_sample *s, size_t lines) {
        FUZZ_ASSERT(s->samples <= lines && s->skipped <= lines, "%zu samples, %zu skipped of %zu lines", s->samples,
                    s->skipped, lines);
        FUZZ_ASSERT(s->duplicates + s->non_finite <= s->samples, "%zu duplicates, %zu non-finite of %zu samples",
                    s->duplicates, s->non_finite, s->samples);
        for (int f = 0; f < _SCRAPE_FIGURE_MAX; f++)
                if (s->has[f])
                        FUZZ_ASSERT(isfinite(s->value[f]), "figure %d is %g", f, s->value[f]);
        if (s->engine)
                FUZZ_ASSERT(!strcmp(s->engine, "vllm") || !strcmp(s->engine, "sglang") ||
                            !strcmp(s->engine, "llamacpp"), "engine %s", s->engine);
        FUZZ_ASSERT(!s->kv_series == !s->has[SCRAPE_KV_USAGE], "KV series %s without the figure or back",
                    s->kv_series ? s->kv_series : "(none)");
        if (s->kv_series)
                FUZZ_ASSERT(strstr(s->kv_series, "cache_usage") || strstr(s->kv_series, "token_usage"),
                            "KV series %s", s->kv_series);
}

/* Every number in the level's object is finite (jansson makes no real of NaN or Inf, but
 * an integer made of one would be anything). */
static void check_json(json_t *j) {
        const char *k;
        json_t *v;
        size_t i;
        if (json_is_object(j)) {
                json_object_foreach(j, k, v)
                        check_json(v);
        } else if (json_is_array(j)) {
                json_array_foreach(j, i, v)
                        check_json(v);
        } else if (json_is_real(j)) {
                FUZZ_ASSERT(isfinite(json_real_value(j)), "a real of %g", json_real_value(j));
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_input in = {data, size};
        uint8_t cut = fuzz_byte(&in);
        const char *p = (const char *)in.p, *end = p + in.n;
        struct scrape_level lv = {0};
        for (int page = 0; page < 8 && p <= end; page++) {
                const char *ff = memchr(p, '\f', (size_t)(end - p));
                size_t n = ff ? (size_t)(ff - p) : (size_t)(end - p);
                /* a copy of exactly the page, so that ASan sees a read past it */
                char *body = malloc(n ? n : 1);
                FUZZ_ASSERT(body, "out of memory");
                memcpy(body, p, n);
                size_t lines = lines_of(body, n);

                struct scrape_sample s;
                scrape_parse(body, n, &s);
                check_sample(&s, lines);
                scrape_level_add(&lv, &s);

                /* cut after the line end nearest cut/255 of the page */
                const char *nl = n ? memchr(body + (size_t)cut * n / 256, '\n', n - (size_t)cut * n / 256) : NULL;
                if (nl) {
                        size_t a = (size_t)(nl + 1 - body);
                        struct scrape_sample s1, s2;
                        scrape_parse(body, a, &s1);
                        scrape_parse(body + a, n - a, &s2);
                        FUZZ_ASSERT(s1.samples + s2.samples == s.samples, "%zu + %zu samples in two halves, %zu whole",
                                    s1.samples, s2.samples, s.samples);
                        if (lines <= SCRAPE_MAX_SERIES)
                                FUZZ_ASSERT(s1.skipped + s2.skipped == s.skipped,
                                            "%zu + %zu skipped in two halves, %zu whole", s1.skipped, s2.skipped,
                                            s.skipped);
                }

                struct scrape_slots sl = {.slots = 12345};
                int r = scrape_slots_parse(body, n, &sl);
                FUZZ_ASSERT(r == 0 || r == -EBADMSG, "slots gave %d", r);
                if (r == 0) {
                        FUZZ_ASSERT(sl.slots >= 1 && sl.slots <= SCRAPE_MAX_SLOTS, "%zu slots", sl.slots);
                        FUZZ_ASSERT(sl.held >= 0 && sl.held <= sl.cells && sl.cells >= (double)sl.slots,
                                    "%g held of %g cells in %zu slots", sl.held, sl.cells, sl.slots);
                        scrape_level_add_slots(&lv, &sl);
                } else {
                        FUZZ_ASSERT(sl.slots == 12345 && sl.held == 0 && sl.cells == 0, "slots touched on failure");
                }
                free(body);
                if (!ff)
                        break;
                p = ff + 1;
        }
        json_t *j = scrape_level_json(&lv);
        FUZZ_ASSERT(j, "no level object");
        check_json(j);
        char *text = json_dumps(j, JSON_COMPACT);
        FUZZ_ASSERT(text, "the level object does not serialise");
        free(text);
        json_decref(j);
        return 0;
}
