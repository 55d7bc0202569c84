/* cli_bench.c -- `gauntlet bench`: load-test a running server, one level per concurrency. */
#include <assert.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "bench/bench.h"
#include "config/options.h"
#include "cli/cli_options.h"
#include "io/tokenizer.h"
#include "text/secrets.h"
#include "text/text.h"
#include "report/report.h"
#include "cli/cli.h"
#include "io/loop.h"
#include "base/metrics.h"
#include "run/phases.h"
#include "base/profile.h"

#define BENCH_MAX_LEVELS 64
#define BENCH_MAX_CONCURRENCY 100000
#define PROMPT_FILE_MAX ((size_t)64 << 20)
/* --output-tokens when a dataset other than random is named and it is not given: a custom
 * line without output_tokens asks for this many (vLLM's --custom-output-len default). */
#define BENCH_CLI_OUTPUT_TOKENS 256

static void dataset_freep(struct dataset **d) {
        dataset_free(*d);
}

static void help(void) {
        printf("usage: gauntlet bench --url URL --concurrency N[,N...] (--requests N | --duration DUR)\n"
               "                      --output-tokens N [OPTIONS] [DATASET OPTIONS]\n\n"
               "Streams requests to a running OpenAI-compatible server and measures TTFT, ITL,\n"
               "TPOT, end-to-end latency and throughput (definitions: docs/metrics.md).\n\n");
        bool workload = false;
        for (size_t i = 0; i < options_table_n; i++) {
                const struct option_def *d = &options_table[i];
                if (!options_takes(d, OC_BENCH))
                        continue;
                if (d->scope == OS_DATASET && !workload) {
                        printf("\nWorkload (the names and meanings of vllm bench serve; docs/bench.md \"Workloads\"):\n");
                        workload = true;
                }
                cli_option_help(d, 23);
        }
        printf("\nExit status: 0 requests completed, 1 every request failed or the bench could\n"
               "not run, 2 usage error.\n");
}

static int parse_levels(const char *s, int **ret, size_t *ret_n) {
        _cleanup_free_ char *copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        int *v = NULL;
        size_t n = 0;
        char *save = NULL;
        for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                long x;
                if (n >= BENCH_MAX_LEVELS || cli_parse_int(tok, 1, BENCH_MAX_CONCURRENCY, &x) < 0) {
                        free(v);
                        return -EINVAL;
                }
                int *nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv) {
                        free(v);
                        return -ENOMEM;
                }
                v = nv;
                v[n++] = (int)x;
        }
        if (n == 0)
                return -EINVAL;
        *ret = v;
        *ret_n = n;
        return 0;
}

/* One prompt per non-empty line; the text is data and goes to the server JSON-escaped. */
static int load_prompts(const char *path, char **ret_text, char ***ret) {
        char *text = NULL;
        int r = read_file_capped(path, PROMPT_FILE_MAX, &text, NULL);
        if (r < 0)
                return r;
        char **v = NULL;
        size_t n = 0;
        for (char *line = text, *next; line; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                if (!*line)
                        continue;
                char **nv = realloc(v, (n + 2) * sizeof(*v));
                if (!nv) {
                        free(v);
                        free(text);
                        return -ENOMEM;
                }
                v = nv;
                v[n++] = line;
                v[n] = NULL;
        }
        if (n == 0) {
                free(text);
                return -ENODATA;
        }
        *ret_text = text;
        *ret = v;
        return 0;
}

static void fmt_ms(char *b, size_t n, json_t *dist, const char *key) {
        json_t *v = json_object_get(dist, key);
        if (json_is_number(v))
                snprintf(b, n, "%.2f", json_number_value(v));
        else
                snprintf(b, n, "-");
}

