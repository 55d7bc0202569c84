/* cli_inspect.c -- `gauntlet inspect`: the garbage detectors on saved outputs. */
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <string.h>

#include "text/buf.h"
#include "cli/cli.h"
#include "gate/detect.h"

/* One output file is at most this big; a bigger one is refused (exit 2), not judged on a
 * part, so that a verdict always covers the whole file. */
#define INSPECT_MAX_FILE ((size_t)16 << 20)

static void inspect_help(void) {
        printf("usage: gauntlet inspect [FILE...] [--format text|json] [--finish-reason REASON]\n"
               "                        [--question TEXT]\n"
               "\n"
               "Runs the garbage detectors on saved outputs, one output per file (standard\n"
               "input when no FILE is given, or for '-'). Prints one line per file:\n"
               "  FILE: pass\n"
               "  FILE: garbage CAUSE: EVIDENCE\n"
               "\n"
               "options:\n"
               "  --format text|json       json prints {\"files\": [{\"file\", \"verdict\", \"cause\", \"evidence\"}]}\n"
               "  --finish-reason REASON   the finish_reason the server gave (e.g. length)\n"
               "  --question TEXT          what was asked: a whole answer of one short word said\n"
               "                           6-15 times is garbage unless it names the word or\n"
               "                           the count (without it such an answer passes)\n"
               "  -h, --help               this text\n"
               "\n"
               "Files larger than 16 MiB are refused. Exit status: 0 all clean, 1 any flagged,\n"
               "2 usage error or unreadable file.\n");
}

static int read_input(const char *path, char **ret, size_t *ret_len) {
        if (strcmp(path, "-") == 0)
                return read_fd_capped(STDIN_FILENO, INSPECT_MAX_FILE, ret, ret_len);
        return read_file_capped(path, INSPECT_MAX_FILE, ret, ret_len);
}

int cli_inspect(int argc, char **argv) {
        static const char *const formats[] = {"text", "json", NULL};
        static const struct option options[] = {
                {"format", required_argument, NULL, 'f'},
                {"finish-reason", required_argument, NULL, 'r'},
                {"question", required_argument, NULL, 'q'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        int format = 0;
        const char *finish_reason = NULL, *question = NULL;
        optind = 1;
        opterr = 0;
        for (;;) {
                int c = getopt_long(argc, argv, ":h", options, NULL);
                if (c == -1)
                        break;
                switch (c) {
                case 'f':
                        format = cli_parse_choice(optarg, formats);
                        if (format < 0)
                                return cli_usage_error("inspect", "unknown format '%s' (text or json)", optarg);
                        break;
                case 'r':
                        if (!*optarg)
                                return cli_usage_error("inspect", "--finish-reason needs a value");
                        finish_reason = optarg;
                        break;
                case 'q':
                        question = optarg;
                        break;
                case 'h':
                        inspect_help();
                        return EXIT_OK;
                default:
                        return cli_bad_option("inspect", c, argv);
                }
        }
        /* getopt permutes: options may follow files; "--" ends options. */
        _cleanup_strv_free_ char **files = NULL;
        for (int i = optind; i < argc; i++)
                if (strv_push(&files, argv[i]) < 0) {
                        cli_error("out of memory");
                        return EXIT_USAGE;
                }
        if (!files && strv_push(&files, "-") < 0) {
                cli_error("out of memory");
                return EXIT_USAGE;
        }

        json_t *jfiles = format == 1 ? json_array() : NULL;
        if (format == 1 && !jfiles) {
                cli_error("out of memory");
                return EXIT_USAGE;
        }
        int status = EXIT_OK;
        bool broken = false;
        for (char **f = files; *f; f++) {
                _cleanup_free_ char *data = NULL;
                size_t len = 0;
                _cleanup_free_ char *name = detect_escape(*f, strlen(*f));
                if (!name) {
                        cli_error("out of memory");
                        broken = true;
                        break;
                }
                int r = read_input(*f, &data, &len);
                if (r == -EFBIG) {
                        cli_error("'%s' is larger than 16 MiB", name);
                        broken = true;
                        continue;
                }
                if (r < 0) {
                        cli_error("cannot open '%s': %s", name, file_strerror(r));
                        broken = true;
                        continue;
                }
                struct detect_input in = {.text = data, .len = len, .finish_reason = finish_reason,
                                          .question = question, .question_len = question ? strlen(question) : 0};
                _cleanup_(detect_result_release) struct detect_result res = {0};
                r = detect_output(&in, &res);
                if (r < 0) {
                        cli_error("cannot inspect '%s': %s", name, strerror(-r));
                        broken = true;
                        continue;
                }
                if (res.verdict != VERDICT_PASS && status == EXIT_OK)
                        status = EXIT_FAILED;
                if (format == 0) {
                        if (res.verdict == VERDICT_PASS)
                                printf("%s: pass\n", name);
                        else
                                printf("%s: %s %s: %s\n", name, verdict_to_string(res.verdict), res.cause,
                                       res.evidence);
                        continue;
                }
                json_t *o = json_pack("{s:s, s:s, s:s?, s:s?}", "file", name, "verdict",
                                      verdict_to_string(res.verdict), "cause", res.cause, "evidence",
                                      res.evidence);
                if (!o || json_array_append_new(jfiles, o) < 0) {
                        cli_error("out of memory");
                        broken = true;
                        break;
                }
        }
        if (format == 1) {
                json_t *root = json_pack("{s:o}", "files", jfiles);
                char *s = root ? json_dumps(root, JSON_COMPACT) : NULL;
                json_decref(root);
                if (!s) {
                        cli_error("out of memory");
                        return EXIT_USAGE;
                }
                puts(s);
                free(s);
        }
        return broken ? EXIT_USAGE : status;
}
