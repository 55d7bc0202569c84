/* emit.c -- systemd units and launch scripts, every word escaped for where it goes. */
#include "report/emit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/metrics.h"
#include "text/objective.h"
#include "text/placeholder.h"
#include "report/report.h"
#include "base/utf8.h"

int emit_quote_systemd(struct buf *out, const char *s, bool in_exec) {
        int r = 0;
        if (in_exec && strcmp(s, ";") == 0)
                return buf_puts(out, "\\;");
        if ((r = buf_puts(out, "\"")) < 0)
                return r;
        for (const unsigned char *p = (const unsigned char *)s; *p && r >= 0;) {
                size_t n = utf8_decode(p, SIZE_MAX, NULL, NULL);
                if (*p == '\\' || *p == '"')
                        r = buf_printf(out, "\\%c", *p);
                else if (*p == '%')
                        r = buf_puts(out, "%%");
                else if (*p == '$' && in_exec)
                        r = buf_puts(out, "$$");
                else if (*p < 0x20 || *p == 0x7f || n == 0)
                        r = buf_printf(out, "\\x%02x", *p);
                else {
                        r = buf_append(out, p, n);
                        p += n;
                        continue;
                }
                p++;
        }
        if (r >= 0)
                r = buf_puts(out, "\"");
        return r;
}

int emit_quote_sh(struct buf *out, const char *s) {
        int r = buf_puts(out, "'");
        for (const char *p = s; *p && r >= 0; p++)
                r = *p == '\'' ? buf_puts(out, "'\\''") : buf_append(out, p, 1);
        if (r >= 0)
                r = buf_puts(out, "'");
        return r;
}

int emit_comment(struct buf *out, const char *line) {
        int r = buf_puts(out, "# ");
        for (const unsigned char *p = (const unsigned char *)line; *p && r >= 0; p++) {
                if (*p == '\n')
                        r = buf_puts(out, "\\n");
                else if (*p < 0x20 || *p == 0x7f || (*p == '\\' && !p[1]))
                        r = buf_printf(out, "\\x%02x", *p);
                else
                        r = buf_append(out, p, 1);
        }
        if (r >= 0)
                r = buf_puts(out, "\n");
        return r;
}

static bool is_executable_file(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int emit_resolve_executable(const char *name, const char *path_env, const char *workdir, char **ret) {
        char *found = NULL;
        if (name[0] == '/' || (strchr(name, '/') && !workdir)) {
                found = strdup(name);
                if (!found)
                        return -ENOMEM;
                *ret = found;
                return name[0] == '/';
        }
        if (strchr(name, '/')) {
                found = strdup_printf("%s/%s", workdir, name);
                if (!found)
                        return -ENOMEM;
                *ret = found;
                return 1;
        }
        if (!path_env)
                path_env = getenv("PATH");
        for (const char *p = path_env; p && *p && *name;) {
                size_t n = strcspn(p, ":");
                if (n > 0 && p[0] == '/') {
                        _cleanup_free_ char *cand = strdup_printf("%.*s/%s", (int)n, p, name);
                        if (!cand)
                                return -ENOMEM;
                        if (is_executable_file(cand)) {
                                *ret = TAKE_PTR(cand);
                                return 1;
                        }
                }
                p += n;
                if (*p == ':')
                        p++;
        }
        found = strdup(name);
        if (!found)
                return -ENOMEM;
        *ret = found;
        return 0;
}

/* Text for Description=: one line; control characters become spaces, % is %%, and a
 * trailing backslash (a continuation in unit files) is dropped. */
static int put_description(struct buf *out, const char *s) {
        int r = 0;
        size_t n = strlen(s);
        while (n > 0 && (s[n - 1] == '\\' || s[n - 1] == ' '))
                n--;
        for (size_t i = 0; i < n && r >= 0; i++) {
                unsigned char c = (unsigned char)s[i];
                if (c == '%')
                        r = buf_puts(out, "%%");
                else if (c < 0x20 || c == 0x7f)
                        r = buf_puts(out, " ");
                else
                        r = buf_append(out, &c, 1);
        }
        return r;
}

static bool env_name_ok_sh(const char *e, size_t n) {
        if (n == 0 || !((e[0] >= 'A' && e[0] <= 'Z') || (e[0] >= 'a' && e[0] <= 'z') || e[0] == '_'))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!((e[i] >= 'A' && e[i] <= 'Z') || (e[i] >= 'a' && e[i] <= 'z') || (e[i] >= '0' && e[i] <= '9') ||
                      e[i] == '_'))
                        return false;
        return true;
}

