/* test_emit.c -- systemd and shell escaping, and units/scripts that launch the exact argv.
 *
 * `test_emit --make-journal DIR` writes DIR/j.db (through the journal API), DIR/stub (an
 * executable that records its argv and two env values), DIR/expected.args and
 * DIR/expected.env, and DIR/nopass.db (a journal where no cell passed), for
 * tests/integration/emit.sh to drive the real `gauntlet emit`.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "report/emit.h"
#include "journal/journal.h"
#include "report/report.h"
#include "results/report_load.h"

#define PORT 45678

/* Everything that systemd or sh could take for syntax. */
static char hostile_env[] = "SECRET_TOKEN=v a'l\"$x%\\y\nz${HOME}`id`";
static char *env[] = {hostile_env, "PLAIN=1", NULL};

static size_t choice0[] = {0}, choice1[] = {1}, choice2[] = {2};
static char *va[] = {"--x", "a", NULL}, *vb[] = {"--x", "b", NULL}, *vc[] = {"--x", "c", NULL};
static struct axis_value values[] = {{.name = "a", .args = va, .is_default = true}, {.name = "b", .args = vb}, {.name = "c", .args = vc}};
static struct axis axis = {.name = "x", .flag = "--x", .values = values, .n_values = 3};

/* argv[0] is filled in with the stub's path. */
static char *hostile_argv(const char *stub, char ***ret) {
        char *argv[] = {(char *)stub, "--port", "{port}", "a b", "q\"uote's", "$HOME", "${PATH}", "100%", "%n",
                        "back\\slash\\", "new\nline", ";", "--api-key", "sk-1", "tab\there", "\xc3\xbcn\xc3\xaf",
                        "", "-", "--x", "a", NULL};
        *ret = strv_copy(argv);
        return (*ret)[0];
}

static int write_text(const char *path, const char *text, size_t n, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, text, n);
        close(fd);
        return r;
}

/* Builds DIR/j.db with three cells: one passing with the hostile argv (ids share the
 * prefix "aaaa" with the second, a garbage cell), one crash "bbbb...". */
static int make_journal(const char *dir, bool nopass) {
        char path[512], stub[512];
        _cleanup_strv_free_ char **argv = NULL;
        struct journal *j = NULL;
        int64_t sweep;
        int r;
        snprintf(stub, sizeof(stub), "%s/stub", dir);
        snprintf(path, sizeof(path), "%s/%s", dir, nopass ? "nopass.db" : "j.db");
        hostile_argv(stub, &argv);
        if (!argv)
                return -ENOMEM;
        static const char stub_text[] = "#!/bin/sh\n"
                                        "for a in \"$@\"; do printf '%s\\0' \"$a\"; done > \"$0.args\"\n"
                                        "printf '%s\\0%s\\0' \"$SECRET_TOKEN\" \"$PLAIN\" > \"$0.env\"\n"
                                        "pwd > \"$0.cwd\"\n";
        if ((r = write_text(stub, stub_text, strlen(stub_text), 0755)) < 0)
                return r;

        struct cell cells[] = {
                {.choice = choice0, .id = "aaaa000000000001", .argv = argv, .env = env},
                {.choice = choice1, .id = "aaaa000000000002", .argv = argv, .distance = 1},
                {.choice = choice2, .id = "bbbb000000000003", .argv = argv, .distance = 1},
        };
        struct matrix m = {.path = "hostile.yaml", .text = "engine: generic\n", .engine = "generic", .model = "tiny",
                           .host = "127.0.0.1", .workdir = (char *)dir, .startup_timeout = 1200 * USEC_PER_SEC,
                           .axes = &axis, .n_axes = 1, .objective = "output_tokens_per_s@1"};
        if ((r = journal_open(path, &j)) < 0)
                return r;
        r = journal_begin_sweep(j, &m, "{}", &sweep);
        if (r >= 0)
                r = journal_record_cells(j, sweep, &m, cells, 3);
        for (size_t i = 0; i < 3 && r >= 0; i++) {
                struct attempt a;
                attempt_init(&a);
                a.sweep_id = sweep;
                memcpy(a.cell_id, cells[i].id, 17);
                a.port = PORT;
                r = journal_attempt_begin(j, &a);
                if (r >= 0 && i == 0 && !nopass) {
                        a.verdict = VERDICT_PASS;
                        a.ready_after = 5 * USEC_PER_SEC;
                        a.bench = json_pack("[{s:i, s:i, s:f}]", "concurrency", 1, "completed", 16, "output_tokens_per_s", 99.5);
                } else if (r >= 0)
                        r = attempt_set_verdict(&a, i == 2 ? VERDICT_CRASH : VERDICT_GARBAGE, i == 2 ? "oom" : "repeat",
                                                "evidence");
                if (r >= 0)
                        r = journal_attempt_settle(j, &a);
                attempt_release(&a);
        }
        if (r >= 0)
                r = journal_end_sweep(j, sweep, "finished");
        journal_close(j);
        if (r < 0 || nopass)
                return r;

        /* What the stub must receive: argv[1..] with the port, and the env values. */
        struct buf b;
        buf_init(&b, 0);
        for (size_t i = 1; argv[i]; i++) {
                buf_puts(&b, strcmp(argv[i], "{port}") == 0 ? "45678" : argv[i]);
                buf_append(&b, "", 1);
        }
        snprintf(path, sizeof(path), "%s/expected.args", dir);
        r = write_text(path, b.data, b.len, 0644);
        buf_reset(&b);
        buf_puts(&b, strchr(hostile_env, '=') + 1);
        buf_append(&b, "", 1);
        buf_puts(&b, "1");
        buf_append(&b, "", 1);
        snprintf(path, sizeof(path), "%s/expected.env", dir);
        if (r >= 0)
                r = write_text(path, b.data, b.len, 0644);
        buf_release(&b);
        return r;
}

