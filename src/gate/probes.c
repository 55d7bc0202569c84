/* probes.c -- long context, sampling and multi-turn, asked after the golden checks passed. */
#include "gate/probes.h"

#include <ctype.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "gate/detect.h"
#include "base/rng.h"
#include "io/http.h"
#include "io/openai.h"

static const char *const probe_names[_PROBE_MAX] = {
        [PROBE_LONG_CONTEXT] = "long_context",
        [PROBE_SAMPLING] = "sampling",
        [PROBE_MULTI_TURN] = "multi_turn",
};

void probes_options_init(struct probes_options *o) {
        *o = (struct probes_options){
                .long_context = {.share = PROBES_DEFAULT_SHARE, .max_tokens = PROBES_DEFAULT_LC_MAX_TOKENS,
                                 .timeout = PROBES_DEFAULT_LC_TIMEOUT},
                .sampling = {.runs = PROBES_DEFAULT_RUNS, .min_right = PROBES_DEFAULT_MIN_RIGHT,
                             .temperature = PROBES_DEFAULT_TEMPERATURE, .top_p = PROBES_DEFAULT_TOP_P},
                .multi_turn = {.stream = STREAM_BOTH},
                .seed = 1,
        };
        for (int k = 0; k < _PROBE_MAX; k++)
                o->on[k] = true;
}

const char *probe_name(enum probe_kind k) {
        return k >= 0 && k < _PROBE_MAX ? probe_names[k] : NULL;
}

int probe_from_name(const char *name) {
        for (int k = 0; k < _PROBE_MAX; k++) {
                const char *a = probe_names[k], *b = name;
                while (*a && *b && (*a == *b || (*a == '_' && *b == '-')))
                        a++, b++;
                if (!*a && !*b)
                        return k;
        }
        return -EINVAL;
}

bool probes_any(const struct probes_options *o) {
        for (int k = 0; k < _PROBE_MAX; k++)
                if (o->on[k])
                        return true;
        return false;
}

/* ---- the pure parts ------------------------------------------------------------------ */

static bool positive_int(const json_t *n, int64_t *ret) {
        if (!json_is_integer(n) || json_integer_value(n) <= 0)
                return false;
        *ret = json_integer_value(n);
        return true;
}

int probes_parse_context(const char *path, const char *body, size_t len, int64_t *ret) {
        if (strcmp(path, "/v1/models") == 0)
                return openai_parse_models_context(body, len, ret) == 0 ? 0 : -ENOENT;
        json_t *o = json_loadb(body, len, 0, NULL);
        if (!o)
                return -ENOENT;
        bool ok = false;
        if (strcmp(path, "/get_model_info") == 0 || strcmp(path, "/get_server_info") == 0)
                ok = positive_int(json_object_get(o, "max_context_length"), ret) ||
                     positive_int(json_object_get(o, "context_length"), ret) ||
                     positive_int(json_object_get(json_object_get(o, "model_config"), "context_len"), ret);
        else if (strcmp(path, "/props") == 0)
                ok = positive_int(json_object_get(json_object_get(o, "default_generation_settings"), "n_ctx"), ret) ||
                     positive_int(json_object_get(o, "n_ctx"), ret);
        else if (strcmp(path, "/slots") == 0)
                ok = positive_int(json_object_get(json_array_get(o, 0), "n_ctx"), ret);
        json_decref(o);
        return ok ? 0 : -ENOENT;
}

/* The number right after the first occurrence of one of the markers in s (digits, commas
 * allowed: "8,192"). */
static bool number_after(const char *s, const char *const *markers, int64_t *ret) {
        for (size_t i = 0; markers[i]; i++) {
                const char *p = strstr(s, markers[i]);
                if (!p)
                        continue;
                p += strlen(markers[i]);
                while (*p == ' ')
                        p++;
                if (!isdigit((unsigned char)*p))
                        continue;
                int64_t v = 0;
                for (; isdigit((unsigned char)*p) || (*p == ',' && isdigit((unsigned char)p[1])); p++)
                        if (*p != ',') {
                                if (v > INT64_MAX / 10 - 10)
                                        return false;
                                v = v * 10 + (*p - '0');
                        }
                if (v <= 0)
                        continue;
                *ret = v;
                return true;
        }
        return false;
}

int probes_parse_context_error(const char *message, int64_t *ret) {
        static const char *const markers[] = {
                "maximum context length is",              /* vLLM, the testbed */
                "available context size (",               /* llama.cpp */
                "model's context length (",               /* SGLang */
                "context length of",                      /* SGLang, older */
                NULL,
        };
        return message && number_after(message, markers, ret) ? 0 : -ENOENT;
}

/* The prompt's tokens an error says: vLLM "you requested N tokens" / "your prompt has N
 * tokens" / "(N in the messages", llama.cpp "request (N tokens)". */
static bool prompt_tokens_in_error(const char *message, int64_t *ret) {
        static const char *const markers[] = {"(", "prompt has", "prompt contains", "request (", "you requested", NULL};
        /* "(N in the messages" comes before "requested N tokens" in vLLM's text: prefer it */
        const char *p = message ? strstr(message, " in the messages") : NULL;
        if (p) {
                const char *q = p;
                while (q > message && isdigit((unsigned char)q[-1]))
                        q--;
                if (q < p) {
                        *ret = strtoll(q, NULL, 10);
                        return *ret > 0;
                }
        }
        return message && number_after(message, markers + 1, ret);
}

/* The filler's and the secrets' random numbers: rng_next, the one generator (base/rng.h),
 * the same everywhere. */

void probes_secrets(uint64_t seed, int *ret_passkey, int *ret_depth_pct, int *ret_remember) {
        uint64_t s = seed ^ UINT64_C(0x70726f6265);
        if (ret_passkey)
                *ret_passkey = 10000 + (int)(rng_next(&s) % 90000);
        else
                rng_next(&s);
        if (ret_depth_pct)
                *ret_depth_pct = 10 + (int)(rng_next(&s) % 81);
        else
                rng_next(&s);
        if (ret_remember)
                *ret_remember = 10 + (int)(rng_next(&s) % 90);
}

#define PICK(a, s) ((a)[rng_next(s) % ELEMENTSOF(a)])