static int put_comments(struct buf *out, char *const *comments) {
        int r = 0;
        for (size_t i = 0; comments && comments[i] && r >= 0; i++)
                r = emit_comment(out, comments[i]);
        return r;
}

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

/* WorkingDirectory= is one unquoted line: a trailing backslash would continue it into
 * the next directive, and blanks at either end are stripped. */
static bool workdir_ok_systemd(const char *w) {
        size_t n = strlen(w);
        return w[0] == '/' && !has_control(w) && w[n - 1] != '\\' && w[n - 1] != ' ' && w[n - 1] != '\t';
}

static int normalize_text(const char *path, char **ret) {
        size_t n = strlen(path);
        char *out = malloc(n + 2), *o = out;
        if (!out)
                return -ENOMEM;
        for (const char *p = path; *p;) {
                while (*p == '/')
                        p++;
                const char *e = strchrnul(p, '/');
                size_t k = (size_t)(e - p);
                if (k == 0 || (k == 1 && p[0] == '.')) {
                        /* nothing, or "." */
                } else if (k == 2 && p[0] == '.' && p[1] == '.') {
                        while (o > out && *--o != '/')
                                ;
                } else {
                        *o++ = '/';
                        memcpy(o, p, k);
                        o += k;
                }
                p = e;
        }
        if (o == out)
                *o++ = '/';
        *o = '\0';
        *ret = out;
        return 0;
}

int emit_workdir_normalize(const char *path, char **ret) {
        if (path[0] != '/')
                return -EINVAL;
        char *real = realpath(path, NULL);
        if (real) {
                *ret = real;
                return 0;
        }
        return normalize_text(path, ret);
}

/* Whether the NAME of "NAME=VALUE" is env_name_valid (what systemd keeps). */
static bool env_entry_ok_systemd(const char *e) {
        const char *eq = strchr(e, '=');
        if (!eq)
                return false;
        _cleanup_free_ char *name = strndup(e, (size_t)(eq - e));
        return name && env_name_valid(name);
}

int emit_systemd(const struct emit_spec *s, struct buf *out) {
        int r;
        if (!s->argv || !s->argv[0] || !s->argv[0][0])
                return -EINVAL;
        if (s->workdir && !workdir_ok_systemd(s->workdir))
                return -EINVAL;
        /* systemd drops an assignment whose name it does not take, silently at run time:
         * the unit would run another server than the one tested */
        for (size_t i = 0; s->env && s->env[i]; i++)
                if (!env_entry_ok_systemd(s->env[i]))
                        return -EINVAL;
        _cleanup_free_ char *exe = NULL;
        r = emit_resolve_executable(s->argv[0], s->path_env, s->workdir, &exe);
        if (r < 0)
                return r;

        if ((r = put_comments(out, s->comments)) < 0)
                return r;
        if ((r = buf_puts(out, "\n[Unit]\nDescription=")) < 0 ||
            (r = put_description(out, s->description ? s->description : "LLM inference server (gauntlet)")) < 0 ||
            (r = buf_puts(out, "\nAfter=network-online.target\nWants=network-online.target\n\n[Service]\n"
                               "Type=simple\nExecStart=")) < 0)
                return r;
        for (size_t i = 0; s->argv[i]; i++) {
                if ((i > 0 && (r = buf_puts(out, " ")) < 0) ||
                    (r = emit_quote_systemd(out, i == 0 ? exe : s->argv[i], true)) < 0)
                        return r;
        }
        if ((r = buf_puts(out, "\n")) < 0)
                return r;
        for (size_t i = 0; s->env && s->env[i]; i++)
                if ((r = buf_puts(out, "Environment=")) < 0 || (r = emit_quote_systemd(out, s->env[i], false)) < 0 ||
                    (r = buf_puts(out, "\n")) < 0)
                        return r;
        if (s->workdir) {
                /* WorkingDirectory= takes the path unquoted; only % needs escaping. */
                if ((r = buf_puts(out, "WorkingDirectory=")) < 0)
                        return r;
                for (const char *p = s->workdir; *p && r >= 0; p++)
                        r = *p == '%' ? buf_puts(out, "%%") : buf_append(out, p, 1);
                if (r < 0 || (r = buf_puts(out, "\n")) < 0)
                        return r;
        }
        if ((r = buf_puts(out, "Restart=on-failure\n")) < 0)
                return r;
        if (s->startup_timeout > 0 &&
            (r = buf_printf(out, "TimeoutStartSec=%llu\n",
                            (unsigned long long)((s->startup_timeout + USEC_PER_SEC - 1) / USEC_PER_SEC))) < 0)
                return r;
        return buf_puts(out, "KillMode=control-group\n\n[Install]\nWantedBy=multi-user.target\n");
}