/* ---- escaping tables ---- */

static void test_quote_systemd(void **state) {
        static const struct {
                const char *in;
                bool exec;
                const char *out;
        } table[] = {
                {"plain", true, "\"plain\""},
                {"a b", true, "\"a b\""},
                {"q\"x", true, "\"q\\\"x\""},
                {"back\\slash", true, "\"back\\\\slash\""},
                {"$HOME", true, "\"$$HOME\""},
                {"$HOME", false, "\"$HOME\""},
                {"100%", true, "\"100%%\""},
                {"100%", false, "\"100%%\""},
                {"nl\nx", true, "\"nl\\x0ax\""},
                {"tab\t", true, "\"tab\\x09\""},
                {"\x7f", true, "\"\\x7f\""},
                {";", true, "\\;"},
                {";", false, "\";\""},
                {"", true, "\"\""},
                {"\xc3\xbc", true, "\"\xc3\xbc\""},
                {"\xff", true, "\"\\xff\""},
                {"it's", true, "\"it's\""},
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                struct buf b;
                buf_init(&b, 0);
                assert_int_equal(emit_quote_systemd(&b, table[i].in, table[i].exec), 0);
                assert_string_equal(buf_str(&b), table[i].out);
                buf_release(&b);
        }
}

static void test_quote_sh(void **state) {
        static const struct {
                const char *in, *out;
        } table[] = {
                {"plain", "'plain'"},      {"it's", "'it'\\''s'"},  {"$HOME `id`", "'$HOME `id`'"},
                {"a\nb", "'a\nb'"},        {"", "''"},              {"''", "''\\'''\\'''"},
                {"back\\", "'back\\'"},
        };
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                struct buf b;
                buf_init(&b, 0);
                assert_int_equal(emit_quote_sh(&b, table[i].in), 0);
                assert_string_equal(buf_str(&b), table[i].out);
                buf_release(&b);
        }
        struct buf b;
        buf_init(&b, 0);
        assert_int_equal(emit_comment(&b, "line\nExecStart=/bin/evil\\"), 0);
        assert_string_equal(buf_str(&b), "# line\\nExecStart=/bin/evil\\x5c\n");
        buf_release(&b);
}