/* One plain English sentence, no digits (the passkey is the only number in the text). */
static int filler_sentence(struct buf *b, uint64_t *s) {
        static const char *const adj[] = {"quiet", "old", "narrow", "busy", "green", "distant", "small", "bright",
                                          "patient", "careful", "early", "wooden", "northern", "tired", "gentle"};
        static const char *const who[] = {"farmer", "teacher", "river", "village", "baker", "traveller", "library",
                                          "gardener", "harbour", "painter", "merchant", "orchard", "clockmaker",
                                          "lighthouse", "shepherd", "museum"};
        static const char *const verb[] = {"watched", "crossed", "visited", "remembered", "painted", "followed",
                                           "described", "repaired", "carried", "found", "opened", "counted",
                                           "admired", "cleaned", "sketched"};
        static const char *const what[] = {"the morning market", "a field of barley", "the stone bridge",
                                           "an empty road", "the autumn leaves", "a letter from home",
                                           "the harbour walls", "a basket of apples", "the evening train",
                                           "a map of the hills", "the rain on the roof", "a row of lanterns",
                                           "the winter garden", "a pair of boots", "the long corridor"};
        static const char *const tail[] = {"before the sun rose", "after a long day", "near the old mill",
                                           "while the bells rang", "in the soft light", "without a word",
                                           "along the valley", "as the wind changed", "by the open window",
                                           "under a grey sky", "with great care", "at the end of summer"};
        static const char *const link[] = {"Later", "Meanwhile", "Then", "Afterwards", "Once again", "Nearby",
                                           "In the afternoon", "Every spring"};
        int form = (int)(rng_next(s) % 4);
        const char *a = PICK(adj, s), *w = PICK(who, s), *v = PICK(verb, s), *x = PICK(what, s), *t = PICK(tail, s);
        switch (form) {
        case 0:
                return buf_printf(b, "The %s %s %s %s %s. ", a, w, v, x, t);
        case 1:
                return buf_printf(b, "%s, the %s %s %s. ", PICK(link, s), w, v, x);
        case 2:
                return buf_printf(b, "Nobody expected the %s %s to have %s %s. ", a, w, v, x);
        default:
                return buf_printf(b, "It was %s that the %s %s %s. ", t, w, v, x);
        }
}

char *probes_filler(size_t chars, uint64_t seed, const char *fact, int depth_pct) {
        _cleanup_buf_ struct buf b, one;
        buf_init(&b, 0);
        buf_init(&one, 0);
        uint64_t s = seed;
        size_t fact_len = fact ? strlen(fact) + 1 : 0;
        size_t room = chars > fact_len ? chars - fact_len : 0; /* the sentences' share */
        size_t at = depth_pct <= 0 ? 0 : depth_pct >= 100 ? room : room * (size_t)depth_pct / 100;
        bool placed = !fact;
        for (;;) {
                if (!placed && b.len >= at) {
                        if (buf_printf(&b, "%s ", fact) < 0)
                                return NULL;
                        placed = true;
                }
                one.len = 0;
                if (filler_sentence(&one, &s) < 0)
                        return NULL;
                /* whole sentences, never past chars (but at least one) */
                if (b.len + one.len + (placed ? 0 : fact_len) > chars && b.len > (placed ? fact_len : 0))
                        break;
                if (buf_append(&b, one.data, one.len) < 0)
                        return NULL;
        }
        /* then short sentences while one fits: a small context (the testbed's 256 tokens)
         * would otherwise lose most of a long sentence's worth to the granularity */
        static const char *const brief[] = {"It rained. ", "Birds sang. ", "The door creaked. ", "A dog barked. ",
                                            "Snow fell. ", "Bells rang. ", "It was late. ", "Wind blew. "};
        for (size_t tries = 0; tries < ELEMENTSOF(brief) * 8; tries++) {
                const char *x = PICK(brief, &s);
                size_t n = strlen(x);
                if (b.len + n + (placed ? 0 : fact_len) > chars)
                        continue;
                if (buf_append(&b, x, n) < 0)
                        return NULL;
        }
        if (!placed && buf_printf(&b, "%s ", fact) < 0)
                return NULL;
        while (b.len > 0 && b.data[b.len - 1] == ' ')
                b.len--;
        b.data[b.len] = '\0';
        return buf_detach(&b);
}

int probes_target_tokens(int64_t context, double share, int cap, int64_t *ret) {
        int64_t t = (int64_t)floor(share * (double)context);
        int64_t room = context - PROBES_ANSWER_TOKENS - PROBES_TEMPLATE_ROOM;
        if (t > room)
                t = room;
        if (cap > 0 && t > cap)
                t = cap;
        if (t < PROBES_MIN_FILLER_TOKENS)
                return -ERANGE;
        *ret = t;
        return 0;
}

/* Fills the fields every probe result has; takes the strings (NULL: -ENOMEM). */
static int set_result(struct check_result *r, enum verdict v, const char *cause, char *evidence, bool want_evidence) {
        if (want_evidence && !evidence)
                return -ENOMEM;
        return check_result_set(r, v, cause, evidence);
}

int probes_judge_sampling(const char *name, const struct check_result *runs, size_t n, int min_right,
                          double temperature, double top_p, struct check_result *ret) {
        *ret = (struct check_result){.verdict = VERDICT_PASS};
        size_t right = 0;
        const struct check_result *bad = NULL, *wrong = NULL;
        size_t bad_at = 0;
        usec_t longest = 0;
        for (size_t i = 0; i < n; i++) {
                const struct check_result *c = &runs[i];
                longest = MAX(longest, c->latency);
                if (c->verdict == VERDICT_PASS)
                        right++;
                else if (c->verdict == VERDICT_WRONG) {
                        if (!wrong)
                                wrong = c;
                } else if (c->verdict != VERDICT_SKIPPED &&
                           (!bad || verdict_severity(c->verdict) > verdict_severity(bad->verdict))) {
                        bad = c;
                        bad_at = i;
                }
        }
        const struct check_result *shown = bad ? bad : wrong ? wrong : n ? &runs[0] : NULL;
        ret->latency = longest;
        if (!(ret->name = strdup(name)) ||
            !(ret->detail = strdup_printf("right in %zu of %zu at temperature %g, top_p %g", right, n, temperature, top_p)) ||
            (shown && shown->output && !(ret->output = strdup(shown->output)))) {
                check_result_release(ret);
                return -ENOMEM;
        }
        if (shown) {
                ret->http_status = shown->http_status;
                ret->finish_reason = shown->finish_reason ? strdup(shown->finish_reason) : NULL;
        }
        int r = 0;
        if (bad)
                r = set_result(ret, bad->verdict, bad->cause ? bad->cause : "sampling",
                               strdup_printf("sampling run %zu of %zu (temperature %g): %s", bad_at + 1, n, temperature,
                                             bad->evidence ? bad->evidence : "-"),
                               true);
        else if (right < (size_t)min_right)
                r = set_result(ret, VERDICT_WRONG, "sampling",
                               strdup_printf("right in %zu of %zu at temperature %g, top_p %g: %s", right, n, temperature,
                                             top_p, wrong && wrong->evidence ? wrong->evidence : "-"),
                               true);
        if (r < 0)
                check_result_release(ret);
        return r;
}

