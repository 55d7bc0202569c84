/* test_report_html.c -- the HTML report: escaping, hostile server text, layout choice, log excerpts, secrets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text/text.h"
#include "report/report.h"
#include "results/report_load.h"

/* ---- helpers ---- */

static char *escaped(const char *s, size_t max) {
        struct buf b;
        buf_init(&b, 0);
        assert_int_equal(text_escape_html(&b, s, max), 0);
        char *r = buf_detach(&b);
        assert_non_null(r);
        return r;
}

static size_t count(const char *hay, const char *needle) {
        size_t n = 0;
        for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

static bool valid_utf8(const unsigned char *s) {
        while (*s) {
                size_t n = *s < 0x80 ? 1 : (*s & 0xe0) == 0xc0 ? 2 : (*s & 0xf0) == 0xe0 ? 3 : (*s & 0xf8) == 0xf0 ? 4 : 0;
                if (n == 0 || (n == 2 && *s < 0xc2))
                        return false;
                for (size_t i = 1; i < n; i++)
                        if ((s[i] & 0xc0) != 0x80)
                                return false;
                s += n;
        }
        return true;
}

/* A view built in memory: n_axes axes, cells filled by the caller. */
struct fake {
        struct report_view v;
        struct report_cell cells[8];
        char *axes[3];
        char *values[8][3];
        struct report_check checks[8][2];
};

static char *argv_plain[] = {"serve", "--port", "{port}", "--api-key", "sk-live-abcdef123456", NULL};
static char *env_plain[] = {"HF_TOKEN=hf_secretvalue42", "NCCL_P2P_DISABLE=1", NULL};

static void fake_init(struct fake *f, size_t n_axes, size_t n_cells) {
        memset(f, 0, sizeof(*f));
        static const char *const axis_names[] = {"moe", "gemm", "attn"};
        for (size_t k = 0; k < n_axes; k++)
                f->axes[k] = (char *)axis_names[k];
        f->v = (struct report_view){
                .journal_path = "runs/j.db",
                .sweep_id = 1,
                .engine = "sglang",
                .model = "org/model",
                .objective = "output_tokens_per_s@1",
                .host = "127.0.0.1",
                .host_json = json_object(),
                .axes = f->axes,
                .n_axes = n_axes,
                .cells = f->cells,
                .n_cells = n_cells,
                .matrix_path = "m.yaml",
                .matrix_text = "engine: sglang\n",
                .version = "0.1.0",
        };
        for (size_t i = 0; i < n_cells; i++) {
                struct report_cell *c = &f->cells[i];
                static const char *const vals[] = {"a", "b", "c", "d"};
                snprintf(c->id, sizeof(c->id), "%016zx", 0xabc0 + i);
                c->position = i;
                c->axis_values = f->values[i];
                /* a grid: axis 0 is i / 2, axis 1 is i % 2, axis 2 is always "x" */
                if (n_axes > 0)
                        f->values[i][0] = (char *)vals[(i / 2) % 4];
                if (n_axes > 1)
                        f->values[i][1] = (char *)vals[i % 2];
                if (n_axes > 2)
                        f->values[i][2] = "x";
                c->argv = argv_plain;
                c->command = argv_plain;
                c->env = env_plain;
                c->has_attempt = true;
                c->verdict = VERDICT_PASS;
                c->exit_code = -1;
                f->checks[i][0] = (struct report_check){.name = "ok", .verdict = VERDICT_PASS, .output = "OK",
                                                        .latency = 20 * USEC_PER_MSEC};
                c->checks = f->checks[i];
                c->n_checks = 1;
        }
}

static void fake_release(struct fake *f) {
        for (size_t i = 0; i < f->v.n_cells; i++)
                json_decref(f->cells[i].bench);
        json_decref(f->v.host_json);
}

static char *render(const struct report_view *v) {
        struct buf b;
        buf_init(&b, 0);
        assert_int_equal(report_html(v, &b), 0);
        char *r = buf_detach(&b);
        assert_non_null(r);
        return r;
}

static char *render_loaded(struct fake *f);

/* ---- escaping ---- */

static void test_escape(void **state) {
        char *e = escaped("<a href=\"x\" title='y'>&amp;</a>", 0);
        assert_string_equal(e, "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;");
        free(e);
        /* UTF-8 kept; bytes that are not UTF-8, controls, C1 and bidi overrides shown as text */
        e = escaped("é ✓ \xff\xc3(\x1b[31m\xc2\x9b\xe2\x80\xae!", 0);
        assert_string_equal(e, "é ✓ \\xff\\xc3(\\x1b[31m\\u009b\\u202e!");
        free(e);
        /* newlines and tabs kept; CRLF is one newline, a lone CR starts a line */
        e = escaped("a\r\nb\tc\rd\n", 0);
        assert_string_equal(e, "a\nb\tc\nd\n");
        free(e);
        /* overlong encodings and surrogates are not UTF-8 */
        e = escaped("\xc0\xbc\xed\xa0\x80", 0);
        assert_string_equal(e, "\\xc0\\xbc\\xed\\xa0\\x80");
        free(e);
        /* a cut counts characters, not bytes, and never splits an entity */
        e = escaped("<<<<<<", 3);
        assert_string_equal(e, "&lt;&lt;&lt;…");
        free(e);
        e = escaped("ééé", 3);
        assert_string_equal(e, "ééé");
        free(e);
        e = escaped("", 0);
        assert_string_equal(e, "");
        free(e);
        struct buf b;
        buf_init(&b, 0);
        assert_int_equal(text_escape_html(&b, NULL, 0), 0);
        assert_int_equal(b.len, 0);
        buf_release(&b);
        /* at the buffer's cap: an error, and nothing past the cap */
        buf_init(&b, 8);
        assert_int_equal(text_escape_html(&b, "<<<<<<<<", 0), -ENOBUFS);
        assert_true(b.len <= 8);
        buf_release(&b);
}

/* ---- hostile text everywhere a server, a log or a user controls ---- */

static const char *const hostile[] = {
        "<script>alert(1)</script>",
        "<img src=x onerror=alert(1)>",
        "\"><svg onload=alert(1)>",
        "</pre></details></table><script>alert(2)</script>",
        "'><iframe src=javascript:alert(1)>",
        "bad \xff\xfe bytes \xe2\x80\xae reversed",
};

static void test_hostile(void **state) {
        struct fake f;
        fake_init(&f, 2, 4);
        char out_all[2048] = "";
        for (size_t i = 0; i < ELEMENTSOF(hostile); i++)
                strcat(out_all, hostile[i]);
        /* check output, reasoning, evidence, causes, names: all hostile */
        f.cells[1].verdict = VERDICT_GARBAGE;
        f.cells[1].cause = (char *)hostile[2];
        f.cells[1].evidence = out_all;
        f.checks[1][0] = (struct report_check){.name = (char *)hostile[0], .verdict = VERDICT_GARBAGE,
                                               .cause = (char *)hostile[1], .evidence = (char *)hostile[3],
                                               .output = out_all, .reasoning = (char *)hostile[4],
                                               .finish_reason = (char *)hostile[2]};
        f.cells[2].verdict = VERDICT_CRASH;
        f.cells[2].cause = "oom";
        f.cells[2].evidence = (char *)hostile[3];
        f.cells[2].log_path = "/nonexistent/gauntlet-test/log.txt";
        f.values[3][1] = (char *)hostile[1];
        f.axes[0] = (char *)hostile[0];
        f.v.model = (char *)hostile[2];
        f.v.engine = (char *)hostile[5];
        f.v.matrix_text = (char *)hostile[3];
        f.v.matrix_path = (char *)hostile[4];
        json_object_set_new(f.v.host_json, "gpus",
                            json_pack("[{s:s, s:s, s:i}]", "name", hostile[1], "arch", hostile[0], "memory_mib", 1024));
        json_object_set_new(f.v.host_json, hostile[0], json_string(hostile[2]));
        f.cells[0].bench = json_pack("[{s:i, s:i, s:f, s:{s:f, s:f}, s:{s:f, s:f}}]", "concurrency", 1,
                                     "completed", 64, "output_tokens_per_s", 100.0, "ttft_ms", "p50", 10.0, "p99", 20.0, "itl_ms",
                                     "p50", 5.0, "p99", 7.0);

        char *html = render_loaded(&f);
        /* the one script is the page's own, at the end; nothing else became markup */
        assert_int_equal(count(html, "<script"), 1);
        assert_non_null(strstr(html, "<script>addEventListener(\"beforeprint\""));
        assert_null(strstr(html, "<img"));
        assert_null(strstr(html, "<iframe"));
        assert_null(strstr(html, "<svg onload"));
        /* an injected </pre> or </details> did not close anything */
        assert_int_equal(count(html, "<pre"), count(html, "</pre>"));
        assert_int_equal(count(html, "<details"), count(html, "</details>"));
        assert_int_equal(count(html, "<table"), count(html, "</table>"));
        /* and the text is all there, as text */
        assert_non_null(strstr(html, "&lt;img src=x onerror=alert(1)&gt;"));
        assert_non_null(strstr(html, "&quot;&gt;&lt;svg onload=alert(1)&gt;"));
        assert_non_null(strstr(html, "&lt;/pre&gt;&lt;/details&gt;"));
        assert_non_null(strstr(html, "bad \\xff\\xfe bytes \\u202e reversed"));
        /* the page is valid UTF-8 whatever the server sent */
        assert_true(valid_utf8((const unsigned char *)html));
        /* secrets: masked in argv and env, and nowhere on the page */
        assert_null(strstr(html, "sk-live-abcdef123456"));
        assert_null(strstr(html, "hf_secretvalue42"));
        assert_non_null(strstr(html, "HF_TOKEN=***"));
        assert_non_null(strstr(html, "--api-key ***"));
        /* the missing log is said */
        assert_non_null(strstr(html, "Log not found"));
        free(html);
        fake_release(&f);
}

/* Secrets a log, the matrix file or an answer repeats are masked there too. */
static void test_secrets_everywhere(void **state) {
        struct fake f;
        fake_init(&f, 1, 2);
        f.v.matrix_text = "env: {HF_TOKEN: hf_secretvalue42}\nargs: [--api-key, sk-live-abcdef123456]\n";
        f.checks[1][0].output = "your key is sk-live-abcdef123456!";
        f.checks[1][0].verdict = VERDICT_WRONG;
        f.cells[1].verdict = VERDICT_WRONG;
        f.cells[1].evidence = "got: your key is sk-live-abcdef123456!";
        char *html = render(&f.v);
        assert_null(strstr(html, "sk-live-abcdef123456"));
        assert_null(strstr(html, "hf_secretvalue42"));
        assert_non_null(strstr(html, "env: {HF_TOKEN: ***}"));
        assert_non_null(strstr(html, "your key is ***!"));
        /* short values are not secrets worth blanking everywhere: NCCL_P2P_DISABLE=1 stays */
        assert_non_null(strstr(html, "NCCL_P2P_DISABLE=1"));
        free(html);
        fake_release(&f);
}

/* ---- layout by shape ---- */

static void test_shape(void **state) {
        for (size_t axes = 0; axes <= 3; axes++) {
                struct fake f;
                fake_init(&f, axes, axes == 0 ? 1 : 4);
                f.cells[f.v.n_cells - 1].verdict = VERDICT_CRASH;
                f.cells[f.v.n_cells - 1].cause = "oom";
                char *html = render(&f.v);
                if (axes == 2) {
                        assert_non_null(strstr(html, "<table class=\"heat\""));
                        assert_null(strstr(html, "<table class=\"ranked\">"));
                        /* rows a, b; columns a, b; the crash at (b, b) */
                        assert_int_equal(count(html, "<th scope=\"row\">"), 2);
                        assert_int_equal(count(html, "<th scope=\"col\">"), 2);
                        assert_int_equal(count(html, "<td class=\"v-crash\""), 1);
                        assert_int_equal(count(html, "<td class=\"v-pass best\""), 1);
                        assert_non_null(strstr(html, "<ul class=\"legend\">"));
                } else {
                        assert_null(strstr(html, "<table class=\"heat\""));
                        assert_non_null(strstr(html, "<table class=\"ranked\">"));
                        /* ranked: the best first, the crash last */
                        const char *best = strstr(html, "<tr class=\"v-pass best\">");
                        const char *crash = strstr(html, "<tr class=\"v-crash\">");
                        assert_non_null(crash);
                        if (axes > 0) {
                                assert_non_null(best);
                                assert_true(best < crash);
                        }
                }
                free(html);
                fake_release(&f);
        }
}

/* A two-axis sweep with holes (one-at-a-time): the missing squares say so. */
static void test_heatmap_holes(void **state) {
        struct fake f;
        fake_init(&f, 2, 3);
        char *html = render(&f.v);
        assert_int_equal(count(html, "class=\"v-none\""), 1);
        assert_non_null(strstr(html, "not in this sweep"));
        free(html);
        fake_release(&f);
}

/* ---- header, charts, sections ---- */

static void test_header_and_charts(void **state) {
        struct fake f;
        fake_init(&f, 1, 4);
        for (size_t i = 0; i < 3; i++)
                f.cells[i].bench = json_pack("[{s:i, s:i, s:f, s:{s:f, s:f}, s:{s:f, s:f}}, "
                                             "{s:i, s:i, s:f, s:{s:f, s:f}, s:{s:f, s:f}}]",
                                             "concurrency", 1, "completed", 64, "output_tokens_per_s", 100.0 + 50.0 * (double)i,
                                             "ttft_ms", "p50", 10.0, "p99", 20.0, "itl_ms", "p50", 5.0, "p99", 7.0,
                                             "concurrency", 8, "completed", 64, "output_tokens_per_s", 400.0 + 50.0 * (double)i,
                                             "ttft_ms", "p50", 30.0, "p99", 60.0, "itl_ms", "p50", 9.0, "p99", 12.0);
        f.cells[3].verdict = VERDICT_TIMEOUT;
        f.cells[3].cause = "startup";
        f.cells[3].evidence = "not ready after 20m";
        char *html = render(&f.v);
        /* what works, the winner and its figure, in the header */
        assert_non_null(strstr(html, "<b>3 of 4</b> configurations tried work on this machine."));
        assert_non_null(strstr(html, "with <b class=\"fig\">200.0 tok/s @1</b>"));
        assert_non_null(strstr(html, "<b>no GPU information</b>"));
        assert_non_null(strstr(html, "<li class=\"badge v-pass\">3 pass</li>"));
        assert_non_null(strstr(html, "<li class=\"badge v-timeout\">1 timeout</li>"));
        /* one bar per passing cell, the best one marked; the latency chart has two panels */
        assert_int_equal(count(html, "<rect class=\"bar"), 3);
        assert_int_equal(count(html, "<rect class=\"bar best\""), 1);
        assert_non_null(strstr(html, "time to first token (ms)"));
        assert_non_null(strstr(html, "inter-token latency (ms)"));
        assert_int_equal(count(html, "<polyline"), 3 * 2 * 2);
        /* failures open, passes closed */
        assert_int_equal(count(html, "<details class=\"cell v-timeout\" id=\"c-"), 1);
        assert_non_null(strstr(html, "<details class=\"cell v-timeout\" id=\"c-000000000000abc3\" open>"));
        assert_non_null(strstr(html, "<details class=\"cell v-pass\" id=\"c-000000000000abc0\">"));
        /* the sections a person looks for */
        assert_non_null(strstr(html, "<section id=\"why\">"));
        assert_non_null(strstr(html, "<section id=\"host\">"));
        assert_non_null(strstr(html, "<section id=\"matrix-file\">"));
        assert_non_null(strstr(html, "@media print"));
        free(html);

        /* GPUs grouped; no bench anywhere: the latency chart says why it is empty */
        for (size_t i = 0; i < 3; i++) {
                json_decref(f.cells[i].bench);
                f.cells[i].bench = NULL;
        }
        json_object_set_new(f.v.host_json, "gpus",
                            json_pack("[{s:s, s:s, s:i}, {s:s, s:s, s:i}]", "name", "NVIDIA H200", "arch", "sm_90",
                                      "memory_mib", 143771, "name", "NVIDIA H200", "arch", "sm_90", "memory_mib", 143771));
        json_object_set_new(f.v.host_json, "driver", json_string("570.86"));
        html = render(&f.v);
        assert_non_null(strstr(html, "2 × <b>NVIDIA H200</b> (sm_90, 140 GiB) · driver 570.86"));
        assert_non_null(strstr(html, "No latency figures"));
        assert_non_null(strstr(html, "ranked by smoke-suite time"));
        free(html);

        /* nothing passed */
        for (size_t i = 0; i < 4; i++)
                f.cells[i].verdict = VERDICT_CRASH;
        html = render(&f.v);
        assert_non_null(strstr(html, "<b>No configuration works</b> on this machine (4 tried)."));
        assert_non_null(strstr(html, "nothing to chart"));
        free(html);
        fake_release(&f);
}

/* ---- the log excerpt around the evidence ---- */

/* A journal's place for the test: TMP/j.db, its run folder TMP/j, a sweep's logs in
 * TMP/j/run; f's journal_path names it. Returns TMP (caller frees), the logs' folder in
 * *ret_logs. */
static char *fake_run_folder(struct fake *f, char **ret_logs) {
        char *tmp = strdup("/tmp/gauntlet-test-html-XXXXXX");
        assert_non_null(mkdtemp(tmp));
        char *jdir = strdup_printf("%s/j", tmp);
        char *logs = strdup_printf("%s/j/run", tmp);
        assert_int_equal(mkdir(jdir, 0700), 0);
        assert_int_equal(mkdir(logs, 0700), 0);
        free(jdir);
        f->v.journal_path = strdup_printf("%s/j.db", tmp);
        *ret_logs = logs;
        return tmp;
}

static void fake_run_folder_release(struct fake *f, char *tmp, char *logs) {
        rmdir(logs);
        char *jdir = strdup_printf("%s/j", tmp);
        rmdir(jdir);
        rmdir(tmp);
        free(jdir);
        free(logs);
        free(tmp);
        free(f->v.journal_path);
}

/* The page as `report --format html` makes it: the evidence taken apart and the logs'
 * excerpts loaded into the view (report_load.h), then rendered. */
static char *render_loaded(struct fake *f) {
        for (size_t i = 0; i < f->v.n_cells; i++) {
                struct report_cell *c = &f->cells[i];
                report_evidence_release(&c->ev);
                assert_int_equal(report_evidence_parse(c->evidence, c->verdict, &c->ev), 0);
        }
        assert_int_equal(report_load_logs(&f->v), 0);
        char *html = render(&f->v);
        for (size_t i = 0; i < f->v.n_cells; i++) {
                report_evidence_release(&f->cells[i].ev);
                report_log_release(&f->cells[i].log);
        }
        return html;
}

static char *write_log(const char *dir, size_t lines, size_t evidence_at, const char *evidence) {
        char *path = strdup_printf("%s/cell-XXXXXX", dir);
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *f = fdopen(fd, "w");
        for (size_t i = 1; i <= lines; i++) {
                if (i == evidence_at)
                        fprintf(f, "    %s\r\n", evidence);
                else
                        fprintf(f, "log line number %zu <x>\n", i);
        }
        fclose(f);
        return path;
}

static void test_log_excerpt(void **state) {
        struct fake f;
        fake_init(&f, 1, 2);
        char *logs = NULL, *tmp = fake_run_folder(&f, &logs);
        char *log = write_log(logs, 40, 20, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB");
        f.cells[1].verdict = VERDICT_CRASH;
        f.cells[1].cause = "oom";
        f.cells[1].evidence = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
        f.cells[1].log_path = log;
        char *html = render_loaded(&f);
        assert_non_null(strstr(html, "around line 20 (the evidence, marked)"));
        assert_non_null(strstr(html, "<mark><span class=\"ln\">    20</span>     torch.OutOfMemoryError"));
        /* six lines on each side, escaped; no further */
        assert_non_null(strstr(html, "log line number 14 &lt;x&gt;"));
        assert_non_null(strstr(html, "log line number 26 &lt;x&gt;"));
        assert_null(strstr(html, "log line number 13 "));
        assert_null(strstr(html, "log line number 27 "));
        free(html);

        /* a signal's evidence quotes the last log line: that is the line found */
        f.cells[1].cause = "signal";
        f.cells[1].evidence = "killed by SIGKILL; last log line: log line number 40 <x>";
        html = render_loaded(&f);
        assert_non_null(strstr(html, "around line 40"));
        assert_non_null(strstr(html, "log line number 34 &lt;x&gt;"));
        assert_null(strstr(html, "log line number 33 "));
        free(html);

        /* an exit's evidence quotes the first error line: that is the line found */
        f.cells[1].cause = "exit";
        f.cells[1].evidence = "exited with status 1; first error line: log line number 30 <x>";
        html = render_loaded(&f);
        assert_non_null(strstr(html, "around line 30"));
        assert_non_null(strstr(html, "log line number 24 &lt;x&gt;"));
        assert_null(strstr(html, "log line number 23 "));
        free(html);

        /* evidence that is not in the log: the last lines */
        f.cells[1].cause = "startup";
        f.cells[1].verdict = VERDICT_TIMEOUT;
        f.cells[1].evidence = "not ready after 20m";
        html = render_loaded(&f);
        assert_non_null(strstr(html, "last 12 lines (the evidence is not a line of it)"));
        assert_non_null(strstr(html, "log line number 29 &lt;x&gt;"));
        assert_null(strstr(html, "log line number 28 "));
        assert_null(strstr(html, "<mark>"));
        free(html);

        /* a relative path is looked up under the sweep's cwd */
        const char *slash = strrchr(log, '/');
        char *dir = strndup(log, (size_t)(slash - log));
        f.v.cwd = dir;
        f.cells[1].log_path = (char *)slash + 1;
        html = render_loaded(&f);
        assert_non_null(strstr(html, "log line number 29 &lt;x&gt;"));
        free(html);
        free(dir);

        /* a FIFO is not read (it could block the report forever) */
        char *fifo = strdup_printf("%s/fifo", logs);
        assert_int_equal(mkfifo(fifo, 0600), 0);
        f.cells[1].log_path = fifo;
        f.v.cwd = NULL;
        html = render_loaded(&f);
        assert_non_null(strstr(html, "cannot be read"));
        free(html);
        unlink(fifo);
        free(fifo);

        /* a journal is data: a log_path edited to lead out of the run folder is named, not
         * read (#24: the last lines of /etc/shadow were on the page) */
        char *outside = write_log(tmp, 40, 20, "the secret of the outside file");
        f.cells[1].log_path = outside;
        html = render_loaded(&f);
        assert_null(strstr(html, "secret of the outside"));
        assert_null(strstr(html, "log line number"));
        assert_non_null(strstr(html, "is not under this journal's run folder"));
        assert_non_null(strstr(html, outside));
        free(html);
        /* nor through a symlink in the run folder, nor with .. in the path */
        char *link = strdup_printf("%s/link.log", logs);
        assert_int_equal(symlink(outside, link), 0);
        f.cells[1].log_path = link;
        html = render_loaded(&f);
        assert_null(strstr(html, "secret of the outside"));
        assert_non_null(strstr(html, "is not under this journal's run folder"));
        free(html);
        char *dotdot = strdup_printf("%s/../../%s", logs, strrchr(outside, '/') + 1);
        f.cells[1].log_path = dotdot;
        html = render_loaded(&f);
        assert_null(strstr(html, "secret of the outside"));
        assert_non_null(strstr(html, "is not under this journal's run folder"));
        free(html);
        unlink(link);
        unlink(outside);
        free(link);
        free(dotdot);
        free(outside);

        unlink(log);
        free(log);
        fake_run_folder_release(&f, tmp, logs);
        fake_release(&f);
}

/* A huge log line is cut for the page, and a long log does not need to fit in memory. */
static void test_log_long_lines(void **state) {
        struct fake f;
        fake_init(&f, 0, 1);
        char *logs = NULL, *tmp = fake_run_folder(&f, &logs);
        char *path = strdup_printf("%s/long-XXXXXX", logs);
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        FILE *fp = fdopen(fd, "w");
        for (int i = 0; i < 5000; i++)
                fputc('x', fp);
        fputs("\nRuntimeError: CUDA error: an illegal memory access was encountered\nlast\n", fp);
        fclose(fp);
        f.cells[0].verdict = VERDICT_CRASH;
        f.cells[0].cause = "cuda";
        f.cells[0].evidence = "RuntimeError: CUDA error: an illegal memory access was encountered";
        f.cells[0].log_path = path;
        char *html = render_loaded(&f);
        assert_non_null(strstr(html, "around line 2"));
        /* 400 characters of the long line, then the cut mark */
        const char *x = strstr(html, "xxxxxxxx");
        assert_non_null(x);
        size_t run = strspn(x, "x");
        assert_int_equal(run, 400);
        assert_true(strncmp(x + run, "…", strlen("…")) == 0);
        free(html);
        unlink(path);
        free(path);
        fake_run_folder_release(&f, tmp, logs);
        fake_release(&f);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escape),
                cmocka_unit_test(test_hostile),
                cmocka_unit_test(test_secrets_everywhere),
                cmocka_unit_test(test_shape),
                cmocka_unit_test(test_heatmap_holes),
                cmocka_unit_test(test_header_and_charts),
                cmocka_unit_test(test_log_excerpt),
                cmocka_unit_test(test_log_long_lines),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