static void print_text(json_t *levels) {
        printf("%6s %7s %7s %6s %10s %8s %9s %9s %8s %8s %8s %9s %5s\n", "conc", "reqs", "done", "fail",
               "out tok/s", "req/s", "ttft p50", "ttft p99", "itl p50", "itl p99", "tpot p50", "e2e p50", "cpu");
        size_t i;
        json_t *lv;
        json_array_foreach(levels, i, lv) {
                char t50[32], t99[32], i50[32], i99[32], p50[32], e50[32];
                fmt_ms(t50, sizeof(t50), json_object_get(lv, metric_key(METRIC_TTFT_MS)), metric_stat_key(METRIC_STAT_P50));
                fmt_ms(t99, sizeof(t99), json_object_get(lv, metric_key(METRIC_TTFT_MS)), metric_stat_key(METRIC_STAT_P99));
                fmt_ms(i50, sizeof(i50), json_object_get(lv, metric_key(METRIC_ITL_MS)), metric_stat_key(METRIC_STAT_P50));
                fmt_ms(i99, sizeof(i99), json_object_get(lv, metric_key(METRIC_ITL_MS)), metric_stat_key(METRIC_STAT_P99));
                fmt_ms(p50, sizeof(p50), json_object_get(lv, metric_key(METRIC_TPOT_MS)), metric_stat_key(METRIC_STAT_P50));
                fmt_ms(e50, sizeof(e50), json_object_get(lv, metric_key(METRIC_E2E_MS)), metric_stat_key(METRIC_STAT_P50));
                printf("%6lld %7lld %7lld %6lld %10.1f %8.2f %9s %9s %8s %8s %8s %9s %4.0f%%\n",
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))),
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_REQUESTS))),
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_COMPLETED))),
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_FAILED))),
                       json_number_value(json_object_get(lv, metric_key(METRIC_OUTPUT_TOKENS_PER_S))),
                       json_number_value(json_object_get(lv, metric_key(METRIC_REQUESTS_PER_S))), t50, t99, i50,
                       i99, p50, e50,
                       100 * json_number_value(json_object_get(json_object_get(lv, metric_key(METRIC_CLIENT_CPU)),
                                                               metric_key(METRIC_CPU_CORES))));
        }
        printf("(latencies in ms; definitions in docs/metrics.md)\n");
        /* where the prompts came from, unless the plain synthetic ones */
        json_t *wl = json_object_get(json_array_get(levels, 0), metric_key(METRIC_WORKLOAD));
        const char *ds = json_string_value(json_object_get(wl, "dataset"));
        json_t *in = json_object_get(wl, "input_tokens"), *out = json_object_get(wl, "output_tokens");
        char inputs[96] = "input not measured";
        if (in)
                snprintf(inputs, sizeof(inputs), "input %lld-%lld tokens (%s)",
                         (long long)json_integer_value(json_object_get(in, "min")),
                         (long long)json_integer_value(json_object_get(in, "max")),
                         json_string_value(json_object_get(in, "as")));
        if (ds && (strcmp(ds, "random") != 0 || json_object_get(wl, "range_ratio")))
                printf("workload: %s, %lld prompts; %s, output %lld-%lld; arrivals %s\n", ds,
                       (long long)json_integer_value(json_object_get(wl, "prompts")), inputs,
                       (long long)json_integer_value(json_object_get(out, "min")),
                       (long long)json_integer_value(json_object_get(out, "max")),
                       json_string_value(json_object_get(wl, "arrivals")));
        json_array_foreach(levels, i, lv) {
                _cleanup_free_ char *server = report_server_line(lv);
                _cleanup_free_ char *shown = server ? text_clean(server, strlen(server), 4096) : NULL;
                if (shown)
                        printf("server: concurrency %lld: %s\n",
                               (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))), shown);
                json_t *se = json_object_get(lv, metric_key(METRIC_SESSIONS));
                if (se)
                        printf("sessions: concurrency %lld: %lld started, %lld completed, %lld ended by a failed turn, "
                               "%lld cut; %lld turns\n",
                               (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))),
                               (long long)json_integer_value(json_object_get(se, "started")),
                               (long long)json_integer_value(json_object_get(se, "completed")),
                               (long long)json_integer_value(json_object_get(se, "ended_by_failure")),
                               (long long)json_integer_value(json_object_get(se, "cut")),
                               (long long)json_integer_value(json_object_get(se, "turns")));
        }
        json_array_foreach(levels, i, lv) {
                json_t *cpu = json_object_get(lv, metric_key(METRIC_CLIENT_CPU));
                if (json_is_true(json_object_get(cpu, metric_key(METRIC_CPU_BOUND))))
                        printf("client-bound: concurrency %lld: the busiest of %lld thread(s) used %.0f%% of a core, "
                               "send delay p50 %.3f ms: the figures include the client's own delay\n",
                               (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))),
                               (long long)json_integer_value(json_object_get(cpu, metric_key(METRIC_CPU_THREADS))),
                               100 * json_number_value(json_object_get(cpu, metric_key(METRIC_CPU_LOOP_CORES_MAX))),
                               json_number_value(json_object_get(json_object_get(lv, metric_key(METRIC_SEND_DELAY_MS)),
                                                                 metric_stat_key(METRIC_STAT_P50))));
        }
        json_array_foreach(levels, i, lv) {
                json_int_t flagged = json_integer_value(json_object_get(lv, metric_key(METRIC_OUTPUTS_FLAGGED)));
                json_t *first = json_array_get(json_object_get(lv, metric_key(METRIC_FLAGGED)), 0);
                printf("outputs: concurrency %lld: %lld judged, %lld flagged",
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))),
                       (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_OUTPUTS_JUDGED))),
                       (long long)flagged);
                if (flagged > 0 && first)
                        printf(" (%s); first: %s", json_string_value(json_object_get(first, "cause")),
                               json_string_value(json_object_get(first, "evidence")));
                printf("\n");
        }
        json_array_foreach(levels, i, lv) {
                size_t k;
                json_t *w;
                json_array_foreach(json_object_get(lv, metric_key(METRIC_WARNINGS)), k, w)
                        printf("warning: concurrency %lld: %s\n",
                               (long long)json_integer_value(json_object_get(lv, metric_key(METRIC_CONCURRENCY))),
                               json_string_value(w));
        }
}

