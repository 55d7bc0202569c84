/* main.c -- gauntlet's entry point: picks the command and makes sure stdout was written. */
#include <curl/curl.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <string.h>

#include "cli/cli.h"

static const struct command {
        const char *name;
        int (*fn)(int argc, char **argv);
        const char *summary;
} commands[] = {
        {"run", cli_run, "sweep a matrix: launch, check, bench and journal every cell"},
        {"smoke", cli_smoke, "the smoke suite against a running server"},
        {"inspect", cli_inspect, "garbage detectors on saved outputs"},
        {"bench", cli_bench, "load-test a running server"},
        {"report", cli_report, "render a journal as text, markdown, json or html"},
        {"compare", cli_compare, "two sweeps side by side; exit 1 when something regressed"},
        {"emit", cli_emit, "a systemd unit or launch script for the best cell"},
        {"doctor", cli_doctor, "host fingerprint: GPUs, driver, engines"},
};

static void usage(FILE *f) {
        fprintf(f, "usage: gauntlet COMMAND [ARGS...]\n\n"
                   "Finds the fastest configuration of an LLM inference server that still gives\n"
                   "right answers.\n\ncommands:\n");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
        fprintf(f, "\n'gauntlet COMMAND --help' tells more about one command.\n");
}

void cli_error(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("gauntlet: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fputs("gauntlet: ", stderr);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        if (cmd)
                fprintf(stderr, "try 'gauntlet %s --help'\n", cmd);
        else
                fprintf(stderr, "try 'gauntlet --help'\n");
        return EXIT_USAGE;
}

bool cli_color(FILE *f) {
        const char *nc = getenv("NO_COLOR");
        if (nc && *nc)
                return false;
        const char *term = getenv("TERM");
        if (term && strcmp(term, "dumb") == 0)
                return false;
        return isatty(fileno(f));
}

int cli_parse_choice(const char *value, const char *const *names) {
        for (int i = 0; value && names[i]; i++)
                if (strcmp(value, names[i]) == 0)
                        return i;
        return -1;
}

int cli_parse_int(const char *s, long min, long max, long *ret) {
        if (!s || !*s)
                return -EINVAL;
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (errno || *end || v < min || v > max)
                return -EINVAL;
        *ret = v;
        return 0;
}

bool cli_valid_url(const char *u) {
        const char *rest;
        if (startswith(u, "http://"))
                rest = u + 7;
        else if (startswith(u, "https://"))
                rest = u + 8;
        else
                return false;
        if (!*rest || *rest == '/' || *rest == ':')
                return false;
        for (const char *p = u; *p; p++)
                if ((unsigned char)*p <= 0x20 || *p == 0x7f)
                        return false;
        return true;
}

int cli_bad_option(const char *cmd, int o, char **argv) {
        if (o == ':')
                return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
        return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
}

/* A closed stdin, stdout or stderr would be taken by the next file opened (the journal),
 * and messages would land in it: /dev/null for stdin, /dev/full for the others (a write
 * there fails, as to the closed descriptor). */
static void guard_std_fds(void) {
        for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
                if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
                        continue;
                int n = open(fd == STDIN_FILENO ? "/dev/null" : "/dev/full", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
                if (n >= 0 && n != fd) {
                        dup2(n, fd);
                        close(n);
                }
        }
}

int main(int argc, char **argv) {
        int status;
        guard_std_fds();
        if (argc < 2) {
                usage(stderr);
                return EXIT_USAGE;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
                usage(stdout);
                status = EXIT_OK;
                goto finish;
        }
        if (strcmp(argv[1], "--version") == 0) {
                printf("gauntlet %s\n", GAUNTLET_VERSION);
                status = EXIT_OK;
                goto finish;
        }
        const struct command *cmd = NULL;
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(argv[1], commands[i].name) == 0)
                        cmd = &commands[i];
        if (!cmd)
                return cli_usage_error(NULL, "unknown command '%s'", argv[1]);
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                cli_error("cannot initialise libcurl");
                return EXIT_USAGE;
        }
        status = cmd->fn(argc - 1, argv + 1);
        curl_global_cleanup();
finish:
        /* A report that did not reach its file is a failure, not a success (jq's habit). */
        if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
                cli_error("cannot write output: %s", strerror(errno));
                return status ? status : EXIT_USAGE;
        }
        return status;
}
