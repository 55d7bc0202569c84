/* cli_smoke.c -- `gauntlet smoke`: the smoke suite against a running server. */
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

#include "gate/checks.h"
#include "cli/cli.h"
#include "gate/eval.h"
#include "gate/probes.h"
#include "text/text.h"
#include "io/http.h"
#include "io/loop.h"
#include "config/suite.h"
#include "base/profile.h"
#include "text/secrets.h"

#define SMOKE_DEFAULT_TIMEOUT (5 * 60 * USEC_PER_SEC)

static void help(void) {
        printf("usage: gauntlet smoke --url URL [--model NAME] [--checks FILE] [--engine NAME]\n"
               "                      [--timeout DUR] [--thinking-key KEY] [--format text|json]\n"
               "                      [--eval FILE|builtin[:SET,...]] [--samples N] [--seed N]\n"
               "                      [--concurrency N] [--max-tokens N] [--thinking on|off] [--no-logprobs]\n"
               "                      [--probes all|none|LIST] [--long-context-share X]\n"
               "                      [--long-context-max-tokens N] [--long-context-timeout DUR] [--context N]\n"
               "                      [--sampling-runs N] [--sampling-min-right N] [--probe-seed N]\n\n"
               "Asks a running OpenAI-compatible server questions with known answers and judges\n"
               "every output for garbage: the model list answers, \"Reply with exactly: OK\",\n"
               "17 * 19 with thinking off and on, each streamed and not; then the probes: a\n"
               "passkey at long context, the questions again while sampling, a multi-turn chat.\n\n"
               "  --url URL           the server, e.g. http://127.0.0.1:30000\n"
               "  --model NAME        the model to ask (default: the first from /v1/models)\n"
               "  --checks FILE       a YAML check suite instead of the built-in one\n"
               "  --engine NAME       sglang, vllm, trtllm, llama.cpp, generic: where reasoning is\n"
               "                      read from, the thinking switch, whether a seed is sent\n"
               "  --timeout DUR       per request (default 5m): 30s, 2m, 500ms\n"
               "  --thinking-key KEY  chat_template_kwargs key switching thinking\n"
               "                      (default enable_thinking; DeepSeek templates: thinking)\n"
               "  --format text|json  (default text)\n"
               "  --eval FILE         after a passing suite, the accuracy eval: a JSONL file of\n"
               "                      {\"prompt\", \"expect\"} lines, or builtin (products, sums,\n"
               "                      letters, sort, copy; builtin:products,sums for some)\n"
               "  --samples N         eval questions: a seeded subset of the file, or how many\n"
               "                      built-in ones to make (default 200)\n"
               "  --seed N            for the subset and the built-in questions (default 1)\n"
               "  --concurrency N     eval requests in flight (default 8)\n"
               "  --max-tokens N      per eval question (default 256)\n"
               "  --thinking on|off   switch thinking for the eval questions (default: the server's)\n"
               "  --no-logprobs       do not ask for logprobs with the eval questions\n"
               "  --probes WHICH      all (default), none, or a list: long-context,sampling,multi-turn\n"
               "  --long-context-share X       of the context the long prompt fills (default 0.75)\n"
               "  --long-context-max-tokens N  cap on the long prompt (default 32768)\n"
               "  --long-context-timeout DUR   the long request's own timeout (default 5m)\n"
               "  --context N         the context when the server does not say its own\n"
               "  --sampling-runs N   runs of each question while sampling (1 to 50, default 5)\n"
               "  --sampling-min-right N  right answers needed (default 4 of 5, scaled)\n"
               "  --probe-seed N      the passkey, its depth, the number to remember (default 1)\n\n"
               "Exit status: 0 every check passed (the eval reports figures; without a\n"
               "reference it gates nothing), 1 a check failed, an eval question hung or the\n"
               "server is unreachable, 2 usage error.\n");
}

/* Text from a server on a terminal: control characters shown, never interpreted. */
static void put_escaped(FILE *f, const char *s) {
        struct buf b;
        buf_init(&b, 0);
        if (text_escape(&b, s, 0, TEXT_TERMINAL) >= 0)
                fputs(buf_str(&b), f);
        buf_release(&b);
}