/* What the command line asked for: the table's settings where they go, and the rest. */
struct bench_args {
        struct bench_target target;
        struct bench_spec spec;
        bool given[128];          /* by the table's index */
        const char *text[128];    /* the value as given */
        int *levels;              /* --concurrency, owned */
        const char *prompt_file, *samples_file, *engine, *dataset_path, *tokenizer_path;
        int format;               /* 0 text, 1 json */
        bool dataset_named;       /* a workload flag was given */
        bool requests_default;    /* --requests from the dataset's prompts */
        bool help;
};

static void bench_args_release(struct bench_args *a) {
        free(a->levels);
}

/* The table's OT_CUSTOM flags: each its own value. */
static int set_custom(struct bench_args *a, const struct option_def *d, const char *arg) {
        static const char *const formats[] = {"text", "json", NULL};
        if (streq_ptr(d->name, "concurrency")) {
                free(a->levels);
                a->levels = NULL;
                if (parse_levels(arg, &a->levels, &a->spec.n_concurrency) < 0)
                        return cli_usage_error("bench", "invalid --concurrency '%s' (want N[,N...], 1..%d)", arg,
                                               BENCH_MAX_CONCURRENCY);
        } else if (streq_ptr(d->name, "goodput")) {
                _cleanup_free_ char *why = NULL;
                if (bench_goodput_parse(arg, &a->target.slo_ttft, &a->target.slo_tpot, &a->target.slo_e2el, &why) < 0)
                        return cli_usage_error("bench", "invalid --goodput: %s", why ? why : "out of memory");
        } else if (streq_ptr(d->name, "format")) {
                if ((a->format = cli_parse_choice(arg, formats)) < 0)
                        return cli_usage_error("bench", "invalid --format '%s' (text or json)", arg);
        } else if (streq_ptr(d->name, "engine"))
                a->engine = arg;
        else if (streq_ptr(d->name, "prompt_file"))
                a->prompt_file = arg;
        else if (streq_ptr(d->name, "samples"))
                a->samples_file = arg;
        else if (streq_ptr(d->name, "tokenizer"))
                a->tokenizer_path = arg;
        else if (streq_ptr(d->name, "dataset_path"))
                a->dataset_path = arg;
        return -1;
}