/* ---- asking ----------------------------------------------------------------------------- */

struct prober {
        struct loop *l;
        struct checks_target t;       /* the caller's, model set */
        const struct probes_options *o;
        char *base;
        struct check_result *res;
        size_t n, alloc;
        bool hung;                    /* a request timed out: ask nothing more */
        const struct check_spec *suite;
        size_t n_suite;
        const struct check_result *suite_results;
        size_t n_suite_results;
};

static struct check_result *add(struct prober *p) {
        if (p->n == p->alloc) {
                size_t a = p->alloc ? p->alloc * 2 : 8;
                struct check_result *t = realloc(p->res, a * sizeof(*t));
                if (!t)
                        return NULL;
                p->res = t;
                p->alloc = a;
        }
        struct check_result *r = &p->res[p->n++];
        *r = (struct check_result){.verdict = VERDICT_PASS};
        return r;
}

static int add_skipped(struct prober *p, const char *name, char *why) {
        if (!why)
                return -ENOMEM;
        struct check_result *r = add(p);
        if (!r || !(r->name = strdup(name))) {
                free(why);
                return -ENOMEM;
        }
        return set_result(r, VERDICT_SKIPPED, "probe", why, true);
}

static bool interrupted(int r) {
        return r == -ECANCELED || r == -EINTR || r == -ENOMEM;
}

/* One spec asked alone (its stream mode STREAM_NO or STREAM_YES), with timeout (0: the
 * target's). */
static int ask(struct prober *p, const struct check_spec *spec, usec_t timeout, struct check_result *ret) {
        struct checks_target tt = p->t;
        tt.ret_model = NULL;
        if (timeout)
                tt.request_timeout = timeout;
        struct check_result *rs = NULL;
        size_t n = 0;
        int r = checks_run(p->l, &tt, spec, 1, &rs, &n);
        if (n == 1) {
                *ret = rs[0];
                free(rs);
                if (ret->verdict == VERDICT_TIMEOUT)
                        p->hung = true;
                return r;
        }
        checks_free_results(rs, n);
        *ret = (struct check_result){0};
        return r < 0 ? r : -ECANCELED; /* nothing asked: stopped before the request */
}

/* GET (body NULL) or POST path; *ret_body gets a 2xx body. -ENOENT for another status or a
 * transfer that failed (the server does not have it); -ECANCELED/-EINTR/-ENOMEM. */
static int fetch(struct prober *p, const char *path, const char *body, char **ret_body, size_t *ret_len) {
        _cleanup_free_ char *url = strdup_printf("%s%s", p->base, path);
        if (!url)
                return -ENOMEM;
        struct http_request req = {
                .method = body ? "POST" : "GET",
                .url = url,
                .body = body,
                .body_len = body ? strlen(body) : 0,
                .timeout = p->t.request_timeout,
                .max_body = (size_t)1 << 20,
                .should_abort = p->t.should_abort,
                .abort_userdata = p->t.abort_userdata,
        };
        _cleanup_(http_response_release) struct http_response resp;
        int r = http_run(p->l, &req, USEC_INFINITY, &resp);
        if (interrupted(r))
                return r;
        if (r < 0 || resp.status < 200 || resp.status >= 300 || resp.truncated)
                return -ENOENT;
        *ret_len = resp.body.len;
        *ret_body = buf_detach(&resp.body);
        return *ret_body ? 0 : -ENOMEM;
}

/* The context the server says it has, and where it said it. -ENOENT: nowhere. */
static int server_context(struct prober *p, int64_t *ret, const char **ret_where) {
        static const struct {
                const char *path, *what;
        } where[] = {
                {"/v1/models", "/v1/models"},
                {"/get_model_info", "SGLang's /get_model_info"},
                {"/get_server_info", "SGLang's /get_server_info"},
                {"/props", "llama.cpp's /props"},
                {"/slots", "llama.cpp's /slots"},
        };
        for (size_t i = 0; i < ELEMENTSOF(where); i++) {
                _cleanup_free_ char *body = NULL;
                size_t len = 0;
                int r = fetch(p, where[i].path, NULL, &body, &len);
                if (interrupted(r))
                        return r;
                if (r == 0 && probes_parse_context(where[i].path, body, len, ret) == 0) {
                        *ret_where = where[i].what;
                        return 0;
                }
        }
        return -ENOENT;
}

/* The server's count of text's tokens by its /tokenize. -ENOENT: it has none. */
static int count_tokens(struct prober *p, const char *text, int64_t *ret) {
        const char *path = p->t.profile && p->t.profile->tokenize_path ? p->t.profile->tokenize_path : "/tokenize";
        json_t *b = openai_tokenize_request(text, p->t.model);
        _cleanup_free_ char *body = b ? json_dumps(b, JSON_COMPACT) : NULL;
        json_decref(b);
        if (!body)
                return -ENOMEM;
        _cleanup_free_ char *answer = NULL;
        size_t len = 0;
        int r = fetch(p, path, body, &answer, &len);
        if (r < 0)
                return r;
        return openai_parse_token_count(answer, len, ret) == 0 ? 0 : -ENOENT;
}