static void test_resolve(void **state) {
        char *r = NULL;
        assert_int_equal(emit_resolve_executable("sh", "relative/dir:/nonexistent:/bin:/usr/bin", NULL, &r), 1);
        assert_true(strcmp(r, "/bin/sh") == 0 || strcmp(r, "/usr/bin/sh") == 0);
        free(r);
        assert_int_equal(emit_resolve_executable("no-such-program-here", "/bin:/usr/bin", NULL, &r), 0);
        assert_string_equal(r, "no-such-program-here");
        free(r);
        assert_int_equal(emit_resolve_executable("/opt/x", "/bin", NULL, &r), 1);
        assert_string_equal(r, "/opt/x");
        free(r);
        assert_int_equal(emit_resolve_executable("./venv/bin/python", "/bin", "/srv/m", &r), 1);
        assert_string_equal(r, "/srv/m/./venv/bin/python");
        free(r);
        /* A directory is not an executable. */
        assert_int_equal(emit_resolve_executable("tmp", "/", NULL, &r), 0);
        free(r);
}

/* ---- units and scripts for real ---- */

static int run(const char *cmd) {
        int s = system(cmd);
        return WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
}

static void assert_files_equal(const char *a, const char *b) {
        char *x = NULL, *y = NULL;
        size_t nx = 0, ny = 0;
        assert_int_equal(read_file_capped(a, 1 << 20, &x, &nx), 0);
        assert_int_equal(read_file_capped(b, 1 << 20, &y, &ny), 0);
        assert_int_equal(nx, ny);
        assert_memory_equal(x, y, nx);
        free(x);
        free(y);
}

/* Reverses systemd's quoting for the subset emit writes (\\ \" \xNN $$ %% and \;), as
 * systemd's unquote + specifier + $-expansion steps do. */
static char **unquote_exec(const char *line) {
        char **v = NULL;
        const char *p = line;
        while (*p) {
                while (*p == ' ')
                        p++;
                if (!*p)
                        break;
                struct buf b;
                buf_init(&b, 0);
                if (p[0] == '\\' && p[1] == ';') {
                        buf_puts(&b, ";");
                        p += 2;
                } else {
                        assert_int_equal(*p, '"');
                        for (p++; *p != '"'; p++) {
                                assert_true(*p != 0);
                                if (*p == '\\' && p[1] == 'x') {
                                        char hex[3] = {p[2], p[3], 0};
                                        char c = (char)strtol(hex, NULL, 16);
                                        buf_append(&b, &c, 1);
                                        p += 3;
                                } else if (*p == '\\') {
                                        buf_append(&b, ++p, 1);
                                } else if ((*p == '$' || *p == '%') && p[1] == *p) {
                                        buf_append(&b, p++, 1);
                                } else {
                                        assert_true(*p != '$' && *p != '%' && (unsigned char)*p >= 0x20);
                                        buf_append(&b, p, 1);
                                }
                        }
                        p++;
                }
                strv_consume(&v, buf_detach(&b));
        }
        return v;
}

/* A workdir with "." or ".." segments: its real path when it exists, else normalised by its
 * text; systemd refuses either in WorkingDirectory=. */
static void test_workdir_normalize(void **state) {
        (void)state;
        static const struct {
                const char *in, *want;
        } t[] = {
                {"/nonexistent-gauntlet/a/../b", "/nonexistent-gauntlet/b"},
                {"/nonexistent-gauntlet/./a//b/.", "/nonexistent-gauntlet/a/b"},
                {"/nonexistent-gauntlet/../../..", "/"},
                {"/nonexistent-gauntlet/a/b/../../c/", "/nonexistent-gauntlet/c"},
                {"/tmp/../tmp/.", "/tmp"},
                {"/", "/"},
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                char *got = NULL;
                assert_int_equal(emit_workdir_normalize(t[i].in, &got), 0);
                assert_string_equal(got, t[i].want);
                free(got);
        }
        char *got = NULL;
        assert_int_equal(emit_workdir_normalize("rel/../x", &got), -EINVAL);
        assert_null(got);
}