/* One flag of the table into a. Returns -1 to go on, or an exit code. */
static int set_option(struct bench_args *a, size_t idx, const char *arg) {
        const struct option_def *d = &options_table[idx];
        a->given[idx] = true;
        a->text[idx] = arg;
        if (d->flags & OF_WORKLOAD)
                a->dataset_named = true;
        if (d->type == OT_CUSTOM)
                return set_custom(a, d, arg);
        if (options_parse_arg(d, arg ? arg : "", options_place(d, &a->spec, &a->target, NULL)) == 0)
                return -1;
        return cli_option_error("bench", d, arg);
}

/* The command line into a, its flags from the table. Returns -1 to go on, or an exit code. */
static int parse_flags(int argc, char **argv, struct bench_args *a) {
        struct option opts[ELEMENTSOF(a->given) + 1] = {{0}};
        assert(options_table_n < ELEMENTSOF(a->given));
        size_t n = cli_options_getopt(OC_BENCH, opts, ELEMENTSOF(opts));
        opts[n] = (struct option){"help", no_argument, NULL, 'h'};
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
                if (c < CLI_OPTION_BASE)
                        return cli_bad_option("bench", c, argv);
                int r = set_option(a, CLI_OPTION_INDEX(c), optarg);
                if (r >= 0)
                        return r;
        }
        if (optind < argc)
                return cli_usage_error("bench", "unexpected argument '%s'", argv[optind]);
        return -1;
}

static bool given(const struct bench_args *a, const char *name, const char **ret_text) {
        for (size_t i = 0; i < options_table_n; i++)
                if (streq_ptr(options_table[i].name, name) && a->given[i]) {
                        if (ret_text)
                                *ret_text = a->text[i];
                        return true;
                }
        return false;
}

/* The checks across flags, once all are in. Returns -1 to go on, or an exit code. */
static int check_args(struct bench_args *a, char **path_copy) {
        struct bench_spec *spec = &a->spec;
        if (!a->target.base_url)
                return cli_usage_error("bench", "--url is required");
        if (!cli_valid_url(a->target.base_url)) {
                /* a URL refused is shown as smoke shows one: its credentials masked */
                _cleanup_free_ char *shown = secrets_mask_url(a->target.base_url);
                if (!shown) {
                        cli_error("out of memory");
                        return EXIT_FAILED;
                }
                return cli_usage_error("bench", "invalid --url '%s' (want http://HOST:PORT)", shown);
        }
        /* a burstiness is a shape of gamma arrivals, Poisson's among them */
        if (given(a, "burstiness", NULL))
                spec->poisson = true;
        usec_t timeout = a->target.request_timeout ? a->target.request_timeout : BENCH_DEFAULT_TIMEOUT;
        /* the open loop's gap (1/rate): longer than a request may take, the level would wait
         * that long between sends and measure next to nothing */
        const char *rate_text = NULL;
        if (!given(a, "rate", &rate_text))
                given(a, "request_rate", &rate_text);
        if (spec->rate > 0 && 1.0 / spec->rate > (double)timeout / USEC_PER_SEC) {
                char t[32];
                return cli_usage_error("bench", "--rate %s is one request every %.3gs, longer than the request timeout (%s)",
                                       rate_text, 1.0 / spec->rate, format_duration(timeout, t));
        }
        enum dataset_kind kind = spec->dataset.kind;
        if (given(a, "trace_unit", NULL) && kind != DATASET_TRACE)
                return cli_usage_error("bench", "--trace-unit goes with --dataset-name trace");
        if (a->dataset_named && a->prompt_file)
                return cli_usage_error("bench", "give --prompt-file or a dataset, not both");
        /* spec.dataset owns its path: the caller does, for it */
        if (a->dataset_path && !(*path_copy = strdup(a->dataset_path))) {
                cli_error("out of memory");
                return EXIT_FAILED;
        }
        spec->dataset.path = *path_copy;
        const char *bad = dataset_options_check(&spec->dataset);
        if (bad)
                return cli_usage_error("bench", "--dataset-name %s: %s", dataset_kind_name(kind), bad);
        a->requests_default = a->dataset_named && spec->requests == 0 && spec->duration == 0;
        if (a->requests_default)
                spec->requests = spec->dataset.num_prompts > 0 ? spec->dataset.num_prompts : DATASET_DEFAULT_PROMPTS;
        if ((spec->requests > 0) == (spec->duration > 0))
                return cli_usage_error("bench", "give one of --requests and --duration");
        /* the datasets other than random say their own output lengths; custom's lines may not */
        if (spec->output_tokens == 0 && kind != DATASET_RANDOM)
                spec->output_tokens = BENCH_CLI_OUTPUT_TOKENS;
        if (spec->output_tokens == 0)
                return cli_usage_error("bench", "--output-tokens is required");
        if (kind == DATASET_MULTI_TURN && !spec->chat)
                return cli_usage_error("bench", "--dataset-name multi_turn sends conversations: it needs --endpoint chat");
        if (kind == DATASET_TRACE && spec->rate > 0)
                return cli_usage_error("bench", "--dataset-name trace: the trace says when requests go; give no --rate "
                                       "(--trace-speed scales its times)");
        if (spec->poisson && spec->rate == 0)
                return cli_usage_error("bench", "--%s needs --rate", spec->burstiness > 0 ? "burstiness" : "poisson");
        if (a->engine && !(a->target.profile = profile_find(a->engine)))
                return cli_usage_error("bench", "unknown --engine '%s'", a->engine);
        static int one = 1;
        spec->concurrency = a->levels ? a->levels : &one;
        if (!a->levels)
                spec->n_concurrency = 1;
        return -1;
}