int emit_script(const struct emit_spec *s, struct buf *out) {
        int r;
        if (!s->argv || !s->argv[0] || !s->argv[0][0])
                return -EINVAL;
        bool via_env = false;
        for (size_t i = 0; s->env && s->env[i]; i++) {
                const char *eq = strchr(s->env[i], '=');
                if (!eq || eq == s->env[i])
                        return -EINVAL;
                if (!env_name_ok_sh(s->env[i], (size_t)(eq - s->env[i])))
                        via_env = true;
        }
        /* env(1) would take an argv[0] holding '=' for one more assignment. */
        if (via_env && strchr(s->argv[0], '='))
                return -EINVAL;

        if ((r = buf_puts(out, "#!/bin/sh\n")) < 0 || (r = put_comments(out, s->comments)) < 0 ||
            (r = buf_puts(out, "set -e\n")) < 0)
                return r;
        if (s->workdir) {
                /* a relative one as ./DIR: cd takes "-" for $OLDPWD, "-P" for an option */
                _cleanup_free_ char *dir = s->workdir[0] == '/' ? strdup(s->workdir) : strdup_printf("./%s", s->workdir);
                if (!dir)
                        return -ENOMEM;
                if ((r = buf_puts(out, "cd ")) < 0 || (r = emit_quote_sh(out, dir)) < 0 ||
                    (r = buf_puts(out, "\n")) < 0)
                        return r;
        }
        for (size_t i = 0; s->env && s->env[i]; i++) {
                const char *eq = strchr(s->env[i], '=');
                if (!env_name_ok_sh(s->env[i], (size_t)(eq - s->env[i])))
                        continue;
                if ((r = buf_printf(out, "export %.*s=", (int)(eq - s->env[i]), s->env[i])) < 0 ||
                    (r = emit_quote_sh(out, eq + 1)) < 0 || (r = buf_puts(out, "\n")) < 0)
                        return r;
        }
        if ((r = buf_puts(out, "exec")) < 0)
                return r;
        if (via_env) {
                /* "--": a name starting with '-' is an assignment, not an option
                 * ("--unset=X", "--chdir=/") */
                if ((r = buf_puts(out, " env --")) < 0)
                        return r;
                for (size_t i = 0; s->env[i]; i++) {
                        const char *eq = strchr(s->env[i], '=');
                        if (env_name_ok_sh(s->env[i], (size_t)(eq - s->env[i])))
                                continue;
                        if ((r = buf_puts(out, " ")) < 0 || (r = emit_quote_sh(out, s->env[i])) < 0)
                                return r;
                }
        }
        for (size_t i = 0; s->argv[i]; i++)
                if ((r = buf_puts(out, " ")) < 0 || (r = emit_quote_sh(out, s->argv[i])) < 0)
                        return r;
        return buf_puts(out, "\n");
}

/* ---- a cell of a report view as a unit or script: what `run` and `emit` write ---- */