static void test_unit_and_script(void **state) {
        char dir[] = "/tmp/gauntlet-emit-XXXXXX";
        char path[256], cmd[1024];
        assert_non_null(mkdtemp(dir));
        assert_int_equal(make_journal(dir, false), 0);

        struct journal *j = NULL;
        struct report_view *v = NULL;
        snprintf(path, sizeof(path), "%s/j.db", dir);
        assert_int_equal(journal_open_existing(path, &j), 0);
        assert_int_equal(report_load_view(j, &v), 0);
        journal_close(j);
        int best = report_best_index(v, NULL);
        assert_int_equal(best, 0);
        const struct report_cell *c = &v->cells[best];
        assert_string_equal(c->command[2], "45678");

        char *comments[] = {"chosen by test_emit", "evil\n[Service]\nExecStartPre=/bin/false", NULL};
        struct emit_spec spec = {.argv = c->command, .env = c->env, .workdir = dir, .startup_timeout = 1200 * USEC_PER_SEC,
                                 .description = "test 100% \\", .comments = comments};
        struct buf unit;
        buf_init(&unit, 0);
        assert_int_equal(emit_systemd(&spec, &unit), 0);
        const char *u = buf_str(&unit);
        assert_non_null(strstr(u, "\nType=simple\n"));
        assert_non_null(strstr(u, "\nRestart=on-failure\n"));
        assert_non_null(strstr(u, "\nTimeoutStartSec=1200\n"));
        assert_non_null(strstr(u, "\nKillMode=control-group\n"));
        assert_non_null(strstr(u, "\nWantedBy=multi-user.target\n"));
        assert_non_null(strstr(u, "\nDescription=test 100%%\n")); /* no trailing continuation */
        assert_null(strstr(u, "\nExecStartPre")); /* the comment stayed a comment */
        assert_non_null(strstr(u, "Environment=\"SECRET_TOKEN=v a'l\\\"$x%%\\\\y\\x0az${HOME}`id`\"\n"));

        /* ExecStart decodes back to the exact argv. */
        const char *es = strstr(u, "\nExecStart=");
        assert_non_null(es);
        es += strlen("\nExecStart=");
        char *line = strndup(es, strcspn(es, "\n"));
        char **back = unquote_exec(line);
        free(line);
        assert_true(strv_equal(back, c->command));
        strv_free(back);

        snprintf(path, sizeof(path), "%s/gauntlet-test.service", dir);
        assert_int_equal(write_text(path, unit.data, unit.len, 0644), 0);
        if (access("/usr/bin/systemd-analyze", X_OK) == 0 || access("/bin/systemd-analyze", X_OK) == 0) {
                snprintf(cmd, sizeof(cmd), "systemd-analyze verify '%s' 2>&1", path);
                assert_int_equal(run(cmd), 0);
        } else
                print_message("systemd-analyze not installed: unit not verified\n");
        buf_release(&unit);

        struct buf script;
        buf_init(&script, 0);
        assert_int_equal(emit_script(&spec, &script), 0);
        assert_true(startswith(buf_str(&script), "#!/bin/sh\n"));
        assert_non_null(strstr(buf_str(&script), "\nset -e\n"));
        snprintf(path, sizeof(path), "%s/run.sh", dir);
        assert_int_equal(write_text(path, script.data, script.len, 0755), 0);
        buf_release(&script);
        snprintf(cmd, sizeof(cmd), "sh -n '%s'", path);
        assert_int_equal(run(cmd), 0);
        /* Run it from elsewhere: the script goes to the workdir itself. */
        snprintf(cmd, sizeof(cmd), "cd / && env -u SECRET_TOKEN sh '%s'", path);
        assert_int_equal(run(cmd), 0);
        char a[256], b[256];
        snprintf(a, sizeof(a), "%s/stub.args", dir);
        snprintf(b, sizeof(b), "%s/expected.args", dir);
        assert_files_equal(a, b);
        snprintf(a, sizeof(a), "%s/stub.env", dir);
        snprintf(b, sizeof(b), "%s/expected.env", dir);
        assert_files_equal(a, b);

        /* An env name a shell cannot export goes through env(1), still exact. */
        char *odd_env[] = {"odd.name=x y", "PLAIN=2", NULL};
        spec.env = odd_env;
        buf_init(&script, 0);
        assert_int_equal(emit_script(&spec, &script), 0);
        assert_non_null(strstr(buf_str(&script), "exec env -- 'odd.name=x y' '"));
        buf_release(&script);
        /* A name that looks like an option of env(1) is an assignment: --unset=PLAIN would
         * unset PLAIN, --chdir=/ move the server (an old journal may hold such names; the
         * matrix refuses them). */
        char *option_env[] = {"--unset=PLAIN", "--chdir=/", "PLAIN=2", NULL};
        spec.env = option_env;
        buf_init(&script, 0);
        assert_int_equal(emit_script(&spec, &script), 0);
        snprintf(path, sizeof(path), "%s/run-options.sh", dir);
        assert_int_equal(write_text(path, script.data, script.len, 0755), 0);
        buf_release(&script);
        snprintf(cmd, sizeof(cmd), "cd / && env -u SECRET_TOKEN sh '%s'", path);
        assert_int_equal(run(cmd), 0);
        snprintf(cmd, sizeof(cmd), "printf '\\0002\\000' | cmp -s - '%s/stub.env'", dir);
        assert_int_equal(run(cmd), 0); /* SECRET_TOKEN empty, PLAIN still 2 */
        spec.env = env;
        /* Names systemd cannot take are refused, not written where systemd would drop them. */
        static const char *const bad_names[] = {"=x", "1ABC=1", "a.b=1", "A-B=1", "caf\xc3\xa9=1", "-x=1", NULL};
        for (size_t i = 0; bad_names[i]; i++) {
                char *bad_env[] = {(char *)bad_names[i], NULL};
                spec.env = bad_env;
                buf_init(&unit, 0);
                assert_int_equal(emit_systemd(&spec, &unit), -EINVAL);
                buf_release(&unit);
        }
        spec.env = env;
        /* A workdir a unit line cannot hold: a trailing backslash would swallow the next
         * directive; blanks at the ends are stripped. */
        static const char *const bad_dirs[] = {"/srv/m\\", "/srv/m ", "relative", "/a\nb", NULL};
        for (size_t i = 0; bad_dirs[i]; i++) {
                spec.workdir = bad_dirs[i];
                buf_init(&unit, 0);
                assert_int_equal(emit_systemd(&spec, &unit), -EINVAL);
                buf_release(&unit);
        }
        /* The edges that are fine pass systemd-analyze verify without a warning: names
         * with _ and digits, a workdir with a blank, % and $ inside. */
        char odd_dir[512];
        snprintf(odd_dir, sizeof(odd_dir), "%s/w d%%$x\\y", dir);
        assert_int_equal(mkdir(odd_dir, 0755), 0);
        char *edge_env[] = {"_A1=1", "a=x y", "Z_9=%h$HOME", NULL};
        spec.env = edge_env;
        spec.workdir = odd_dir;
        buf_init(&unit, 0);
        assert_int_equal(emit_systemd(&spec, &unit), 0);
        snprintf(path, sizeof(path), "%s/gauntlet-edge.service", dir);
        assert_int_equal(write_text(path, unit.data, unit.len, 0644), 0);
        buf_release(&unit);
        if (access("/usr/bin/systemd-analyze", X_OK) == 0 || access("/bin/systemd-analyze", X_OK) == 0) {
                snprintf(cmd, sizeof(cmd),
                         "out=$(systemd-analyze verify '%s' 2>&1); rc=$?; printf '%%s\\n' \"$out\"; "
                         "[ $rc = 0 ] && ! printf '%%s' \"$out\" | grep -qi 'ignoring\\|invalid'",
                         path);
                assert_int_equal(run(cmd), 0);
        }

        report_view_free(v);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        assert_int_equal(run(cmd), 0);
}

int main(int argc, char **argv) {
        if (argc == 3 && strcmp(argv[1], "--make-journal") == 0) {
                int r = make_journal(argv[2], false);
                if (r >= 0)
                        r = make_journal(argv[2], true);
                if (r < 0)
                        fprintf(stderr, "test_emit: cannot make the journal in '%s': %s\n", argv[2], strerror(-r));
                return r < 0;
        }
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_quote_systemd),
                cmocka_unit_test(test_quote_sh),
                cmocka_unit_test(test_resolve),
                cmocka_unit_test(test_unit_and_script),
                cmocka_unit_test(test_workdir_normalize),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