/* "6,144" */
static const char *thousands(int64_t v, char buf[static 32]) {
        char raw[32];
        snprintf(raw, sizeof(raw), "%" PRId64, v);
        size_t n = strlen(raw), o = 0;
        for (size_t i = 0; i < n; i++) {
                if (i && (n - i) % 3 == 0 && raw[i - 1] != '-')
                        buf[o++] = ',';
                buf[o++] = raw[i];
        }
        buf[o] = '\0';
        return buf;
}

static int init_spec(struct check_spec *s, const char *name, const char *prompt, int max_tokens, enum expect_kind kind,
                     const char *value) {
        *s = (struct check_spec){.mode = CHECK_CHAT, .thinking = THINKING_OFF, .max_tokens = max_tokens,
                                 .stream = STREAM_NO, .expect = {.kind = kind}};
        s->name = strdup(name);
        s->prompt = prompt ? strdup(prompt) : NULL;
        s->expect.value = value ? strdup(value) : NULL;
        if (!s->name || (prompt && !s->prompt) || (value && !s->expect.value)) {
                check_spec_release(s);
                return -ENOMEM;
        }
        return 0;
}

/* The suite's first question the cell answered right alone, fit to ask after filler or in
 * a conversation: a chat prompt with thinking not on and an expected answer ("Reply with
 * exactly: OK" in the default suite); with last, the last such ("What is 17 * 19?"). The
 * first, not the hardest, after filler: the fallback asks whether the model still follows
 * an instruction after the filler, so a small model that cannot do sums after noise is not
 * called broken, while a backend that breaks at length (garbage, or no answer) still
 * shows. The suite's own questions, never others: a server that answers only what the
 * user's suite asks is not called broken by a question of ours. NULL: none. */
static const struct check_spec *golden_answered(const struct prober *p, bool last) {
        const struct check_spec *found = NULL;
        for (size_t i = 0; i < p->n_suite; i++) {
                const struct check_spec *s = &p->suite[i];
                if (s->mode != CHECK_CHAT || !s->prompt || s->messages || s->thinking == THINKING_ON ||
                    s->expect.kind == EXPECT_NONE || s->require_reasoning)
                        continue;
                bool passed = false;
                for (size_t k = 0; k < p->n_suite_results; k++)
                        if (streq_ptr(p->suite_results[k].name, s->name) && p->suite_results[k].verdict == VERDICT_PASS)
                                passed = true;
                if (!passed)
                        continue;
                found = s;
                if (!last)
                        break;
        }
        return found;
}

/* A wrong answer's evidence in the probe's words: "expected X <where>, got: ...". */
static int reword_wrong(struct check_result *r, const char *cause, const char *expected, const char *where) {
        if (r->verdict != VERDICT_WRONG)
                return 0;
        _cleanup_free_ char *got = checks_quote_answer(r->output ? r->output : "", r->output ? strlen(r->output) : 0);
        if (!got)
                return -ENOMEM;
        /* a reasoning-less answer says so in the check's own words */
        if (r->evidence && !strstr(r->evidence, "expected"))
                return set_result(r, VERDICT_WRONG, cause,
                                  strdup_printf("%s %s: %s", expected, where, r->evidence), true);
        return set_result(r, VERDICT_WRONG, cause, strdup_printf("%s %s, got: %s", expected, where, got), true);
}

/* Asks a control (a probe's capability check): one question with a number for an answer,
 * its result added to p's. *ret points at it. Returns as ask (nothing added on failure). */
static int ask_control(struct prober *p, const char *name, const char *prompt, int max_tokens, const char *key,
                       struct check_result **ret) {
        struct check_spec cs;
        if (init_spec(&cs, name, prompt, max_tokens, EXPECT_NUMBER, key) < 0)
                return -ENOMEM;
        struct check_result *ctl = add(p);
        int r = ctl ? ask(p, &cs, 0, ctl) : -ENOMEM;
        check_spec_release(&cs);
        if (r < 0) {
                if (ctl)
                        p->n--;
                return r;
        }
        *ret = ctl;
        return r;
}

/* ---- long context ----------------------------------------------------------------------- */

/* The recall prompt says what to look for; the fallback's (a golden question after the
 * filler) says nothing: every token of a small context goes to the filler. */
#define LC_INTRO "Find the passkey in the text below.\n\n"
#define LC_QUESTION "What is the passkey? Reply with just the number."

static const char *lc_intro(const char *question) {
        return strcmp(question, LC_QUESTION) == 0 ? LC_INTRO : "";
}

static char *lc_prompt(const char *filler, const char *question) {
        return strdup_printf("%s%s\n\n%s", lc_intro(question), filler, question);
}

/* The filler's new length for a prompt of prompt_len bytes that came to `tokens` tokens:
 * the bytes a token takes in this prompt, times the tokens missing (or over), a little
 * under the target. */
static size_t resize_filler(size_t filler_len, size_t prompt_len, int64_t tokens, int64_t target) {
        double per_token = (double)prompt_len / (double)tokens;
        double want = (double)filler_len + ((double)target * 0.97 - (double)tokens) * per_token;
        return want < 64 ? 64 : (size_t)want;
}

/* The long request again with a filler of about chars bytes: the answer just had (lr, the
 * last result) is dropped. 0 or -ENOMEM. */
static int refill(struct prober *p, struct check_result *lr, char **filler, size_t chars, uint64_t seed,
                  const char *fact, int depth) {
        free(*filler);
        check_result_release(lr);
        p->n--;
        return (*filler = probes_filler(chars, seed, fact, depth)) ? 0 : -ENOMEM;
}

/* The long-context probe's state, from the control to the verdict's detail. */
struct lc_state {
        int passkey, depth;
        char fact[64], key[16];
        usec_t t0;
        bool recalls;                     /* the control recalled the passkey */
        const struct check_spec *golden;  /* else: the golden question asked after the filler */
        int64_t context;                  /* the server's context, 0 unknown */
        const char *where;                /* where the context came from */
        bool guessing;                    /* unknown: sent at the cap, sized by the refusal */
        int64_t target;                   /* the prompt's tokens wanted */
        const char *question;
        int64_t counted;                  /* the prompt's tokens by /tokenize, -1 none */
        bool tokenizer;                   /* the server has /tokenize */
        char *filler;
};