/* The prompts of --prompt-file, or the dataset's file, read and checked before any request. */
static int load_inputs(struct bench_args *a, char **ret_text, char ***ret_prompts, struct dataset **ret_data) {
        int r;
        if (a->prompt_file) {
                r = load_prompts(a->prompt_file, ret_text, ret_prompts);
                if (r < 0) {
                        cli_error("cannot read prompts from '%s': %s", a->prompt_file,
                                  r == -ENODATA ? "no prompt in it" : file_strerror(r));
                        return EXIT_USAGE;
                }
                a->target.prompts = (const char *const *)*ret_prompts;
        }
        if (dataset_has_file(&a->spec.dataset)) {
                _cleanup_free_ char *err = NULL;
                r = dataset_load(a->spec.dataset.kind, a->spec.dataset.path, ret_data, &err);
                if (r < 0) {
                        cli_error("%s", err ? err : strerror(-r));
                        return EXIT_USAGE;
                }
                a->spec.data = *ret_data;
                dataset_trace_apply_unit(*ret_data, &a->spec.dataset);
                _cleanup_free_ char *why = NULL;
                if ((r = dataset_trace_check(*ret_data, &a->spec.dataset, a->target.request_timeout ? a->target.request_timeout : BENCH_DEFAULT_TIMEOUT, &why)) < 0) {
                        cli_error("%s: %s", a->spec.dataset.path, why ? why : strerror(-r));
                        return EXIT_USAGE;
                }
                /* a trace's lines are its requests */
                if (a->spec.dataset.kind == DATASET_TRACE && a->requests_default)
                        a->spec.requests = (int)MIN((*ret_data)->n, a->spec.dataset.num_prompts > 0 ? (size_t)a->spec.dataset.num_prompts
                                                                                        : (*ret_data)->n);
        }

        return -1;
}

