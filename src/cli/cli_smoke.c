/* cli_smoke.c -- `gauntlet smoke`: the smoke suite against a running server. */
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>

#include "checks.h"
#include "cli.h"
#include "text.h"
#include "http.h"
#include "loop.h"
#include "suite.h"
#include "profile.h"

#define SMOKE_DEFAULT_TIMEOUT (5 * 60 * USEC_PER_SEC)

static void help(void) {
        printf("usage: gauntlet smoke --url URL [--model NAME] [--checks FILE] [--engine NAME]\n"
               "                      [--timeout DUR] [--thinking-key KEY] [--format text|json]\n\n"
               "Asks a running OpenAI-compatible server questions with known answers and judges\n"
               "every output for garbage: the model list answers, \"Reply with exactly: OK\",\n"
               "17 * 19 with thinking off and on, each streamed and not.\n\n"
               "  --url URL           the server, e.g. http://127.0.0.1:30000\n"
               "  --model NAME        the model to ask (default: the first from /v1/models)\n"
               "  --checks FILE       a YAML check suite instead of the built-in one\n"
               "  --engine NAME       sglang, vllm, trtllm, llama.cpp, generic: where reasoning is\n"
               "                      read from, the thinking switch, whether a seed is sent\n"
               "  --timeout DUR       per request (default 5m): 30s, 2m, 500ms\n"
               "  --thinking-key KEY  chat_template_kwargs key switching thinking\n"
               "                      (default enable_thinking; DeepSeek templates: thinking)\n"
               "  --format text|json  (default text)\n\n"
               "Exit status: 0 every check passed, 1 a check failed or the server is\n"
               "unreachable, 2 usage error.\n");
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

static int print_json(const char *url, const char *model, enum verdict v, const char *cause, const char *evidence,
                      const struct check_result *r, size_t n) {
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
                e |= json_array_append_new(checks, o);
        }
        e |= json_object_set_new(root, "checks", checks);
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

static const char *verdict_color(enum verdict v) {
        switch (v) {
        case VERDICT_PASS:
                return "\033[32m";
        case VERDICT_SKIPPED:
                return "\033[2m";
        default:
                return "\033[31m";
        }
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
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        static const char *const formats[] = {"text", "json", NULL};
        const char *url = NULL, *model = NULL, *checks_file = NULL, *engine = NULL, *thinking_key = NULL;
        usec_t timeout = SMOKE_DEFAULT_TIMEOUT;
        int format = 0;

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
        if (!cli_valid_url(url))
                return cli_usage_error("smoke", "invalid --url '%s' (want http://HOST:PORT)", url);
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
        struct check_result *results = NULL;
        size_t n_results = 0;
        _cleanup_free_ char *used_model = NULL;
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

        if (format == 1) {
                r = print_json(url, model ? model : used_model, v, cause, evidence, results, n_results);
                if (r < 0) {
                        cli_error("cannot format the results: %s", strerror(-r));
                        goto finish;
                }
        } else
                print_text(model ? model : used_model, v, cause, evidence, results, n_results);

        if (down)
                cli_error("cannot reach '%s': %s", url, evidence);
        else if (interrupted)
                cli_error("interrupted (%s): %zu of the checks ran", evidence, n_results);
        status = v == VERDICT_PASS ? EXIT_OK : EXIT_FAILED;
finish:
        checks_free_results(results, n_results);
        checks_free_suite(specs, n_specs);
        return status;
}