/* r, with *ret_error (if asked for) set to the message; for emit_cell's errors. */
static int fail(char **ret_error, int r, const char *fmt, ...) _printf_(3, 4);
static int fail(char **ret_error, int r, const char *fmt, ...) {
        if (ret_error) {
                va_list ap;
                va_start(ap, fmt);
                if (vasprintf(ret_error, fmt, ap) < 0)
                        *ret_error = NULL;
                va_end(ap);
        }
        return r;
}

static int push_printf(char ***v, const char *fmt, ...) _printf_(2, 3);
static int push_printf(char ***v, const char *fmt, ...) {
        va_list ap;
        char *s = NULL;
        va_start(ap, fmt);
        int k = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        return strv_consume(v, s);
}

/* The header comments: where it came from and what it won with. */
static int build_comments(const struct report_view *v, const struct report_cell *c, bool chosen_by_best,
                          const char *name, bool systemd, char ***ret) {
        _cleanup_strv_free_ char **lines = NULL;
        _cleanup_buf_ struct buf b;
        int r;
        buf_init(&b, 0);

        _cleanup_free_ char *abs = realpath(v->journal_path, NULL);
        r = push_printf(&lines, "Generated by gauntlet %s from journal %s (sweep %lld).", GAUNTLET_VERSION,
                        abs ? abs : v->journal_path, (long long)v->sweep_id);
        if (r >= 0)
                r = push_printf(&lines, "Engine %s, model %s, objective %s.", v->engine, v->model ? v->model : "-",
                                v->objective ? v->objective : OBJECTIVE_DEFAULT);
        for (size_t i = 0; i < v->n_axes && r >= 0; i++)
                r = buf_printf(&b, "%s%s=%s", i ? " " : "", v->axes[i], c->axis_values[i] ? c->axis_values[i] : "?");
        if (r >= 0)
                r = push_printf(&lines, "Cell %s: %s (%s).", c->id, v->n_axes ? buf_str(&b) : "(base)",
                                chosen_by_best ? "the best passing cell" : "chosen with --cell");
        if (r >= 0 && c->has_attempt) {
                buf_reset(&b);
                for (size_t i = 0; i < c->n_checks && r >= 0; i++)
                        r = buf_printf(&b, "%s%s %s %.2fs", i ? ", " : "", c->checks[i].name ? c->checks[i].name : "?",
                                       verdict_to_string(c->checks[i].verdict),
                                       (double)c->checks[i].latency / (double)USEC_PER_SEC);
                char ready[48] = "never ready";
                if (c->ready_after)
                        snprintf(ready, sizeof(ready), "ready after %.1fs", (double)c->ready_after / (double)USEC_PER_SEC);
                if (r >= 0)
                        r = push_printf(&lines, "Verdict %s%s%s; %s; checks: %s.", report_cell_verdict(c),
                                        c->cause ? "/" : "", c->cause ? c->cause : "", ready,
                                        c->n_checks ? buf_str(&b) : "none");
        } else if (r >= 0)
                r = push_printf(&lines, "Verdict: %s (this cell has no settled attempt).", report_cell_verdict(c));
        _cleanup_free_ char *fig = report_cell_figure(v, c);
        if (r >= 0 && fig)
                r = push_printf(&lines, "%s %s.", chosen_by_best ? "Won with:" : "Figures:", fig);
        _cleanup_free_ char *eval = report_cell_eval_line(v, c);
        if (r >= 0 && eval)
                r = push_printf(&lines, "Eval (%s): %s.", v->eval.source ? v->eval.source : "?", eval + strlen("eval "));
        size_t i;
        json_t *e;
        json_array_foreach(c->bench, i, e) {
                if (r < 0)
                        break;
                json_t *tok = json_object_get(e, metric_key(METRIC_OUTPUT_TOKENS_PER_S));
                json_t *ttft = json_object_get(json_object_get(e, metric_key(METRIC_TTFT_MS)),
                                               metric_stat_key(METRIC_STAT_P50));
                json_t *itl = json_object_get(json_object_get(e, metric_key(METRIC_ITL_MS)),
                                              metric_stat_key(METRIC_STAT_P50));
                buf_reset(&b);
                r = buf_printf(&b, "Bench at concurrency %lld:",
                               (long long)json_integer_value(json_object_get(e, metric_key(METRIC_CONCURRENCY))));
                if (r >= 0 && json_is_number(tok))
                        r = buf_printf(&b, " %.1f output tok/s", json_number_value(tok));
                if (r >= 0 && json_is_number(ttft))
                        r = buf_printf(&b, ", ttft p50 %.1f ms", json_number_value(ttft));
                if (r >= 0 && json_is_number(itl))
                        r = buf_printf(&b, ", itl p50 %.2f ms", json_number_value(itl));
                if (r >= 0)
                        r = push_printf(&lines, "%s.", buf_str(&b));
        }
        if (r >= 0 && v->against)
                r = report_against_lines(v->against, &lines);
        if (r >= 0 && systemd)
                r = push_printf(&lines,
                                "Install: save as /etc/systemd/system/%s.service, then systemctl daemon-reload "
                                "&& systemctl enable --now %s",
                                name, name);
        if (r >= 0)
                r = push_printf(&lines, "Holds the real argv and environment (keys included): keep it private.");
        if (r < 0)
                return r;
        *ret = TAKE_PTR(lines);
        return 0;
}