/* The samples file, the levels as text or JSON, and the exit status. */
static int print_result(const struct bench_args *a, json_t *levels, json_t *samples) {
        int status = EXIT_OK;
        if (a->samples_file) {
                if (json_dump_file(samples, a->samples_file, JSON_COMPACT | JSON_REAL_PRECISION(10)) < 0) {
                        cli_error("cannot write samples to '%s'", a->samples_file);
                        status = EXIT_FAILED;
                }
                json_decref(samples);
        }
        json_int_t completed = 0;
        size_t i;
        json_t *lv;
        json_array_foreach(levels, i, lv)
                completed += json_integer_value(json_object_get(lv, metric_key(METRIC_COMPLETED)));
        /* the bench's own outputs through the forced detectors: one flagged is garbage */
        struct phase_result verdict = {0};
        if (phases_gate_outputs(levels, &verdict) < 0) {
                cli_error("out of memory");
                return EXIT_FAILED;
        }
        bool garbage = verdict.step == STEP_DECIDED;
        /* nothing answered: no verdict at all, not a pass */
        const char *shown = garbage ? verdict_to_string(verdict.verdict) : completed > 0 ? "pass" : NULL;
        const char *cause = garbage ? verdict.cause : completed > 0 ? NULL : "no request completed";
        if (a->format == 1) {
                json_t *root = json_pack("{s:o, s:s?, s:s?, s:s?}", "bench", levels, "verdict", shown, "cause", cause,
                                         "evidence", verdict.evidence);
                if (!root) {
                        cli_error("out of memory");
                        return EXIT_FAILED;
                }
                char *s = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
                json_decref(root);
                if (!s) {
                        phase_result_release(&verdict);
                        cli_error("out of memory");
                        return EXIT_FAILED;
                }
                puts(s);
                free(s);
        } else {
                print_text(levels);
                if (shown)
                        printf("verdict: %s%s%s\n", shown, garbage ? "/" : "", garbage ? cause : "");
                else
                        printf("verdict: none (%s)\n", cause);
                json_decref(levels);
        }
        if (garbage) {
                cli_error("%s/%s: %s", verdict_to_string(verdict.verdict), verdict.cause, verdict.evidence);
                status = EXIT_FAILED;
        }
        phase_result_release(&verdict);
        if (completed == 0) {
                cli_error("no request completed");
                status = EXIT_FAILED;
        }
        return status;
}

/* The bench itself: the loop, the tokenizer, the levels. */
static int bench_main(struct bench_args *a) {
        _cleanup_free_ char *prompt_text = NULL;
        _cleanup_free_ char **prompts = NULL;
        _cleanup_(dataset_freep) struct dataset *data = NULL;
        int r = load_inputs(a, &prompt_text, &prompts, &data);
        if (r >= 0)
                return r;
        /* Every stream is a socket: take all the descriptors the hard limit allows. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                setrlimit(RLIMIT_NOFILE, &rl);
        }

        _cleanup_loop_ struct loop *l = NULL;
        r = loop_new(&l);
        if (r < 0) {
                cli_error("cannot create the event loop: %s", strerror(-r));
                return EXIT_FAILED;
        }
        r = loop_catch_signals(l);
        if (r < 0) {
                cli_error("cannot catch signals: %s", strerror(-r));
                return EXIT_FAILED;
        }
        _cleanup_(tokenizer_freep) struct tokenizer *tok = NULL;
        struct count_rule rule = {0};
        if (a->tokenizer_path) {
                _cleanup_free_ char *why = NULL;
                if ((r = tokenizer_open(a->tokenizer_path, &tok, &why)) < 0) {
                        cli_error("--tokenizer: %s", why ? why : strerror(-r));
                        return EXIT_USAGE;
                }
                rule.tokenizer = tok;
                rule.tokenizer_what = tokenizer_describe(tok);
                a->target.count = &rule;
        }
        json_t *levels = NULL, *samples = NULL;
        _cleanup_free_ char *refused = NULL;
        a->target.ret_error = &refused;
        r = bench_run(l, &a->target, &a->spec, &levels, a->samples_file ? &samples : NULL);
        if (r == -EMSGSIZE) {
                cli_error("%s", refused ? refused : "the bench cannot run against this server");
                return EXIT_FAILED;
        }
        if (r == -EINTR) {
                cli_error("interrupted");
                return EXIT_FAILED;
        }
        if (r < 0) {
                cli_error("bench failed: %s", strerror(-r));
                return EXIT_FAILED;
        }
        return print_result(a, levels, samples);
}

int cli_bench(int argc, char **argv) {
        _cleanup_(bench_args_release) struct bench_args a = {.spec = {.chat = true, .calibrate = true}};
        dataset_options_init(&a.spec.dataset);
        int r = parse_flags(argc, argv, &a);
        if (a.help) {
                help();
                return EXIT_OK;
        }
        if (r >= 0)
                return r;
        _cleanup_free_ char *path_copy = NULL;
        if ((r = check_args(&a, &path_copy)) >= 0)
                return r;
        return bench_main(&a);
}
