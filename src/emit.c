/* emit.c -- systemd units and launch scripts, every word escaped for where it goes. */
#include "emit.h"
#include "utf8.h"

#include <string.h>
#include <sys/stat.h>

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

static bool env_name_ok_systemd(const char *e, size_t n) {
        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)e[i] < 0x20 || e[i] == 0x7f)
                        return false;
        return true;
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

int emit_systemd(const struct emit_spec *s, struct buf *out) {
        int r;
        if (!s->argv || !s->argv[0] || !s->argv[0][0])
                return -EINVAL;
        if (s->workdir && (s->workdir[0] != '/' || has_control(s->workdir)))
                return -EINVAL;
        for (size_t i = 0; s->env && s->env[i]; i++) {
                const char *eq = strchr(s->env[i], '=');
                if (!eq || !env_name_ok_systemd(s->env[i], (size_t)(eq - s->env[i])))
                        return -EINVAL;
        }
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
                if ((r = buf_puts(out, "cd ")) < 0 || (r = emit_quote_sh(out, s->workdir)) < 0 ||
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
                if ((r = buf_puts(out, " env")) < 0)
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