int emit_cell(const struct report_view *v, size_t idx, const struct emit_cell_options *o, struct buf *out,
              char **ret_error) {
        const bool systemd = o->systemd;
        const char *kind = systemd ? "systemd unit" : "script";
        const char *name = o->name;
        if (idx >= v->n_cells)
                return fail(ret_error, -EINVAL, "no cell %zu in the view", idx);
        const struct report_cell *c = &v->cells[idx];
        int port = v->port ? v->port : o->port ? o->port : c->port;
        if (port <= 0)
                return fail(ret_error, -EINVAL, "no port is known for cell %s; give --port", c->id);

        _cleanup_strv_free_ char **args = NULL, **comments = NULL;
        _cleanup_free_ char *default_name = NULL, *description = NULL, *workdir = NULL;
        int r = placeholder_fill_argv(c->argv, v->host ? v->host : "127.0.0.1", port, &args);
        if (r >= 0 && !name) {
                default_name = strdup_printf("gauntlet-%s", v->engine);
                if (!default_name)
                        r = -ENOMEM;
                /* Engine names are ours ("llama.cpp", "sglang"): all valid in unit names. */
                name = default_name;
        }
        if (r >= 0 && v->workdir && v->workdir[0] != '/' && v->cwd)
                workdir = strdup_printf("%s/%s", v->cwd, v->workdir);
        else if (r >= 0 && (v->workdir || v->cwd))
                workdir = strdup(v->workdir ? v->workdir : v->cwd);
        if (r >= 0 && (v->workdir || v->cwd) && !workdir)
                r = -ENOMEM;
        /* systemd refuses a WorkingDirectory= with "." or ".." in it ("workdir: ../models") */
        if (r >= 0 && workdir && workdir[0] == '/') {
                char *norm = NULL;
                if ((r = emit_workdir_normalize(workdir, &norm)) >= 0) {
                        free(workdir);
                        workdir = norm;
                }
        }
        if (r >= 0 && !(description = strdup_printf("%s: %s serving %s (gauntlet cell %s)", name, v->engine,
                                                    v->model ? v->model : "a model", c->id)))
                r = -ENOMEM;
        if (r >= 0)
                r = build_comments(v, c, o->chosen_by_best, name, systemd, &comments);
        if (r < 0)
                return fail(ret_error, r, "cannot build the %s: %s", kind, strerror(-r));

        struct emit_spec spec = {
                .argv = args,
                .env = c->env,
                .workdir = workdir,
                .startup_timeout = v->startup_timeout,
                .description = description,
                .comments = comments,
        };
        r = systemd ? emit_systemd(&spec, out) : emit_script(&spec, out);
        if (r == -EINVAL)
                return fail(ret_error, r,
                            "cell %s cannot be written as a %s: an environment name or the working directory "
                            "cannot be expressed there",
                            c->id, systemd ? "systemd unit" : "shell script");
        if (r < 0)
                return fail(ret_error, r, "cannot build the %s: %s", kind, strerror(-r));
        return 0;
}