/* The control: the same fact and question, no filler. 0 to go on, 1 when the control
 * decided the probe (its own verdict says it, or a skip was added), -errno. */
static int lc_control(struct prober *p, struct lc_state *s) {
        _cleanup_free_ char *cprompt = strdup_printf("%s %s", s->fact, LC_QUESTION);
        struct check_result *ctl = NULL;
        int r = cprompt ? ask_control(p, "long-context/control", cprompt, PROBES_ANSWER_TOKENS, s->key, &ctl) : -ENOMEM;
        if (r < 0)
                return r;
        s->recalls = ctl->verdict == VERDICT_PASS;
        if (ctl->verdict == VERDICT_WRONG) {
                _cleanup_free_ char *got = checks_quote_answer(ctl->output ? ctl->output : "",
                                                               ctl->output ? strlen(ctl->output) : 0);
                s->golden = golden_answered(p, false);
                if (!got)
                        return -ENOMEM;
                ctl->detail = s->golden ? strdup_printf("the model does not recall %s at short context (got %s): the long "
                                                        "request asks \"%s\" after the filler instead",
                                                        s->key, got, s->golden->prompt)
                                        : strdup_printf("the model does not recall %s at short context (got %s)", s->key, got);
                if (!ctl->detail || set_result(ctl, VERDICT_PASS, NULL, NULL, false) < 0)
                        return -ENOMEM;
                if (!s->golden) {
                        r = add_skipped(p, "long-context",
                                        strdup("the model does not recall at short context and the suite has no "
                                               "single-prompt chat question it answered right"));
                        return r < 0 ? r : 1;
                }
        } else if (!s->recalls) {
                /* garbage, a timeout: the control's own verdict says it */
                return 1;
        } else if (!(ctl->detail = strdup_printf("recalled %s at short context", s->key)))
                return -ENOMEM;
        return p->hung ? 1 : 0;
}

/* The context and the target length. 0 to go on, 1 when a skip was added, -errno (an
 * interruption included). */
static int lc_context(struct prober *p, struct lc_state *s) {
        const struct probes_options *o = p->o;
        int r = server_context(p, &s->context, &s->where);
        if (interrupted(r))
                return r;
        if (r < 0 && o->long_context.context > 0) {
                s->context = o->long_context.context;
                s->where = "probes.long_context.context";
        }
        s->guessing = s->context <= 0;
        if (s->guessing) {
                s->where = "nowhere (sent at probes.long_context.max_tokens)";
                s->target = o->long_context.max_tokens;
        } else if (probes_target_tokens(s->context, o->long_context.share, o->long_context.max_tokens, &s->target) < 0) {
                char c[32];
                r = add_skipped(p, "long-context",
                                strdup_printf("a context of %s tokens (%s) is too small for a long-context probe",
                                              thousands(s->context, c), s->where));
                return r < 0 ? r : 1;
        }
        return 0;
}

/* The filler, sized with the server's tokenizer where it has one, else ~4 bytes a token. */
static int lc_fill(struct prober *p, struct lc_state *s) {
        size_t chars = (size_t)s->target * 4;
        s->counted = -1;
        s->tokenizer = true;
        for (int round = 0; round < 4; round++) {
                free(s->filler);
                if (!(s->filler = probes_filler(chars, p->o->seed, s->fact, s->depth)))
                        return -ENOMEM;
                if (!s->tokenizer)
                        break;
                _cleanup_free_ char *whole = lc_prompt(s->filler, s->question);
                if (!whole)
                        return -ENOMEM;
                int r = count_tokens(p, whole, &s->counted);
                if (interrupted(r))
                        return r;
                if (r < 0 || s->counted <= 0) {
                        s->tokenizer = false;
                        s->counted = -1;
                        break;
                }
                if (s->counted <= s->target && s->counted * 10 >= s->target * 9)
                        break;
                chars = resize_filler(strlen(s->filler), strlen(whole), s->counted, s->target);
        }
        return 0;
}

/* The long request's detail (its tokens, the share of the context, the depth) and, when
 * wrong, its reworded evidence. */