static json_t *json_text(const char *s) {
        if (!s)
                return json_null();
        json_t *j = json_string(s);
        if (j)
                return j;
        /* Not valid UTF-8 (should not happen: outputs come out of a JSON decoder). */
        _cleanup_free_ char *copy = strdup(s);
        if (!copy)
                return NULL;
        for (char *p = copy; *p; p++)
                if ((unsigned char)*p >= 0x80)
                        *p = '?';
        return json_string(copy);
}

static bool unreachable(const struct check_result *r, size_t n) {
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (r[i].transport_error != -ECONNREFUSED && r[i].transport_error != -EHOSTUNREACH)
                        return false;
        return true;
}

/* What an eval run gave, for the printers. */
struct eval_outcome {
        const struct eval_set *set;
        const struct eval_options *o;
        const struct check_result *r;  /* set->n results, or NULL: not run */
        struct eval_figures fig;
        usec_t wall;
        const char *skipped;           /* why it did not run, or NULL */
};

static json_t *eval_json(const struct eval_outcome *e) {
        if (!e->set)
                return json_null();
        if (!e->r) {
                json_t *o = json_pack("{s:s?, s:s?}", "source", e->set->source, "skipped", e->skipped);
                return o;
        }
        json_t *o = json_object(), *qs = json_array(), *by = json_object();
        if (!o || !qs || !by) {
                json_decref(o);
                json_decref(qs);
                json_decref(by);
                return NULL;
        }
        int x = 0;
        for (int k = 0; k < _VERDICT_MAX; k++)
                if (e->fig.by_verdict[k])
                        x |= json_object_set_new(by, verdict_to_string((enum verdict)k),
                                                 json_integer((json_int_t)e->fig.by_verdict[k]));
        for (size_t i = 0; i < e->set->n; i++) {
                const struct check_result *c = &e->r[i];
                x |= json_array_append_new(qs, json_pack("{s:o, s:s, s:o, s:o, s:o, s:f}", "id", json_text(c->name), "verdict",
                                                         verdict_to_string(c->verdict), "cause", json_text(c->cause),
                                                         "evidence", json_text(c->evidence), "output", json_text(c->output),
                                                         "latency_s", (double)c->latency / USEC_PER_SEC));
        }
        x |= json_object_set_new(o, "source", json_text(e->set->source));
        x |= json_object_set_new(o, "questions", json_integer((json_int_t)e->set->n));
        x |= json_object_set_new(o, "concurrency",
                                 json_integer(e->o->concurrency > 0 ? e->o->concurrency : EVAL_DEFAULT_CONCURRENCY));
        x |= json_object_set_new(o, "wall_s", json_real((double)e->wall / USEC_PER_SEC));
        x |= json_object_set_new(o, "n", json_integer((json_int_t)e->fig.n));
        x |= json_object_set_new(o, "correct", json_integer((json_int_t)e->fig.correct));
        x |= json_object_set_new(o, "accuracy", e->fig.n ? json_real(e->fig.accuracy) : json_null());
        x |= json_object_set_new(o, "ci95", e->fig.n ? json_pack("[f, f]", e->fig.ci_low, e->fig.ci_high) : json_null());
        x |= json_object_set_new(o, "by_verdict", by);
        x |= json_object_set_new(o, "answers", qs);
        if (x) {
                json_decref(o);
                return NULL;
        }
        return o;
}

