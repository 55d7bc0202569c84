/* cli_smoke.c -- `gauntlet smoke`: the smoke suite against a running server. */
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

#include "gate/checks.h"
#include "cli/cli.h"
#include "cli/cli_options.h"
#include "config/options.h"
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
               "  --format text|json  (default text)\n");
        for (size_t i = 0; i < options_table_n; i++)
                if (options_takes(&options_table[i], OC_SMOKE))
                        cli_option_help(&options_table[i], 22);
        printf("  --probes WHICH      all (default), none, or a list: long-context,sampling,multi-turn\n"
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

/* What the command line asked for. */
struct smoke_args {
        const char *url, *model, *checks_file, *engine, *thinking_key, *eval_src;
        usec_t timeout;
        int format;                    /* 0 text, 1 json */
        struct eval_options eo;
        bool eval_opt;                 /* an eval flag other than --eval was given */
        struct probes_options po;
        bool min_right_set;
        bool help;
};

static void smoke_args_release(struct smoke_args *a) {
        eval_options_release(&a->eo);
}

/* The eval's flags, from the option table. Returns -1 to go on, or an exit code. */
static int set_eval_option(struct smoke_args *a, const struct option_def *d, const char *arg) {
        if (streq_ptr(d->name, "eval_file")) {
                a->eval_src = arg;
                return -1;
        }
        a->eval_opt = true;
        if (streq_ptr(d->name, "eval_thinking")) {
                if (strcmp(arg, "on") == 0)
                        a->eo.thinking = THINKING_ON;
                else if (strcmp(arg, "off") == 0)
                        a->eo.thinking = THINKING_OFF;
                else
                        return cli_option_error("smoke", d, arg);
                return -1;
        }
        if (options_parse_arg(d, arg ? arg : "", options_place(d, NULL, NULL, &a->eo)) < 0)
                return cli_option_error("smoke", d, arg);
        return -1;
}

/* --probes all|none|long-context,sampling,multi-turn */
static int set_probes(struct smoke_args *a, const char *arg) {
        if (strcmp(arg, "all") == 0 || strcmp(arg, "none") == 0) {
                for (int k = 0; k < _PROBE_MAX; k++)
                        a->po.on[k] = arg[0] == 'a';
                return -1;
        }
        for (int k = 0; k < _PROBE_MAX; k++)
                a->po.on[k] = false;
        for (const char *p = arg; *p;) {
                size_t k = strcspn(p, ",");
                _cleanup_free_ char *name = strndup(p, k);
                int kind = name ? probe_from_name(name) : -EINVAL;
                if (kind < 0)
                        return cli_usage_error("smoke", "unknown probe '%s' in --probes (all, none, or "
                                                        "long-context,sampling,multi-turn)", name ? name : "?");
                a->po.on[kind] = true;
                p += k + (p[k] == ',');
        }
        return -1;
}

/* The probes' own flags. Returns -1 to go on, or an exit code. */
static int set_probe_option(struct smoke_args *a, int c, const char *arg) {
        long lv;
        struct probes_options *po = &a->po;
        switch (c) {
        case 'P':
                return set_probes(a, arg);
        case 1: {
                char *end;
                errno = 0;
                double d = strtod(arg, &end);
                if (errno || end == arg || *end || !(d > 0) || d > 1)
                        return cli_usage_error("smoke", "invalid --long-context-share '%s' (above 0, at most 1)", arg);
                po->long_context.share = d;
                return -1;
        }
        case 2:
                if (cli_parse_int(arg, PROBES_MIN_FILLER_TOKENS, PROBES_MAX_LC_MAX_TOKENS, &lv) < 0)
                        return cli_usage_error("smoke", "invalid --long-context-max-tokens '%s' (%d to %d)", arg,
                                               PROBES_MIN_FILLER_TOKENS, PROBES_MAX_LC_MAX_TOKENS);
                po->long_context.max_tokens = (int)lv;
                return -1;
        case 3:
                if (parse_duration(arg, &po->long_context.timeout) < 0 || po->long_context.timeout == 0)
                        return cli_usage_error("smoke", "invalid --long-context-timeout '%s' (try 30s, 5m)", arg);
                return -1;
        case 4:
                if (cli_parse_int(arg, 1, PROBES_MAX_CONTEXT, &lv) < 0)
                        return cli_usage_error("smoke", "invalid --context '%s' (1 to %lld tokens)", arg,
                                               (long long)PROBES_MAX_CONTEXT);
                po->long_context.context = lv;
                return -1;
        case 5:
                if (cli_parse_int(arg, 1, PROBES_MAX_RUNS, &lv) < 0)
                        return cli_usage_error("smoke", "invalid --sampling-runs '%s' (1 to %d)", arg, PROBES_MAX_RUNS);
                po->sampling.runs = (int)lv;
                return -1;
        case 6:
                if (cli_parse_int(arg, 1, PROBES_MAX_RUNS, &lv) < 0)
                        return cli_usage_error("smoke", "invalid --sampling-min-right '%s' (1 to %d)", arg,
                                               PROBES_MAX_RUNS);
                po->sampling.min_right = (int)lv;
                a->min_right_set = true;
                return -1;
        case 7:
                if (cli_parse_int(arg, 0, 2147483647, &lv) < 0)
                        return cli_usage_error("smoke", "invalid --probe-seed '%s'", arg);
                po->seed = (uint64_t)lv;
                return -1;
        }
        return -1;
}

/* The suite's own flags. Returns -1 to go on, or an exit code. */
static int set_own_option(struct smoke_args *a, int c, const char *arg) {
        static const char *const formats[] = {"text", "json", NULL};
        switch (c) {
        case 'u':
                a->url = arg;
                break;
        case 'm':
                a->model = arg;
                break;
        case 'c':
                a->checks_file = arg;
                break;
        case 'e':
                a->engine = arg;
                break;
        case 'k':
                a->thinking_key = arg;
                if (!*arg)
                        return cli_usage_error("smoke", "--thinking-key must not be empty");
                break;
        case 't':
                if (parse_duration(arg, &a->timeout) < 0 || a->timeout == 0)
                        return cli_usage_error("smoke", "invalid --timeout '%s' (try 30s, 2m, 500ms)", arg);
                break;
        case 'f':
                a->format = cli_parse_choice(arg, formats);
                if (a->format < 0)
                        return cli_usage_error("smoke", "invalid --format '%s' (text or json)", arg);
                break;
        default:
                return set_probe_option(a, c, arg);
        }
        return -1;
}

/* The command line into a: the suite's and the probes' flags here, the eval's from the
 * option table. Returns -1 to go on, or an exit code. */
static int parse_flags(int argc, char **argv, struct smoke_args *a) {
        static const struct option own[] = {
                {"url", required_argument, NULL, 'u'},
                {"model", required_argument, NULL, 'm'},
                {"checks", required_argument, NULL, 'c'},
                {"engine", required_argument, NULL, 'e'},
                {"timeout", required_argument, NULL, 't'},
                {"thinking-key", required_argument, NULL, 'k'},
                {"format", required_argument, NULL, 'f'},
                {"probes", required_argument, NULL, 'P'},
                {"long-context-share", required_argument, NULL, 1},
                {"long-context-max-tokens", required_argument, NULL, 2},
                {"long-context-timeout", required_argument, NULL, 3},
                {"context", required_argument, NULL, 4},
                {"sampling-runs", required_argument, NULL, 5},
                {"sampling-min-right", required_argument, NULL, 6},
                {"probe-seed", required_argument, NULL, 7},
                {"help", no_argument, NULL, 'h'},
        };
        struct option opts[ELEMENTSOF(own) + 32] = {{0}};
        memcpy(opts, own, sizeof(own));
        cli_options_getopt(OC_SMOKE, opts + ELEMENTSOF(own), ELEMENTSOF(opts) - ELEMENTSOF(own));
        opterr = 0;
        optind = 1;
        for (;;) {
                int c = getopt_long(argc, argv, "+:h", opts, NULL);
                if (c < 0)
                        break;
                if (c == 'h') {
                        a->help = true;
                        return EXIT_OK;
                }
                if (c == '?' || c == ':')
                        return cli_bad_option("smoke", c, argv);
                int r = c >= CLI_OPTION_BASE ? set_eval_option(a, &options_table[CLI_OPTION_INDEX(c)], optarg)
                                             : set_own_option(a, c, optarg);
                if (r >= 0)
                        return r;
        }
        if (optind < argc)
                return cli_usage_error("smoke", "unexpected argument '%s'", argv[optind]);
        return -1;
}

/* What goes together, once every flag is read; *ret_shown_url: the URL as printed
 * (credentials in it, http://user:pass@host, masked). Returns -1 to go on, or an exit code. */
static int check_args(struct smoke_args *a, char **ret_shown_url) {
        struct probes_options *po = &a->po;
        if (!a->url)
                return cli_usage_error("smoke", "--url is required");
        if (!a->min_right_set)
                po->sampling.min_right = (po->sampling.runs * PROBES_DEFAULT_MIN_RIGHT + PROBES_DEFAULT_RUNS - 1) /
                                         PROBES_DEFAULT_RUNS;
        else if (po->sampling.min_right > po->sampling.runs)
                return cli_usage_error("smoke", "--sampling-min-right %d is more than --sampling-runs %d",
                                       po->sampling.min_right, po->sampling.runs);
        if (!(*ret_shown_url = secrets_mask_url(a->url))) {
                cli_error("out of memory");
                return EXIT_USAGE;
        }
        if (!cli_valid_url(a->url))
                return cli_usage_error("smoke", "invalid --url '%s' (want http://HOST:PORT)", *ret_shown_url);
        if (a->eval_opt && !a->eval_src)
                return cli_usage_error("smoke", "--samples, --seed, --concurrency, --max-tokens, --thinking and "
                                                "--no-logprobs go with --eval");
        return -1;
}

/* --eval's questions into set. Returns -1 to go on, or an exit code. */
static int load_eval(struct smoke_args *a, struct eval_set *set) {
        const char *src = a->eval_src;
        int r = 0;
        if (strcmp(src, "builtin") == 0 || startswith(src, "builtin:")) {
                for (const char *p = src[7] == ':' ? src + 8 : ""; *p;) {
                        size_t k = strcspn(p, ",");
                        _cleanup_free_ char *name = strndup(p, k);
                        int b = name ? eval_builtin_from_name(name) : -1;
                        if (b < 0)
                                return cli_usage_error("smoke", "unknown built-in eval set '%s' (products, sums, "
                                                                "letters, sort, copy)", name ? name : "?");
                        a->eo.builtins |= 1u << b;
                        p += k + (p[k] == ',');
                }
                r = eval_set_builtin(&a->eo, set);
        } else {
                struct check_spec *q = NULL;
                size_t nq = 0;
                _cleanup_free_ char *err = NULL;
                if (!(a->eo.file = strdup(src)))
                        r = -ENOMEM;
                if (r >= 0 && (r = suite_load_jsonl(src, &q, &nq, &err)) < 0) {
                        cli_error("%s", err ? err : strerror(-r));
                        return EXIT_USAGE;
                }
                if (r >= 0)
                        r = eval_set_from_specs(&a->eo, q, nq, set);
        }
        if (r < 0) {
                cli_error("cannot build the eval: %s", strerror(-r));
                return EXIT_FAILED;
        }
        return -1;
}

/* The check suite: --checks's file, or the built-in one. Returns -1 to go on, or an exit code. */
static int load_suite(const struct smoke_args *a, struct check_spec **specs, size_t *n_specs) {
        int r;
        if (a->checks_file) {
                _cleanup_free_ char *err = NULL;
                r = suite_load_checks_file(a->checks_file, specs, n_specs, &err);
                if (r < 0) {
                        if (err)
                                cli_error("%s", err);
                        else
                                cli_error("cannot load '%s': %s", a->checks_file, strerror(-r));
                        return EXIT_USAGE;
                }
        } else if ((r = checks_default_suite(specs, n_specs)) < 0) {
                cli_error("cannot build the smoke suite: %s", strerror(-r));
                return EXIT_FAILED;
        }
        return -1;
}

/* A run of the suite, the probes and the eval, and what the printers say of it. */
struct smoke_run {
        const struct smoke_args *a;
        struct loop *loop;
        struct checks_target target;
        struct check_spec *specs;
        size_t n_specs;
        struct check_result *results, *eval_results;
        size_t n_results;
        char *used_model, *eval_why;
        enum verdict v;
        const char *cause, *evidence;
        bool interrupted, down;
        struct eval_set eval_set;
        struct eval_outcome ev;
};

static void smoke_run_release(struct smoke_run *s) {
        checks_free_results(s->eval_results, s->eval_results ? s->eval_set.n : 0);
        checks_free_results(s->results, s->n_results);
        checks_free_suite(s->specs, s->n_specs);
        eval_set_release(&s->eval_set);
        free(s->used_model);
        free(s->eval_why);
        if (s->loop)
                loop_free(s->loop);
}

/* The probes, after a suite that passed (as in a sweep): their results after the suite's. */
static int run_probes(struct smoke_run *s) {
        struct checks_target pt = s->target;
        pt.model = s->a->model ? s->a->model : s->used_model;
        pt.ret_model = NULL;
        struct check_result *pr = NULL;
        size_t n_pr = 0;
        int r = probes_run(s->loop, &pt, &s->a->po, s->specs, s->n_specs, s->results, s->n_results, &pr, &n_pr);
        if (r == -ENOMEM)
                return r;
        struct check_result *all = n_pr ? realloc(s->results, (s->n_results + n_pr) * sizeof(*all)) : s->results;
        if (!all) {
                checks_free_results(pr, n_pr);
                return -ENOMEM;
        }
        if (n_pr)
                memcpy(all + s->n_results, pr, n_pr * sizeof(*pr));
        free(pr);
        s->results = all;
        s->n_results += n_pr;
        return r;
}

static void set_interrupted(struct smoke_run *s) {
        s->interrupted = true;
        s->v = VERDICT_ERROR;
        s->cause = "interrupted";
        s->evidence = loop_signal(s->loop) ? strsignal(loop_signal(s->loop)) : "cancelled";
}

/* The suite, then the probes; the verdict of both. Returns 0, or -ENOMEM. */
static int run_checks(struct smoke_run *s) {
        int r = checks_run(s->loop, &s->target, s->specs, s->n_specs, &s->results, &s->n_results);
        if (r == -ENOMEM)
                return r;
        if (r == 0 && probes_any(&s->a->po) &&
            checks_summarize(s->results, s->n_results, NULL, NULL) == VERDICT_PASS && (r = run_probes(s)) == -ENOMEM)
                return r;
        s->v = checks_summarize(s->results, s->n_results, &s->cause, &s->evidence);
        bool interrupted = r == -EINTR || r == -ECANCELED;
        s->down = !interrupted && unreachable(s->results, s->n_results);
        if (s->down) {
                s->v = VERDICT_ERROR;
                s->cause = "unreachable";
                s->evidence = http_strerror(s->results[0].transport_error);
        } else if (interrupted)
                set_interrupted(s);
        return 0;
}

/* The eval, after a suite that passed: as in a sweep, a server that fails the smoke suite
 * is not worth a batch of questions. Returns 0, or -ENOMEM. */
static int run_eval(struct smoke_run *s) {
        const struct smoke_args *a = s->a;
        s->ev = (struct eval_outcome){.set = a->eval_src ? &s->eval_set : NULL, .o = &a->eo};
        if (!a->eval_src)
                return 0;
        if (s->v != VERDICT_PASS) {
                s->ev.skipped = "the smoke suite did not pass";
                return 0;
        }
        s->target.model = a->model ? a->model : s->used_model;
        s->target.ret_model = NULL;
        usec_t t0 = now_usec();
        int r = eval_run(s->loop, &s->target, &s->eval_set, &a->eo, &s->eval_results);
        s->ev.wall = now_usec() - t0;
        if (r == -ENOMEM)
                return r;
        if (r == -EINTR || r == -ECANCELED)
                set_interrupted(s);
        if (!s->eval_results)
                return 0;
        s->ev.r = s->eval_results;
        eval_figures_of(s->eval_results, s->eval_set.n, &s->ev.fig);
        for (size_t i = 0; i < s->eval_set.n && !s->interrupted; i++)
                if (s->eval_results[i].verdict == VERDICT_TIMEOUT) {
                        s->v = VERDICT_TIMEOUT;
                        s->cause = "request";
                        s->eval_why = strdup_printf("eval question %s: %s", s->eval_results[i].name,
                                                    s->eval_results[i].evidence ? s->eval_results[i].evidence : "");
                        s->evidence = s->eval_why;
                        break;
                }
        return 0;
}

/* The results on stdout, what went wrong on stderr; the exit code. */
static int print_run(const struct smoke_run *s, const char *shown_url) {
        const char *model = s->a->model ? s->a->model : s->used_model;
        if (s->a->format == 1) {
                int r = print_json(shown_url, model, s->v, s->cause, s->evidence, s->results, s->n_results, &s->ev);
                if (r < 0) {
                        cli_error("cannot format the results: %s", strerror(-r));
                        return EXIT_FAILED;
                }
        } else {
                print_text(model, s->v, s->cause, s->evidence, s->results, s->n_results);
                print_eval_text(&s->ev);
        }
        if (s->down)
                cli_error("cannot reach '%s': %s", shown_url, s->evidence);
        else if (s->interrupted)
                cli_error("interrupted (%s): %zu of the checks ran", s->evidence, s->n_results);
        return s->v == VERDICT_PASS ? EXIT_OK : EXIT_FAILED;
}

/* The run, once the arguments are checked and the eval's questions built. */
static int smoke_main(struct smoke_run *s, const char *shown_url) {
        const struct smoke_args *a = s->a;
        const struct profile *profile = NULL;
        if (a->engine && !(profile = profile_find(a->engine)))
                return cli_usage_error("smoke", "unknown --engine '%s'", a->engine);
        int r = load_suite(a, &s->specs, &s->n_specs);
        if (r >= 0)
                return r;
        if ((r = loop_new(&s->loop)) < 0) {
                cli_error("cannot create the event loop: %s", strerror(-r));
                return EXIT_FAILED;
        }
        if ((r = loop_catch_signals(s->loop)) < 0) {
                cli_error("cannot catch signals: %s", strerror(-r));
                return EXIT_FAILED;
        }
        s->target = (struct checks_target){
                .base_url = a->url,
                .model = a->model,
                .profile = profile,
                .thinking_key = a->thinking_key,
                .request_timeout = a->timeout,
                .ret_model = &s->used_model,
        };
        if (run_checks(s) < 0 || run_eval(s) < 0) {
                cli_error("out of memory");
                return EXIT_FAILED;
        }
        return print_run(s, shown_url);
}

int cli_smoke(int argc, char **argv) {
        _cleanup_(smoke_args_release) struct smoke_args a = {.timeout = SMOKE_DEFAULT_TIMEOUT};
        eval_options_init(&a.eo);
        probes_options_init(&a.po);
        int r = parse_flags(argc, argv, &a);
        if (a.help) {
                help();
                return EXIT_OK;
        }
        if (r >= 0)
                return r;
        _cleanup_free_ char *shown_url = NULL;
        if ((r = check_args(&a, &shown_url)) >= 0)
                return r;
        _cleanup_(smoke_run_release) struct smoke_run s = {.a = &a};
        if (a.eval_src && (r = load_eval(&a, &s.eval_set)) >= 0)
                return r;
        return smoke_main(&s, shown_url);
}