static int lc_settle(struct lc_state *s, struct check_result *lr, const char *expected) {
        int64_t tokens = lr->prompt_tokens > 0 ? lr->prompt_tokens : s->counted > 0 ? s->counted : (int64_t)s->target;
        const char *how = lr->prompt_tokens > 0 ? "" : s->counted > 0 ? " (by /tokenize)" : " (estimated)";
        char tk[32], cx[32], whereas[256];
        if (s->context > 0)
                snprintf(whereas, sizeof(whereas), "at %s tokens%s (%.0f%% of %s), depth %d%%", thousands(tokens, tk),
                         how, 100.0 * (double)tokens / (double)s->context, thousands(s->context, cx), s->depth);
        else
                snprintf(whereas, sizeof(whereas), "at %s tokens%s, depth %d%%", thousands(tokens, tk), how, s->depth);
        lr->prompt_tokens = tokens;
        char secs[32];
        snprintf(secs, sizeof(secs), "%.2fs", (double)(now_usec() - s->t0) / USEC_PER_SEC);
        char ctxs[160] = "";
        if (s->context > 0)
                snprintf(ctxs, sizeof(ctxs), " (%.0f%% of %s, context from %s)",
                         100.0 * (double)tokens / (double)s->context, thousands(s->context, cx), s->where);
        else
                snprintf(ctxs, sizeof(ctxs), " (context from %s)", s->where ? s->where : "-");
        if (s->recalls)
                lr->detail = strdup_printf("%s prompt tokens%s%s, passkey %s at depth %d%%, %s", thousands(tokens, tk),
                                           how, ctxs, s->key, s->depth, secs);
        else
                lr->detail = strdup_printf("%s prompt tokens%s%s, \"%s\" asked after the filler (the model does "
                                           "not recall at short context), %s",
                                           thousands(tokens, tk), how, ctxs, s->golden->prompt, secs);
        if (!lr->detail)
                return -ENOMEM;
        if (lr->verdict == VERDICT_WRONG) {
                _cleanup_free_ char *w = s->recalls ? strdup(whereas)
                                                    : strdup_printf("for \"%s\" after the filler, %s", s->golden->prompt,
                                                                    whereas);
                if (!w || reword_wrong(lr, "long-context", expected, w) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static int probe_long_context(struct prober *p) {
        const struct probes_options *o = p->o;
        struct lc_state s = {.t0 = now_usec()};
        probes_secrets(o->seed, &s.passkey, &s.depth, NULL);
        snprintf(s.fact, sizeof(s.fact), "The passkey is %d.", s.passkey);
        snprintf(s.key, sizeof(s.key), "%d", s.passkey);
        _cleanup_free_ char *filler_owned = NULL; /* s.filler, freed on every return */

        int r = lc_control(p, &s);
        if (r == 0)
                r = lc_context(p, &s);
        if (r != 0)
                return r < 0 ? r : 0;
        s.question = s.recalls ? LC_QUESTION : s.golden->prompt;
        r = lc_fill(p, &s);
        filler_owned = s.filler;
        if (r < 0)
                return r;

        bool corrected = false;
        struct check_spec ls;
        char expected[160];
        bool quoted = !s.recalls && s.golden->expect.kind != EXPECT_NUMBER;
        snprintf(expected, sizeof(expected), "expected %s%.120s%s", quoted ? "\"" : "",
                 s.recalls ? s.key : s.golden->expect.value, quoted ? "\"" : "");
        for (int attempt = 0;; attempt++) {
                _cleanup_free_ char *prompt = lc_prompt(s.filler, s.question);
                if (!prompt || init_spec(&ls, "long-context", prompt, PROBES_ANSWER_TOKENS,
                                         s.recalls ? EXPECT_NUMBER : s.golden->expect.kind,
                                         s.recalls ? s.key : s.golden->expect.value) < 0)
                        return -ENOMEM;
                struct check_result *lr = add(p);
                r = lr ? ask(p, &ls, o->long_context.timeout, lr) : -ENOMEM;
                check_spec_release(&ls);
                if (r < 0) {
                        if (lr)
                                p->n--;
                        return r;
                }
                size_t plen = strlen(lc_intro(s.question)) + strlen(s.filler) + 2 + strlen(s.question);
                size_t chars;
                bool refused = lr->verdict == VERDICT_GARBAGE && lr->http_status >= 400 && lr->http_status < 500;
                /* a refusal as too long: the context it says, once */
                if (attempt == 0 && refused) {
                        int64_t said = 0, prompt_said = 0;
                        const char *msg = lr->error_message ? lr->error_message : lr->evidence;
                        if (probes_parse_context_error(msg, &said) == 0 &&
                            probes_target_tokens(said, o->long_context.share, o->long_context.max_tokens, &s.target) == 0) {
                                bool known = prompt_tokens_in_error(msg, &prompt_said) && prompt_said > said;
                                chars = known ? resize_filler(strlen(s.filler), plen, prompt_said, s.target)
                                              : (size_t)((double)strlen(s.filler) * 0.5 * (double)s.target /
                                                         (double)(s.guessing ? o->long_context.max_tokens : s.context));
                                if (chars < 64)
                                        chars = 64;
                                if (s.guessing || said != s.context)
                                        s.where = "the server's refusal of a longer prompt";
                                s.context = said;
                                s.guessing = false;
                                r = refill(p, lr, &s.filler, chars, o->seed, s.fact, s.depth);
                                filler_owned = s.filler;
                                if (r < 0)
                                        return -ENOMEM;
                                continue;
                        }
                }
                /* no tokenizer: one correction from usage.prompt_tokens when well off the target */
                if (!corrected && attempt < 2 && !s.tokenizer && !s.guessing && lr->prompt_tokens > 0 &&
                    (lr->prompt_tokens * 10 < s.target * 8 || lr->prompt_tokens * 10 > s.target * 11) &&
                    (lr->verdict == VERDICT_PASS || lr->verdict == VERDICT_WRONG)) {
                        chars = resize_filler(strlen(s.filler), plen, lr->prompt_tokens, s.target);
                        corrected = true;
                        r = refill(p, lr, &s.filler, chars, o->seed, s.fact, s.depth);
                        filler_owned = s.filler;
                        if (r < 0)
                                return -ENOMEM;
                        continue;
                }
                if (s.guessing && refused) {
                        /* refused, and it did not say its context: half as long, while the
                         * prompt is still long enough to matter */
                        if (s.target / 2 < PROBES_GUESS_MIN_TOKENS) {
                                check_result_release(lr);
                                p->n--;
                                return add_skipped(p, "long-context",
                                                   strdup("context unknown (the server refused every prompt from "
                                                          "probes.long_context.max_tokens down without saying its "
                                                          "context): set probes.long_context.context"));
                        }
                        s.target /= 2;
                        r = refill(p, lr, &s.filler, strlen(s.filler) / 2, o->seed, s.fact, s.depth);
                        filler_owned = s.filler;
                        if (r < 0)
                                return -ENOMEM;
                        s.where = "nowhere (the longest prompt it took, halving from probes.long_context.max_tokens)";
                        continue;
                }
                return lc_settle(&s, lr, expected);
        }
}

/* ---- sampling --------------------------------------------------------------------------- */

static int probe_sampling(struct prober *p) {
        const struct probes_options *o = p->o;
        int runs = o->sampling.runs;
        size_t nq = 0;
        for (size_t i = 0; i < p->n_suite; i++)
                if (p->suite[i].mode != CHECK_MODELS && p->suite[i].expect.kind != EXPECT_NONE)
                        nq++;
        if (nq == 0)
                return add_skipped(p, "sampling", strdup("the suite has no question with an expected answer"));
        size_t total = nq * (size_t)runs;
        struct check_spec *specs = calloc(total, sizeof(*specs));
        if (!specs)
                return -ENOMEM;
        int r = 0;
        size_t k = 0;
        for (size_t i = 0; i < p->n_suite && r == 0; i++) {
                const struct check_spec *s = &p->suite[i];
                if (s->mode == CHECK_MODELS || s->expect.kind == EXPECT_NONE)
                        continue;
                for (int run = 1; run <= runs && r == 0; run++, k++) {
                        struct check_spec *c = &specs[k];
                        *c = *s;
                        c->name = strdup_printf("sampling/%s", s->name);
                        c->prompt = s->prompt ? strdup(s->prompt) : NULL;
                        c->messages = s->messages ? json_deep_copy(s->messages) : NULL;
                        c->expect.value = s->expect.value ? strdup(s->expect.value) : NULL;
                        c->stream = STREAM_NO;
                        c->sampling = true;
                        c->temperature = o->sampling.temperature;
                        c->top_p = o->sampling.top_p;
                        c->seed = run;
                        if (!c->name || (s->prompt && !c->prompt) || (s->messages && !c->messages) ||
                            (s->expect.value && !c->expect.value))
                                r = -ENOMEM;
                }
        }
        struct check_result *rs = NULL;
        usec_t t0 = now_usec();
        /* The runs of one question at once (a sampling fault shows in any of them, a batching
         * fault too); the questions one after another: all of them at once is load, which
         * is the bench's probe, and a small shared KV cache refuses it (llama-server with a
         * 256-token context answered "Context size has been exceeded" to 15 at once). */
        _cleanup_free_ size_t *retried = calloc(nq, sizeof(*retried));
        if (r == 0 && (!retried || !(rs = calloc(total, sizeof(*rs)))))
                r = -ENOMEM;
        for (size_t i = 0; r == 0 && i < nq; i++) {
                struct checks_target tt = p->t;
                tt.ret_model = NULL;
                struct check_result *part = NULL;
                if (p->hung) {
                        /* a hung server: the rest never asked */
                        for (size_t j = 0; j < (size_t)runs && r == 0; j++) {
                                struct check_result *x = &rs[i * (size_t)runs + j];
                                *x = (struct check_result){.verdict = VERDICT_SKIPPED};
                                if (!(x->name = strdup(specs[i * (size_t)runs].name)) ||
                                    set_result(x, VERDICT_SKIPPED, "not asked",
                                               strdup("not asked: an earlier request timed out"), true) < 0)
                                        r = -ENOMEM;
                        }
                        continue;
                }
                r = checks_run_concurrent(p->l, &tt, &specs[i * (size_t)runs], (size_t)runs, (size_t)runs, &part);
                if (part) {
                        memcpy(&rs[i * (size_t)runs], part, (size_t)runs * sizeof(*part));
                        free(part);
                        /* A run the server refused with an HTTP error while the others ran
                         * (a small shared KV cache: "Context size has been exceeded") is
                         * asked again alone: capacity is the under-load probe's question,
                         * not this one's. Garbage in an answer is never asked again. */
                        for (size_t j = 0; j < (size_t)runs && r == 0 && runs > 1; j++) {
                                struct check_result *x = &rs[i * (size_t)runs + j];
                                if (x->verdict != VERDICT_GARBAGE || x->http_status < 400 || !streq_ptr(x->cause, "http"))
                                        continue;
                                struct check_result *alone = NULL;
                                r = checks_run_concurrent(p->l, &tt, &specs[i * (size_t)runs + j], 1, 1, &alone);
                                if (alone) {
                                        check_result_release(x);
                                        *x = alone[0];
                                        free(alone);
                                        retried[i]++;
                                }
                        }
                        for (size_t j = 0; j < (size_t)runs; j++)
                                if (rs[i * (size_t)runs + j].verdict == VERDICT_TIMEOUT)
                                        p->hung = true;
                }
        }
        usec_t wall = now_usec() - t0;
        for (size_t i = 0; rs && i < nq && r != -ENOMEM; i++) {
                struct check_result *res = add(p);
                if (!res) {
                        r = -ENOMEM;
                        break;
                }
                int e = probes_judge_sampling(specs[i * (size_t)runs].name, &rs[i * (size_t)runs], (size_t)runs,
                                              o->sampling.min_right, o->sampling.temperature, o->sampling.top_p, res);
                if (e < 0) {
                        p->n--;
                        r = e;
                        break;
                }
                if (res->verdict == VERDICT_TIMEOUT)
                        p->hung = true;
                char secs[32];
                snprintf(secs, sizeof(secs), "%.2fs", (double)wall / USEC_PER_SEC);
                bool seeded = p->t.profile && p->t.profile->takes_seed;
                char seeds[32] = "";
                if (seeded)
                        snprintf(seeds, sizeof(seeds), runs > 1 ? ", seeds 1-%d" : ", seed %d", runs);
                char again[96] = "";
                if (retried[i])
                        snprintf(again, sizeof(again), "; %zu refused with an HTTP error at %d at once, asked again alone",
                                 retried[i], runs);
                char *d = strdup_printf("%s%s; %d at once, %zu requests in %s%s", res->detail, seeds, runs, total, secs,
                                        again);
                if (!d) {
                        r = -ENOMEM;
                        break;
                }
                free(res->detail);
                res->detail = d;
        }
        checks_free_results(rs, rs ? total : 0);
        checks_free_suite(specs, total);
        return r;
}

/* ---- multi-turn ------------------------------------------------------------------------- */

static int add_turn(json_t *msgs, const char *role, const char *content) {
        return json_array_append_new(msgs, json_pack("{s:s, s:s}", "role", role, "content", content ? content : ""));
}

/* One conversation, streamed or not; *res gets its verdict. */
/* Turn 1 gives a number to remember and turn 2 asks to keep it (both judged by the
 * detectors only: "OK", "Sure, 47." and a canned reply are all fine); turn 3 asks for the
 * number when the model recalls in one turn, else the suite's first question the cell
 * answered right alone (the first, not the hardest: as after the long-context filler). Only turn 3 holds a question of the suite's or a recall question:
 * a server that answers by what the whole conversation holds (as simple stand-ins do)
 * answers turn 3 as it answered that question alone. */
static int conversation(struct prober *p, bool stream, int remember, bool recalls, const struct check_spec *third,
                        struct check_result *res) {
        char t1[64], want3[16];
        snprintf(t1, sizeof(t1), "Remember this number: %d.", remember);
        snprintf(want3, sizeof(want3), "%d", remember);
        static const char *const recall_q = "What number did I ask you to remember? Reply with just the number.";
        const struct {
                const char *say;
                enum expect_kind kind;
                const char *want;
        } turns[3] = {
                {t1, EXPECT_NONE, NULL},
                {"Keep that number in mind: I will ask for it later.", EXPECT_NONE, NULL},
                {recalls ? recall_q : third->prompt, recalls ? EXPECT_NUMBER : third->expect.kind,
                 recalls ? want3 : third->expect.value},
        };
        const char *name = stream ? "multi-turn/stream" : "multi-turn";
        json_t *msgs = json_array();
        if (!msgs)
                return -ENOMEM;
        usec_t latency = 0;
        int r = 0;
        for (int i = 0; i < 3; i++) {
                if (add_turn(msgs, "user", turns[i].say) < 0) {
                        r = -ENOMEM;
                        break;
                }
                struct check_spec s;
                if ((r = init_spec(&s, name, NULL, 64, turns[i].kind, turns[i].want)) < 0)
                        break;
                s.messages = json_deep_copy(msgs);
                s.stream = stream ? STREAM_YES : STREAM_NO;
                if (!s.messages) {
                        check_spec_release(&s);
                        r = -ENOMEM;
                        break;
                }
                check_result_release(res);
                r = ask(p, &s, 0, res);
                check_spec_release(&s);
                if (r < 0)
                        break;
                latency += res->latency;
                if (res->verdict != VERDICT_PASS) {
                        char where[32];
                        snprintf(where, sizeof(where), "turn %d:", i + 1);
                        if (res->verdict == VERDICT_WRONG) {
                                char exp[64];
                                bool quote = turns[i].kind != EXPECT_NUMBER;
                                snprintf(exp, sizeof(exp), "turn %d: expected %s%.40s%s", i + 1, quote ? "\"" : "",
                                         turns[i].want ? turns[i].want : "", quote ? "\"" : "");
                                r = reword_wrong(res, "multi-turn", exp, i == 2 && recalls ? "(the number from turn 1)" : "");
                                /* "expected 42 , got" without a where: tidy */
                                if (r == 0 && res->evidence) {
                                        char *sp = strstr(res->evidence, " , got");
                                        if (sp)
                                                memmove(sp, sp + 1, strlen(sp + 1) + 1);
                                }
                        } else {
                                r = set_result(res, res->verdict, res->cause,
                                               strdup_printf("%s %s", where, res->evidence ? res->evidence : "-"), true);
                        }
                        break;
                }
                if (add_turn(msgs, "assistant", res->output) < 0) {
                        r = -ENOMEM;
                        break;
                }
        }
        json_decref(msgs);
        if (r < 0)
                return r;
        res->latency = latency;
        if (res->verdict != VERDICT_PASS)
                return 0;
        res->detail = recalls ? strdup_printf("3 turns; turn 3 recalled %d from turn 1", remember)
                              : strdup_printf("3 turns; the model does not recall in one turn: turn 3 asked \"%s\"",
                                              third->prompt);
        return res->detail ? 0 : -ENOMEM;
}

static int probe_multi_turn(struct prober *p) {
        int remember;
        probes_secrets(p->o->seed, NULL, NULL, &remember);
        char cprompt[160], key[16];
        snprintf(cprompt, sizeof(cprompt),
                 "Remember this number: %d. What number did I ask you to remember? Reply with just the number.", remember);
        snprintf(key, sizeof(key), "%d", remember);
        const struct check_spec *third = golden_answered(p, false);
        if (!third)
                return add_skipped(p, "multi-turn",
                                   strdup("the suite has no single-prompt chat question the cell answered right"));
        struct check_result *ctl = NULL;
        int r = ask_control(p, "multi-turn/control", cprompt, 64, key, &ctl);
        if (r < 0)
                return r;
        bool recalls = ctl->verdict == VERDICT_PASS;
        if (ctl->verdict == VERDICT_WRONG) {
                _cleanup_free_ char *got = checks_quote_answer(ctl->output ? ctl->output : "",
                                                               ctl->output ? strlen(ctl->output) : 0);
                if (!got || !(ctl->detail = strdup_printf("the model does not recall %d in one turn (got %s): turn 3 "
                                                          "asks \"%s\" instead", remember, got, third->prompt)) ||
                    set_result(ctl, VERDICT_PASS, NULL, NULL, false) < 0)
                        return -ENOMEM;
        } else if (!recalls)
                return 0;
        else if (!(ctl->detail = strdup_printf("recalled %d in one turn", remember)))
                return -ENOMEM;
        enum stream_mode sm = p->o->multi_turn.stream;
        for (int pass = 0; pass < 2 && !p->hung; pass++) {
                bool stream = pass == 1;
                if ((sm == STREAM_NO && stream) || (sm == STREAM_YES && !stream))
                        continue;
                struct check_result *res = add(p);
                if (!res)
                        return -ENOMEM;
                r = conversation(p, stream, remember, recalls, third, res);
                if (r < 0) {
                        check_result_release(res);
                        p->n--;
                        return r;
                }
                if (res->verdict == VERDICT_TIMEOUT)
                        p->hung = true;
        }
        return 0;
}

/* ---- all of them ------------------------------------------------------------------------ */


int probes_run(struct loop *l, const struct checks_target *t, const struct probes_options *o,
               const struct check_spec *suite, size_t n_suite, const struct check_result *suite_results,
               size_t n_suite_results, struct check_result **ret, size_t *ret_n) {
        struct prober p = {
                .l = l,
                .t = *t,
                .o = o,
                .suite = suite,
                .n_suite = n_suite,
                .suite_results = suite_results,
                .n_suite_results = n_suite_results,
        };
        p.t.ret_model = NULL;
        p.t.logprobs = false;
        int r = (p.base = checks_base_url(t->base_url ? t->base_url : "")) ? 0 : -ENOMEM;
        static int (*const run[_PROBE_MAX])(struct prober *) = {
                [PROBE_LONG_CONTEXT] = probe_long_context,
                [PROBE_SAMPLING] = probe_sampling,
                [PROBE_MULTI_TURN] = probe_multi_turn,
        };
        for (int k = 0; k < _PROBE_MAX && r == 0 && !p.hung; k++) {
                if (!o->on[k])
                        continue;
                if (t->should_abort && t->should_abort(t->abort_userdata)) {
                        r = -ECANCELED;
                        break;
                }
                r = run[k](&p);
        }
        free(p.base);
        if (r == -ENOMEM) {
                checks_free_results(p.res, p.n);
                return r;
        }
        *ret = p.res;
        *ret_n = p.n;
        return r;
}