static int print_json(const char *url, const char *model, enum verdict v, const char *cause, const char *evidence,
                      const struct check_result *r, size_t n, const struct eval_outcome *ev) {
        json_t *root = json_object(), *checks = json_array();
        if (!root || !checks) {
                json_decref(root);
                json_decref(checks);
                return -ENOMEM;
        }
        int e = 0;
        e |= json_object_set_new(root, "verdict", json_string(verdict_to_string(v)));
        e |= json_object_set_new(root, "cause", json_text(cause));
        e |= json_object_set_new(root, "evidence", json_text(evidence));
        e |= json_object_set_new(root, "url", json_text(url));
        e |= json_object_set_new(root, "model", json_text(model));
        for (size_t i = 0; i < n; i++) {
                const struct check_result *c = &r[i];
                json_t *o = json_object();
                if (!o) {
                        e = -1;
                        break;
                }
                e |= json_object_set_new(o, "name", json_text(c->name));
                e |= json_object_set_new(o, "verdict", json_string(verdict_to_string(c->verdict)));
                e |= json_object_set_new(o, "cause", json_text(c->cause));
                e |= json_object_set_new(o, "evidence", json_text(c->evidence));
                e |= json_object_set_new(o, "output", json_text(c->output));
                e |= json_object_set_new(o, "reasoning", json_text(c->reasoning));
                e |= json_object_set_new(o, "finish_reason", json_text(c->finish_reason));
                e |= json_object_set_new(o, "http_status", c->http_status ? json_integer(c->http_status) : json_null());
                e |= json_object_set_new(o, "latency_s", json_real((double)c->latency / USEC_PER_SEC));
                e |= json_object_set_new(o, "ttft_s",
                                         c->streamed && c->ttft ? json_real((double)c->ttft / USEC_PER_SEC) : json_null());
                e |= json_object_set_new(o, "streamed", json_boolean(c->streamed));
                e |= json_object_set_new(o, "truncated", json_boolean(c->truncated));
                e |= json_object_set_new(o, "detail", json_text(c->detail));
                e |= json_object_set_new(o, "prompt_tokens",
                                         c->prompt_tokens > 0 ? json_integer(c->prompt_tokens) : json_null());
                e |= json_array_append_new(checks, o);
        }
        e |= json_object_set_new(root, "checks", checks);
        e |= json_object_set_new(root, "eval", eval_json(ev));
        if (e == 0)
                e = json_dumpf(root, stdout, JSON_INDENT(2));
        json_decref(root);
        if (e)
                return -ENOMEM;
        fputc('\n', stdout);
        return 0;
}

/* "12.3ms" under a second, "4.56s" above: a local server answers in microseconds. */
static const char *format_seconds(usec_t u, char buf[static 32]) {
        if (u < USEC_PER_SEC)
                snprintf(buf, 32, "%.1fms", (double)u / USEC_PER_MSEC);
        else
                snprintf(buf, 32, "%.2fs", (double)u / USEC_PER_SEC);
        return buf;
}

/* The eval's figures, then the first few answers that were not right. */
static void print_eval_text(const struct eval_outcome *e) {
        if (!e->set)
                return;
        fputs("eval: ", stdout);
        put_escaped(stdout, e->set->source);
        printf(", %zu question%s", e->set->n, e->set->n == 1 ? "" : "s");
        if (!e->r) {
                printf(": not run (%s)\n", e->skipped ? e->skipped : "?");
                return;
        }
        char wall[32];
        _cleanup_free_ char *line = eval_figures_line(&e->fig);
        printf(", %d at a time: %s in %s\n", e->o->concurrency > 0 ? e->o->concurrency : EVAL_DEFAULT_CONCURRENCY,
               line ? line : "?", format_seconds(e->wall, wall));
        size_t shown = 0, misses = e->fig.n - e->fig.correct;
        for (size_t i = 0; i < e->set->n && shown < 5; i++) {
                const struct check_result *c = &e->r[i];
                if (c->verdict == VERDICT_PASS || c->verdict == VERDICT_SKIPPED)
                        continue;
                fputs("  ", stdout);
                put_escaped(stdout, c->name);
                printf("  %s", verdict_to_string(c->verdict));
                if (c->evidence) {
                        fputs("  ", stdout);
                        put_escaped(stdout, c->evidence);
                }
                fputc('\n', stdout);
                shown++;
        }
        if (misses > shown)
                printf("  and %zu more not right (--format json lists every answer)\n", misses - shown);
}

static void print_text(const char *model, enum verdict v, const char *cause, const char *evidence,
                       const struct check_result *r, size_t n) {
        bool color = cli_color(stdout);
        int width = 5;
        for (size_t i = 0; i < n; i++)
                width = MAX(width, (int)strlen(r[i].name));
        if (model) {
                fputs("model: ", stdout);
                put_escaped(stdout, model);
                fputc('\n', stdout);
        }
        for (size_t i = 0; i < n; i++) {
                const struct check_result *c = &r[i];
                const char *vs = verdict_to_string(c->verdict);
                char lat[32], ttft[32];
                printf("%-*s  %s%-7s%s  %8s", width, c->name, color ? verdict_color(c->verdict) : "", vs,
                       color ? "\033[0m" : "", format_seconds(c->latency, lat));
                if (c->streamed && c->ttft)
                        printf("  ttft %s", format_seconds(c->ttft, ttft));
                if (c->verdict != VERDICT_PASS) {
                        fputs("  ", stdout);
                        put_escaped(stdout, c->cause ? c->cause : "-");
                        if (c->evidence) {
                                fputs(": ", stdout);
                                put_escaped(stdout, c->evidence);
                        }
                }
                fputc('\n', stdout);
                if (c->detail) {
                        printf("%-*s  ", width, "");
                        put_escaped(stdout, c->detail);
                        fputc('\n', stdout);
                }
        }
        printf("verdict: %s%s%s", color ? verdict_color(v) : "", verdict_to_string(v), color ? "\033[0m" : "");
        if (v != VERDICT_PASS && cause) {
                fputs(" (", stdout);
                put_escaped(stdout, cause);
                if (evidence) {
                        fputs(": ", stdout);
                        put_escaped(stdout, evidence);
                }
                fputc(')', stdout);
        }
        fputc('\n', stdout);
}

int cli_smoke(int argc, char **argv) {
        static const struct option opts[] = {
                {"url", required_argument, NULL, 'u'},
                {"model", required_argument, NULL, 'm'},
                {"checks", required_argument, NULL, 'c'},
                {"engine", required_argument, NULL, 'e'},
                {"timeout", required_argument, NULL, 't'},
                {"thinking-key", required_argument, NULL, 'k'},
                {"format", required_argument, NULL, 'f'},
                {"eval", required_argument, NULL, 'E'},
                {"samples", required_argument, NULL, 'S'},
                {"seed", required_argument, NULL, 'D'},
                {"concurrency", required_argument, NULL, 'C'},
                {"max-tokens", required_argument, NULL, 'M'},
                {"thinking", required_argument, NULL, 'T'},
                {"no-logprobs", no_argument, NULL, 'L'},
                {"probes", required_argument, NULL, 'P'},
                {"long-context-share", required_argument, NULL, 1001},
                {"long-context-max-tokens", required_argument, NULL, 1002},
                {"long-context-timeout", required_argument, NULL, 1003},
                {"context", required_argument, NULL, 1004},
                {"sampling-runs", required_argument, NULL, 1005},
                {"sampling-min-right", required_argument, NULL, 1006},
                {"probe-seed", required_argument, NULL, 1007},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        static const char *const formats[] = {"text", "json", NULL};
        const char *url = NULL, *model = NULL, *checks_file = NULL, *engine = NULL, *thinking_key = NULL;
        usec_t timeout = SMOKE_DEFAULT_TIMEOUT;
        int format = 0;
        const char *eval_src = NULL;
        _cleanup_(eval_options_release) struct eval_options eo;
        eval_options_init(&eo);
        long lv;
        bool eval_opt = false;
        struct probes_options po;
        probes_options_init(&po);
        bool min_right_set = false;

        opterr = 0;
        optind = 1;
        for (;;) {
                int c = getopt_long(argc, argv, "+:h", opts, NULL);
                if (c < 0)
                        break;
                switch (c) {
                case 'u':
                        url = optarg;
                        break;
                case 'm':
                        model = optarg;
                        break;
                case 'c':
                        checks_file = optarg;
                        break;
                case 'e':
                        engine = optarg;
                        break;
                case 'k':
                        thinking_key = optarg;
                        if (!*thinking_key)
                                return cli_usage_error("smoke", "--thinking-key must not be empty");
                        break;
                case 't':
                        if (parse_duration(optarg, &timeout) < 0 || timeout == 0)
                                return cli_usage_error("smoke", "invalid --timeout '%s' (try 30s, 2m, 500ms)", optarg);
                        break;
                case 'f':
                        format = cli_parse_choice(optarg, formats);
                        if (format < 0)
                                return cli_usage_error("smoke", "invalid --format '%s' (text or json)", optarg);
                        break;
                case 'E':
                        eval_src = optarg;
                        break;
                case 'S':
                        if (cli_parse_int(optarg, 1, EVAL_MAX_QUESTIONS, &lv) < 0)
                                return cli_usage_error("smoke", "invalid --samples '%s' (1 to %d)", optarg, EVAL_MAX_QUESTIONS);
                        eo.samples = (size_t)lv;
                        eval_opt = true;
                        break;
                case 'D':
                        if (cli_parse_int(optarg, 0, 2147483647, &lv) < 0)
                                return cli_usage_error("smoke", "invalid --seed '%s'", optarg);
                        eo.seed = (uint64_t)lv;
                        eval_opt = true;
                        break;
                case 'C':
                        if (cli_parse_int(optarg, 1, EVAL_MAX_CONCURRENCY, &lv) < 0)
                                return cli_usage_error("smoke", "invalid --concurrency '%s' (1 to %d)", optarg,
                                                       EVAL_MAX_CONCURRENCY);
                        eo.concurrency = (int)lv;
                        eval_opt = true;
                        break;
                case 'M':
                        if (cli_parse_int(optarg, 1, 1000000, &lv) < 0)
                                return cli_usage_error("smoke", "invalid --max-tokens '%s'", optarg);
                        eo.max_tokens = (int)lv;
                        eval_opt = true;
                        break;
                case 'T':
                        if (strcmp(optarg, "on") == 0)
                                eo.thinking = THINKING_ON;
                        else if (strcmp(optarg, "off") == 0)
                                eo.thinking = THINKING_OFF;
                        else
                                return cli_usage_error("smoke", "invalid --thinking '%s' (on or off)", optarg);
                        eval_opt = true;
                        break;
                case 'L':
                        eo.logprobs = false;
                        eval_opt = true;
                        break;
                case 'P':
                        if (strcmp(optarg, "all") == 0 || strcmp(optarg, "none") == 0) {
                                for (int k = 0; k < _PROBE_MAX; k++)
                                        po.on[k] = optarg[0] == 'a';
                                break;
                        }
                        for (int k = 0; k < _PROBE_MAX; k++)
                                po.on[k] = false;
                        for (const char *p = optarg; *p;) {
                                size_t k = strcspn(p, ",");
                                _cleanup_free_ char *name = strndup(p, k);
                                int kind = name ? probe_from_name(name) : -EINVAL;
                                if (kind < 0)
                                        return cli_usage_error("smoke", "unknown probe '%s' in --probes (all, none, or "
                                                                        "long-context,sampling,multi-turn)", name ? name : "?");
                                po.on[kind] = true;
                                p += k + (p[k] == ',');
                        }
                        break;
                case 1001: {
                        char *end;
                        errno = 0;
                        double d = strtod(optarg, &end);
                        if (errno || end == optarg || *end || !(d > 0) || d > 1)
                                return cli_usage_error("smoke", "invalid --long-context-share '%s' (above 0, at most 1)",
                                                       optarg);
                        po.long_context.share = d;
                        break;
                }
                case 1002:
                        if (cli_parse_int(optarg, PROBES_MIN_FILLER_TOKENS, PROBES_MAX_LC_MAX_TOKENS, &lv) < 0)
                                return cli_usage_error("smoke", "invalid --long-context-max-tokens '%s' (%d to %d)", optarg,
                                                       PROBES_MIN_FILLER_TOKENS, PROBES_MAX_LC_MAX_TOKENS);
                        po.long_context.max_tokens = (int)lv;
                        break;
                case 1003:
                        if (parse_duration(optarg, &po.long_context.timeout) < 0 || po.long_context.timeout == 0)
                                return cli_usage_error("smoke", "invalid --long-context-timeout '%s' (try 30s, 5m)", optarg);
                        break;
                case 1004:
                        if (cli_parse_int(optarg, 1, PROBES_MAX_CONTEXT, &lv) < 0)
                                return cli_usage_error("smoke", "invalid --context '%s' (1 to %lld tokens)", optarg,
                                                       (long long)PROBES_MAX_CONTEXT);
                        po.long_context.context = lv;
                        break;
                case 1005:
                        if (cli_parse_int(optarg, 1, PROBES_MAX_RUNS, &lv) < 0)
                                return cli_usage_error("smoke", "invalid --sampling-runs '%s' (1 to %d)", optarg,
                                                       PROBES_MAX_RUNS);
                        po.sampling.runs = (int)lv;
                        break;
                case 1006:
                        if (cli_parse_int(optarg, 1, PROBES_MAX_RUNS, &lv) < 0)
                                return cli_usage_error("smoke", "invalid --sampling-min-right '%s' (1 to %d)", optarg,
                                                       PROBES_MAX_RUNS);
                        po.sampling.min_right = (int)lv;
                        min_right_set = true;
                        break;
                case 1007:
                        if (cli_parse_int(optarg, 0, 2147483647, &lv) < 0)
                                return cli_usage_error("smoke", "invalid --probe-seed '%s'", optarg);
                        po.seed = (uint64_t)lv;
                        break;
                case 'h':
                        help();
                        return EXIT_OK;
                default:
                        return cli_bad_option("smoke", c, argv);
                }
        }
        if (optind < argc)
                return cli_usage_error("smoke", "unexpected argument '%s'", argv[optind]);
        if (!url)
                return cli_usage_error("smoke", "--url is required");
        if (!min_right_set)
                po.sampling.min_right = (po.sampling.runs * PROBES_DEFAULT_MIN_RIGHT + PROBES_DEFAULT_RUNS - 1) /
                                        PROBES_DEFAULT_RUNS;
        else if (po.sampling.min_right > po.sampling.runs)
                return cli_usage_error("smoke", "--sampling-min-right %d is more than --sampling-runs %d",
                                       po.sampling.min_right, po.sampling.runs);
        /* the URL as printed: credentials in it (http://user:pass@host) masked */
        _cleanup_free_ char *shown_url = secrets_mask_url(url);
        if (!shown_url) {
                cli_error("out of memory");
                return EXIT_USAGE;
        }
        if (!cli_valid_url(url))
                return cli_usage_error("smoke", "invalid --url '%s' (want http://HOST:PORT)", shown_url);
        if (eval_opt && !eval_src)
                return cli_usage_error("smoke", "--samples, --seed, --concurrency, --max-tokens, --thinking and "
                                                "--no-logprobs go with --eval");
        _cleanup_(eval_set_release) struct eval_set eval_set = {0};
        if (eval_src) {
                int r = 0;
                _cleanup_free_ char *err = NULL;
                if (strcmp(eval_src, "builtin") == 0 || startswith(eval_src, "builtin:")) {
                        for (const char *p = eval_src[7] == ':' ? eval_src + 8 : ""; *p;) {
                                size_t k = strcspn(p, ",");
                                _cleanup_free_ char *name = strndup(p, k);
                                int b = name ? eval_builtin_from_name(name) : -1;
                                if (b < 0)
                                        return cli_usage_error("smoke", "unknown built-in eval set '%s' (products, sums, "
                                                                        "letters, sort, copy)", name ? name : "?");
                                eo.builtins |= 1u << b;
                                p += k + (p[k] == ',');
                        }
                        r = eval_set_builtin(&eo, &eval_set);
                } else {
                        struct check_spec *q = NULL;
                        size_t nq = 0;
                        if (!(eo.file = strdup(eval_src)))
                                r = -ENOMEM;
                        if (r >= 0 && (r = suite_load_jsonl(eval_src, &q, &nq, &err)) < 0) {
                                cli_error("%s", err ? err : strerror(-r));
                                return EXIT_USAGE;
                        }
                        if (r >= 0)
                                r = eval_set_from_specs(&eo, q, nq, &eval_set);
                }
                if (r < 0) {
                        cli_error("cannot build the eval: %s", strerror(-r));
                        return EXIT_FAILED;
                }
        }
        const struct profile *profile = NULL;
        if (engine) {
                profile = profile_find(engine);
                if (!profile)
                        return cli_usage_error("smoke", "unknown --engine '%s'", engine);
        }

        struct check_spec *specs = NULL;
        size_t n_specs = 0;
        int r;
        if (checks_file) {
                _cleanup_free_ char *err = NULL;
                r = suite_load_checks_file(checks_file, &specs, &n_specs, &err);
                if (r < 0) {
                        if (err)
                                cli_error("%s", err);
                        else
                                cli_error("cannot load '%s': %s", checks_file, strerror(-r));
                        return EXIT_USAGE;
                }
        } else {
                r = checks_default_suite(&specs, &n_specs);
                if (r < 0) {
                        cli_error("cannot build the smoke suite: %s", strerror(-r));
                        return EXIT_FAILED;
                }
        }

        int status = EXIT_FAILED;
        _cleanup_loop_ struct loop *l = NULL;
        struct check_result *results = NULL, *eval_results = NULL;
        size_t n_results = 0;
        _cleanup_free_ char *used_model = NULL, *eval_why = NULL;
        r = loop_new(&l);
        if (r < 0) {
                cli_error("cannot create the event loop: %s", strerror(-r));
                goto finish;
        }
        r = loop_catch_signals(l);
        if (r < 0) {
                cli_error("cannot catch signals: %s", strerror(-r));
                goto finish;
        }
        struct checks_target target = {
                .base_url = url,
                .model = model,
                .profile = profile,
                .thinking_key = thinking_key,
                .request_timeout = timeout,
                .ret_model = &used_model,
        };
        r = checks_run(l, &target, specs, n_specs, &results, &n_results);
        if (r == -ENOMEM) {
                cli_error("out of memory");
                goto finish;
        }

        /* The probes, after a suite that passed (as in a sweep). */
        if (r == 0 && probes_any(&po) && checks_summarize(results, n_results, NULL, NULL) == VERDICT_PASS) {
                struct checks_target pt = target;
                pt.model = model ? model : used_model;
                pt.ret_model = NULL;
                struct check_result *pr = NULL;
                size_t n_pr = 0;
                r = probes_run(l, &pt, &po, specs, n_specs, results, n_results, &pr, &n_pr);
                if (r == -ENOMEM) {
                        cli_error("out of memory");
                        goto finish;
                }
                struct check_result *all = n_pr ? realloc(results, (n_results + n_pr) * sizeof(*all)) : results;
                if (!all) {
                        checks_free_results(pr, n_pr);
                        cli_error("out of memory");
                        goto finish;
                }
                if (n_pr)
                        memcpy(all + n_results, pr, n_pr * sizeof(*pr));
                free(pr);
                results = all;
                n_results += n_pr;
        }

        const char *cause = NULL, *evidence = NULL;
        enum verdict v = checks_summarize(results, n_results, &cause, &evidence);
        bool interrupted = r == -EINTR || r == -ECANCELED;
        bool down = !interrupted && unreachable(results, n_results);
        if (down) {
                v = VERDICT_ERROR;
                cause = "unreachable";
                evidence = http_strerror(results[0].transport_error);
        } else if (interrupted) {
                v = VERDICT_ERROR;
                cause = "interrupted";
                evidence = loop_signal(l) ? strsignal(loop_signal(l)) : "cancelled";
        }

        /* The eval, after a suite that passed: as in a sweep, a server that fails the
         * smoke suite is not worth a batch of questions. */
        struct eval_outcome ev = {.set = eval_src ? &eval_set : NULL, .o = &eo};
        if (eval_src && v != VERDICT_PASS)
                ev.skipped = "the smoke suite did not pass";
        else if (eval_src) {
                target.model = model ? model : used_model;
                target.ret_model = NULL;
                usec_t t0 = now_usec();
                r = eval_run(l, &target, &eval_set, &eo, &eval_results);
                ev.wall = now_usec() - t0;
                if (r == -ENOMEM) {
                        cli_error("out of memory");
                        goto finish;
                }
                if (r == -EINTR || r == -ECANCELED) {
                        interrupted = true;
                        v = VERDICT_ERROR;
                        cause = "interrupted";
                        evidence = loop_signal(l) ? strsignal(loop_signal(l)) : "cancelled";
                }
                if (eval_results) {
                        ev.r = eval_results;
                        eval_figures_of(eval_results, eval_set.n, &ev.fig);
                        for (size_t i = 0; i < eval_set.n && !interrupted; i++)
                                if (eval_results[i].verdict == VERDICT_TIMEOUT) {
                                        v = VERDICT_TIMEOUT;
                                        cause = "request";
                                        eval_why = strdup_printf("eval question %s: %s", eval_results[i].name,
                                                                 eval_results[i].evidence ? eval_results[i].evidence : "");
                                        evidence = eval_why;
                                        break;
                                }
                }
        }

        if (format == 1) {
                r = print_json(shown_url, model ? model : used_model, v, cause, evidence, results, n_results, &ev);
                if (r < 0) {
                        cli_error("cannot format the results: %s", strerror(-r));
                        goto finish;
                }
        } else {
                print_text(model ? model : used_model, v, cause, evidence, results, n_results);
                print_eval_text(&ev);
        }

        if (down)
                cli_error("cannot reach '%s': %s", shown_url, evidence);
        else if (interrupted)
                cli_error("interrupted (%s): %zu of the checks ran", evidence, n_results);
        status = v == VERDICT_PASS ? EXIT_OK : EXIT_FAILED;
finish:
        checks_free_results(eval_results, eval_results ? eval_set.n : 0);
        checks_free_results(results, n_results);
        checks_free_suite(specs, n_specs);
        return status;
}
