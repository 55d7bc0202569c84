/* matrix.c -- the matrix schema: a YAML tree (ytree.h) -> a checked struct matrix.
 *
 * Known keys, types, cross references and limits; the first problem found becomes the one
 * "FILE:LINE: message" line handed back. The YAML and the byte checks below it are
 * ytree.c's, the `checks:` list is suite.c's; the last checks expand the cells (cells.c)
 * so that whatever loads also expands.
 */
#include "config/matrix.h"
#include "config/options.h"

#include <ctype.h>
#include <string.h>

#include "text/buf.h"
#include "base/metrics.h"
#include "text/objective.h"
#include "config/suite.h"
#include "config/ytree.h"

static const char *const top_keys[] = {
        "engine", "model",    "tokenizer", "command",  "args",   "env",     "host",      "port",
        "tp",     "workdir",  "startup_timeout", "request_timeout", "stop_timeout", "straggler_timeout", "memory_timeout", "gpus_per_cell", "axes",
        "strategy", "baseline", "exclude", "checks", "bench",   "objective", "emit", "eval", "reference",
        "launcher", "slurm", "budget", "probes", "port_owner", "version_command",
        NULL,
};

static void axis_value_release(struct axis_value *v) {
        free(v->name);
        strv_free(v->args);
        strv_free(v->env);
}

static bool strv_has_text(const char *const *v, const char *needle) {
        for (size_t i = 0; v && v[i]; i++)
                if (strstr(v[i], needle))
                        return true;
        return false;
}

static int parse_engine(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        const struct profile *const *all = profile_all();
        const char *names[16];
        size_t n = 0;
        for (; n < ELEMENTSOF(names) && all[n]; n++)
                names[n] = all[n]->name;
        const struct ynode *v = y_get(root, "engine");
        if (!v) {
                _cleanup_buf_ struct buf b;
                buf_init(&b, 4096);
                ytree_join_names(&b, names, n);
                return ytree_fail(c, root->line, "missing 'engine' (one of: %s)", buf_str(&b));
        }
        const char *s;
        int r = y_scalar(c, v, "engine", &s);
        if (r < 0)
                return r;
        if (!(m->profile = profile_find(s))) {
                _cleanup_free_ char *h = ytree_hint(s, names, n);
                return ytree_fail(c, v->line, "unknown engine '%s'%s", ytree_esc(c, s), h ? h : "");
        }
        m->line_command = v->line; /* the engine's own command, unless `command:` gives one */
        return (m->engine = strdup(m->profile->name)) ? 0 : -ENOMEM;
}

static char *beside_matrix(const struct matrix *m, const char *file);

static int parse_command(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *v = y_get(root, "command"), *mv = y_get(root, "model");
        int r;
        bool generic = strcmp(m->engine, "generic") == 0;
        if (v && !generic)
                return ytree_fail(c, y_key(root, "command")->line,
                            "command is only for engine: generic (engine '%s' has its own)", m->engine);
        if (generic && !v)
                return ytree_fail(c, root->line, "engine generic needs 'command:' (a list with {port} in it)");
        if (v) {
                m->line_command = v->line;
                if ((r = y_strv(c, v, "command", MATRIX_MAX_ARGS, &m->command)) < 0)
                        return r;
                if (!m->command[0])
                        return ytree_fail(c, v->line, "command must not be empty");
                if (!strv_has_text((const char *const *)m->command, "{port}"))
                        return ytree_fail(c, v->line, "command must contain {port} (gauntlet picks the port)");
        }
        if (mv && (r = y_string(c, mv, "model", &m->model)) < 0)
                return r;
        if (!m->model) {
                if (m->command && strv_has_text((const char *const *)m->command, "{model}"))
                        return ytree_fail(c, v->line, "command uses {model} but no 'model:' is given");
                if (!m->command && strv_has_text(m->profile->command, "{model}"))
                        return ytree_fail(c, y_get(root, "engine")->line, "engine '%s' needs 'model:'", m->engine);
        }
        return 0;
}

/* The TP size written in args: "--tp 8", "--tp=8", or the same with --tp-size. */
static int args_tp(const struct matrix *m) {
        const char *flags[] = {m->profile->tp_flag, "--tp-size"};
        for (size_t i = 0; m->args && m->args[i]; i++)
                for (size_t f = 0; f < ELEMENTSOF(flags); f++) {
                        if (!flags[f])
                                continue;
                        const char *val = NULL;
                        size_t fl = strlen(flags[f]);
                        if (strcmp(m->args[i], flags[f]) == 0)
                                val = m->args[i + 1];
                        else if (strncmp(m->args[i], flags[f], fl) == 0 && m->args[i][fl] == '=')
                                val = m->args[i] + fl + 1;
                        if (!val)
                                continue;
                        char *end;
                        long t = strtol(val, &end, 10);
                        if (*val && *end == '\0' && t > 0 && t <= 1024)
                                return (int)t;
                }
        return 0;
}

/* How many commands `port_owner:` may list. */
#define MATRIX_MAX_PORT_OWNERS 16

/* `port_owner:` launched (the default), any, or a list of command names (a proxy that holds
 * the port on the server's behalf, as docker-proxy does). */
static int parse_port_owner(struct ytree_ctx *c, const struct ynode *v, struct matrix *m) {
        int r;
        if (v->kind == Y_SEQ) {
                if ((r = y_strv(c, v, "port_owner", MATRIX_MAX_PORT_OWNERS, &m->port_owners)) < 0)
                        return r;
                for (char **p = m->port_owners; *p; p++)
                        if (!**p || strchr(*p, '/'))
                                return ytree_fail(c, v->line, "port_owner: '%s' is not a command name",
                                                  ytree_esc(c, *p));
                if (!m->port_owners[0])
                        return ytree_fail(c, v->line, "port_owner: the list is empty (launched, any, or command names)");
                return 0;
        }
        const char *s;
        if ((r = y_scalar(c, v, "port_owner", &s)) < 0)
                return r;
        if (strcmp(s, "any") == 0)
                m->port_owner_any = true;
        else if (strcmp(s, "launched") != 0)
                return ytree_fail(c, v->line, "port_owner '%s' is not launched, any or a list of command names",
                                  ytree_esc(c, s));
        return 0;
}

/* Whether v is a number with a size suffix: "32k", "1.5M", "4GiB", "8gb". */
static bool size_suffixed(const char *v) {
        const char *p = v;
        if (!isdigit((unsigned char)*p))
                return false;
        while (isdigit((unsigned char)*p))
                p++;
        if (*p == '.' && isdigit((unsigned char)p[1]))
                for (p++; isdigit((unsigned char)*p);)
                        p++;
        if (!*p || !strchr("kKmMgGtT", *p))
                return false;
        p++;
        p += *p == 'i' || *p == 'I';
        p += *p == 'b' || *p == 'B';
        return *p == '\0';
}

/* For an engine that reads a number by its leading digits (profile plain_numbers), a
 * number with a size suffix in args (after a flag, or as --flag=32k) or in the value of one
 * of its argument keys of env is refused: the engine would silently take "-c 32k" for a
 * context of 32 tokens (llama.cpp pads it to 256; LLAMA_ARG_CTX_SIZE=1k aborted on an
 * assertion that says nothing of why). */
static int check_size_suffixes(struct ytree_ctx *c, const struct matrix *m, unsigned line, char *const *args,
                               char *const *env) {
        const struct profile *p = m->profile;
        if (!p || !p->plain_numbers)
                return 0;
        const char *flag = NULL, *value = NULL, *sep = "=";
        size_t flag_len = 0;
        for (size_t i = 0; args && args[i] && !value; i++) {
                const char *eq = args[i][0] == '-' ? strchr(args[i], '=') : NULL;
                if (eq && size_suffixed(eq + 1)) {
                        flag = args[i];
                        flag_len = (size_t)(eq - args[i]);
                        value = eq + 1;
                } else if (i > 0 && args[i - 1][0] == '-' && size_suffixed(args[i])) {
                        flag = args[i - 1];
                        flag_len = strlen(flag);
                        value = args[i];
                        sep = " ";
                }
        }
        size_t pre = p->arg_env_prefix ? strlen(p->arg_env_prefix) : 0;
        for (size_t i = 0; pre && env && env[i] && !value; i++) {
                const char *eq = strchr(env[i], '=');
                if (eq && strncmp(env[i], p->arg_env_prefix, pre) == 0 && size_suffixed(eq + 1)) {
                        flag = env[i];
                        flag_len = (size_t)(eq - env[i]);
                        value = eq + 1;
                }
        }
        if (!value)
                return 0;
        int digits = (int)strspn(value, "0123456789.");
        _cleanup_free_ char *name = strndup(flag, flag_len);
        if (!name)
                return -ENOMEM;
        return ytree_fail(c, line,
                          "%s reads '%s%s%s' as %.*s: it takes no size suffix (k, M, G), so write the whole number",
                          p->name, ytree_esc(c, name), sep, ytree_esc(c, value), digits, value);
}

static int parse_base(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *v;
        int r;
        if ((v = y_get(root, "args")) && (r = y_strv(c, v, "args", MATRIX_MAX_ARGS, &m->args)) < 0)
                return r;
        if (v)
                m->line_args = y_key(root, "args")->line;
        if ((v = y_get(root, "env")) && (r = y_env(c, v, "env", MATRIX_MAX_ENV, &m->env)) < 0)
                return r;
        if ((r = check_size_suffixes(c, m, m->line_args ? m->line_args : root->line, m->args, NULL)) < 0 ||
            (r = check_size_suffixes(c, m, v ? y_key(root, "env")->line : root->line, NULL, m->env)) < 0)
                return r;
        if (!(m->host = strdup("127.0.0.1")))
                return -ENOMEM;
        if ((v = y_get(root, "host"))) {
                m->line_host = v->line;
                if ((r = y_string(c, v, "host", &m->host)) < 0)
                        return r;
                if (!*m->host || strpbrk(m->host, " \t/"))
                        return ytree_fail(c, v->line, "host '%s' is not a host name or address", ytree_esc(c, m->host));
        }
        if ((v = y_get(root, "port")) && (r = y_int(c, v, "port", 0, 65535, &m->port)) < 0)
                return r;
        if ((v = y_get(root, "tokenizer"))) {
                m->line_tokenizer = v->line;
                if ((r = y_string(c, v, "tokenizer", &m->tokenizer)) < 0)
                        return r;
                if (!*m->tokenizer)
                        return ytree_fail(c, v->line, "tokenizer must be a path to the model's tokenizer, or none");
                if (strcmp(m->tokenizer, "none") != 0) { /* relative to the matrix file, as eval.file */
                        char *p = beside_matrix(m, m->tokenizer);
                        if (!p)
                                return -ENOMEM;
                        free(m->tokenizer);
                        m->tokenizer = p;
                }
        }
        if ((v = y_get(root, "port_owner")) && (r = parse_port_owner(c, v, m)) < 0)
                return r;
        /* the provenance's engine version (docs/provenance.md): an argv, "{program}" allowed */
        if ((v = y_get(root, "version_command")) && (r = y_strv(c, v, "version_command", MATRIX_MAX_ARGS,
                                                                 &m->version_command)) < 0)
                return r;
        if (m->version_command && !m->version_command[0])
                return ytree_fail(c, v->line, "version_command must name a program");
        if ((v = y_get(root, "workdir"))) {
                m->line_workdir = v->line;
                if ((r = y_string(c, v, "workdir", &m->workdir)) < 0)
                        return r;
                /* The unit's WorkingDirectory= is one unquoted line: a control character
                 * breaks it, a trailing backslash continues it into the next directive, and
                 * blanks at either end are stripped. */
                size_t n = strlen(m->workdir);
                bool control = false;
                for (const char *p = m->workdir; *p; p++)
                        control |= (unsigned char)*p < 0x20 || *p == 0x7f;
                if (n == 0 || control || m->workdir[n - 1] == '\\' || strchr(" \t", m->workdir[0]) ||
                    strchr(" \t", m->workdir[n - 1]))
                        return ytree_fail(c, v->line,
                                          "workdir '%s' cannot be written in a systemd unit (empty, a control "
                                          "character, a trailing backslash, or blanks at an end)",
                                          ytree_esc(c, m->workdir));
        }
        int from_args = args_tp(m);
        m->tp = from_args;
        if ((v = y_get(root, "tp"))) {
                if ((r = y_int(c, v, "tp", 1, 1024, &m->tp)) < 0)
                        return r;
                if (from_args && from_args != m->tp)
                        return ytree_fail(c, v->line, "tp: %d disagrees with the %d in args", m->tp, from_args);
        }
        m->startup_timeout = 20 * 60 * USEC_PER_SEC;
        m->request_timeout = 5 * 60 * USEC_PER_SEC;
        m->stop_timeout = 30 * USEC_PER_SEC;
        if ((v = y_get(root, "startup_timeout")) &&
            (r = y_duration(c, v, "startup_timeout", &m->startup_timeout)) < 0)
                return r;
        if ((v = y_get(root, "request_timeout")) &&
            (r = y_duration(c, v, "request_timeout", &m->request_timeout)) < 0)
                return r;
        if ((v = y_get(root, "stop_timeout")) && (r = y_duration(c, v, "stop_timeout", &m->stop_timeout)) < 0)
                return r;
        m->straggler_timeout = MIN(USEC_PER_SEC, m->stop_timeout);
        if ((v = y_get(root, "straggler_timeout")) &&
            (r = y_duration(c, v, "straggler_timeout", &m->straggler_timeout)) < 0)
                return r;
        m->straggler_timeout = MIN(m->straggler_timeout, m->stop_timeout);
        m->gpus_per_cell = m->tp;
        if ((v = y_get(root, "gpus_per_cell")) && (r = y_int(c, v, "gpus_per_cell", 0, 1024, &m->gpus_per_cell)) < 0)
                return r;
        m->memory_timeout = 2 * 60 * USEC_PER_SEC;
        if ((v = y_get(root, "memory_timeout")) &&
            (r = y_duration(c, v, "memory_timeout", &m->memory_timeout)) < 0)
                return r;
        return 0;
}

static int parse_value(struct ytree_ctx *c, const struct matrix *m, const struct axis *a, const struct ynode *n,
                       struct axis_value *val) {
        int r;
        const char *name;
        if (n->kind == Y_SCALAR) {
                if ((r = y_name(c, n, "a value", false, &name)) < 0)
                        return r;
                if (!a->flag)
                        return ytree_fail(c, n->line,
                                    "axis '%s' has no flag, so value '%s' must be a map {name, args, env}",
                                    ytree_esc(c, a->name), ytree_esc(c, name));
                if (!(val->name = strdup(name)))
                        return -ENOMEM;
                if (endswith(a->flag, "="))
                        r = strv_consume(&val->args, strdup_printf("%s%s", a->flag, name));
                else if ((r = strv_push(&val->args, a->flag)) >= 0)
                        r = strv_push(&val->args, name);
                if (r < 0 || (r = check_size_suffixes(c, m, n->line, val->args, NULL)) < 0)
                        return r;
                val->is_default = profile_is_default_value(m->profile, name);
                return 0;
        }
        if (n->kind != Y_MAP)
                return ytree_fail(c, n->line, "a value of axis '%s' must be a name or a map {name, args, env}, not a list",
                            ytree_esc(c, a->name));
        static const char *const keys[] = {"name", "args", "env", "default", NULL};
        if ((r = y_check_keys(c, n, keys, "an axis value")) < 0)
                return r;
        const struct ynode *v = y_get(n, "name");
        if (!v)
                return ytree_fail(c, n->line, "a value of axis '%s' needs a 'name'", ytree_esc(c, a->name));
        if ((r = y_name(c, v, "a value name", false, &name)) < 0)
                return r;
        if (!(val->name = strdup(name)))
                return -ENOMEM;
        if ((v = y_get(n, "args")) && (r = y_strv(c, v, "args", MATRIX_MAX_ARGS, &val->args)) < 0)
                return r;
        if (!val->args && !(val->args = calloc(1, sizeof(char *))))
                return -ENOMEM;
        if ((v = y_get(n, "env")) && (r = y_env(c, v, "env", MATRIX_MAX_ENV, &val->env)) < 0)
                return r;
        if ((r = check_size_suffixes(c, m, n->line, val->args, val->env)) < 0)
                return r;
        val->is_default = profile_is_default_value(m->profile, name);
        if ((v = y_get(n, "default")) && (r = y_bool(c, v, "default", &val->is_default)) < 0)
                return r;
        return 0;
}

static int parse_axes(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *axes = y_get(root, "axes");
        if (!axes)
                return 0;
        const struct ynode *key = y_key(root, "axes");
        int r;
        m->line_axes = key->line;
        if (y_null(axes) || (axes->kind == Y_MAP && axes->n_items == 0))
                return ytree_fail(c, key->line, "axes is empty (leave it out for a single configuration)");
        if ((r = y_map(c, axes, "axes")) < 0)
                return r;
        size_t n = axes->n_items / 2;
        if (n > MATRIX_MAX_AXES)
                return ytree_fail(c, axes->line, "too many axes (%zu, at most %d)", n, MATRIX_MAX_AXES);
        if (!(m->axes = calloc(n, sizeof(*m->axes))))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const struct ynode *k = axes->items[2 * i], *body = axes->items[2 * i + 1];
                struct axis *a = &m->axes[i];
                m->n_axes = i + 1;
                const char *name;
                if ((r = y_name(c, k, "an axis name", true, &name)) < 0)
                        return r;
                if (!(a->name = strdup(name)))
                        return -ENOMEM;
                _cleanup_free_ char *what = strdup_printf("axis '%s'", ytree_esc(c, name));
                if (!what)
                        return -ENOMEM;
                if ((r = y_map(c, body, what)) < 0)
                        return r;
                static const char *const keys[] = {"flag", "values", NULL};
                if ((r = y_check_keys(c, body, keys, what)) < 0)
                        return r;
                const struct ynode *v;
                if ((v = y_get(body, "flag"))) {
                        if ((r = y_string(c, v, "flag", &a->flag)) < 0)
                                return r;
                        if (!*a->flag)
                                return ytree_fail(c, v->line, "flag must not be empty");
                }
                if (!(v = y_get(body, "values")))
                        return ytree_fail(c, body->line, "%s needs 'values:'", what);
                if (y_null(v) || (v->kind == Y_SEQ && v->n_items == 0))
                        return ytree_fail(c, v->line, "%s has no values", what);
                if ((r = y_seq(c, v, "values")) < 0)
                        return r;
                if (v->n_items > MATRIX_MAX_VALUES)
                        return ytree_fail(c, v->line, "%s has too many values (%zu, at most %d)", what, v->n_items,
                                    MATRIX_MAX_VALUES);
                if (!(a->values = calloc(v->n_items, sizeof(*a->values))))
                        return -ENOMEM;
                for (size_t j = 0; j < v->n_items; j++) {
                        a->n_values = j + 1;
                        if ((r = parse_value(c, m, a, v->items[j], &a->values[j])) < 0)
                                return r;
                        for (size_t p = 0; p < j; p++)
                                if (strcmp(a->values[p].name, a->values[j].name) == 0)
                                        return ytree_fail(c, v->items[j]->line, "%s has value '%s' twice", what,
                                                    ytree_esc(c, a->values[j].name));
                }
        }
        return 0;
}

static int find_axis(const struct matrix *m, const char *name) {
        for (size_t i = 0; i < m->n_axes; i++)
                if (strcmp(m->axes[i].name, name) == 0)
                        return (int)i;
        return -1;
}

/* A {axis: value} map into one value index per axis (-1 where the map names none). */
static int parse_choice(struct ytree_ctx *c, const struct matrix *m, const struct ynode *n, const char *what,
                        ssize_t *ret) {
        int r = y_map(c, n, what);
        if (r < 0)
                return r;
        if (n->n_items == 0)
                return ytree_fail(c, n->line, "%s must name at least one axis", what);
        _cleanup_free_ const char **names = calloc(MAX(m->n_axes, (size_t)1), sizeof(*names));
        _cleanup_free_ const char **vnames = calloc(MATRIX_MAX_VALUES, sizeof(*vnames));
        if (!names || !vnames)
                return -ENOMEM;
        for (size_t i = 0; i < m->n_axes; i++) {
                names[i] = m->axes[i].name;
                ret[i] = -1;
        }
        for (size_t i = 0; i + 1 < n->n_items; i += 2) {
                const struct ynode *k = n->items[i], *v = n->items[i + 1];
                int ai = find_axis(m, k->value);
                if (ai < 0) {
                        _cleanup_free_ char *h = m->n_axes ? ytree_hint(k->value, names, m->n_axes) : NULL;
                        return ytree_fail(c, k->line, "%s names axis '%s', which is not in axes%s", what,
                                    ytree_esc(c, k->value), h ? h : "");
                }
                const struct axis *a = &m->axes[ai];
                const char *s;
                if ((r = y_scalar(c, v, "a value name", &s)) < 0)
                        return r;
                ssize_t vi = -1;
                for (size_t j = 0; j < a->n_values; j++) {
                        vnames[j] = a->values[j].name;
                        if (strcmp(a->values[j].name, s) == 0)
                                vi = (ssize_t)j;
                }
                if (vi < 0) {
                        _cleanup_free_ char *h = ytree_hint(s, vnames, a->n_values);
                        return ytree_fail(c, v->line, "axis '%s' has no value '%s'%s", ytree_esc(c, a->name), ytree_esc(c, s),
                                    h ? h : "");
                }
                ret[ai] = vi;
        }
        return 0;
}

/* A {axis: value} map that names one cell: a value of every axis ("baseline", "reference"),
 * into *ret (n_axes value indices). */
static int parse_cell(struct ytree_ctx *c, const struct matrix *m, const struct ynode *n, const char *what,
                      size_t **ret) {
        _cleanup_free_ ssize_t *choice = calloc(m->n_axes, sizeof(*choice));
        if (!choice)
                return -ENOMEM;
        int r = parse_choice(c, m, n, what, choice);
        if (r < 0)
                return r;
        for (size_t i = 0; i < m->n_axes; i++)
                if (choice[i] < 0)
                        return ytree_fail(c, n->line, "%s must name every axis; '%s' is missing", what,
                                          ytree_esc(c, m->axes[i].name));
        if (!(*ret = calloc(m->n_axes, sizeof(**ret))))
                return -ENOMEM;
        for (size_t i = 0; i < m->n_axes; i++)
                (*ret)[i] = (size_t)choice[i];
        return 0;
}

static int parse_strategy(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *v = y_get(root, "strategy");
        int r;
        m->strategy = STRATEGY_GRID;
        if (v) {
                static const char *const names[] = {"grid", "one-at-a-time", "search", NULL};
                const char *s;
                if ((r = y_scalar(c, v, "strategy", &s)) < 0)
                        return r;
                if (strcmp(s, "grid") == 0)
                        m->strategy = STRATEGY_GRID;
                else if (strcmp(s, "one-at-a-time") == 0)
                        m->strategy = STRATEGY_ONE_AT_A_TIME;
                else if (strcmp(s, "search") == 0)
                        m->strategy = STRATEGY_SEARCH;
                else {
                        _cleanup_free_ char *h = ytree_hint(s, names, 3);
                        return ytree_fail(c, v->line, "unknown strategy '%s'%s", ytree_esc(c, s), h ? h : "");
                }
        }
        const struct ynode *b = y_get(root, "baseline");
        if (b) {
                if (m->n_axes == 0)
                        return ytree_fail(c, b->line, "baseline needs axes");
                if ((r = parse_cell(c, m, b, "baseline", &m->baseline)) < 0)
                        return r;
        } else if (m->strategy == STRATEGY_ONE_AT_A_TIME && m->n_axes > 0)
                return ytree_fail(c, v->line, "strategy one-at-a-time needs a baseline naming a value of every axis");

        const struct ynode *bu = y_get(root, "budget");
        if (bu && !y_null(bu)) {
                static const char *const keys[] = {"launches", "time", NULL};
                if (m->strategy != STRATEGY_SEARCH)
                        return ytree_fail(c, bu->line, "budget needs strategy: search");
                if ((r = y_map(c, bu, "budget")) < 0 || (r = y_check_keys(c, bu, keys, "budget")) < 0)
                        return r;
                const struct ynode *k;
                int launches = 0;
                if ((k = y_get(bu, "launches")) && (r = y_int(c, k, "budget.launches", 1, MATRIX_MAX_CELLS, &launches)) < 0)
                        return r;
                m->budget_launches = (size_t)launches;
                if ((k = y_get(bu, "time")) && (r = y_duration(c, k, "budget.time", &m->budget_time)) < 0)
                        return r; /* y_duration takes no zero */
                m->line_budget = bu->line;
        }

        const struct ynode *ex = y_get(root, "exclude");
        if (ex && !y_null(ex)) {
                if ((r = y_seq(c, ex, "exclude")) < 0)
                        return r;
                if (ex->n_items && m->n_axes == 0)
                        return ytree_fail(c, ex->line, "exclude needs axes");
                if (ex->n_items > MATRIX_MAX_EXCLUDES)
                        return ytree_fail(c, ex->line, "too many exclude rules (%zu, at most %d)", ex->n_items,
                                    MATRIX_MAX_EXCLUDES);
                if (!(m->excludes = calloc(MAX(ex->n_items, (size_t)1), sizeof(*m->excludes))))
                        return -ENOMEM;
                for (size_t i = 0; i < ex->n_items; i++) {
                        if (!(m->excludes[i].value = calloc(m->n_axes, sizeof(ssize_t))))
                                return -ENOMEM;
                        m->n_excludes = i + 1;
                        if ((r = parse_choice(c, m, ex->items[i], "an exclude rule", m->excludes[i].value)) < 0)
                                return r;
                }
        }
        return 0;
}

/* bench.max_failures: a count of requests per level (0: none may fail), or "N%" of them. */
static int parse_max_failures(struct ytree_ctx *c, const struct ynode *v, struct bench_spec *b) {
        if (v->kind == Y_SCALAR && v->len > 1 && v->value[v->len - 1] == '%') {
                char *end;
                errno = 0;
                double pct = strtod(v->value, &end);
                if (errno == 0 && end == v->value + v->len - 1 && pct >= 0 && pct <= 100) {
                        b->max_failure_share = pct / 100;
                        return 0;
                }
        } else if (v->kind == Y_SCALAR && v->plain) {
                char *end;
                errno = 0;
                long k = strtol(v->value, &end, 10);
                if (errno == 0 && *end == '\0' && end != v->value && k >= 0 && k <= 10000000) {
                        b->max_failures = (int)k;
                        return 0;
                }
        }
        return ytree_fail(c, v->line, "bench.max_failures must be a count of requests (0: none may fail) or a share like 5%%, not %s",
                          y_describe(c, v));
}

/* bench.search: {max: N, rounds: K}, or true for the defaults. */
static int parse_search(struct ytree_ctx *c, const struct ynode *v, struct bench_spec *b) {
        int r;
        b->search_max = 256;
        b->search_rounds = 4;
        if (v->kind == Y_SCALAR) {
                bool on;
                if ((r = y_bool(c, v, "bench.search", &on)) < 0)
                        return r;
                if (!on)
                        b->search_max = b->search_rounds = 0;
                return 0;
        }
        static const char *const keys[] = {"max", "rounds", NULL};
        const struct ynode *k;
        if ((r = y_map(c, v, "bench.search")) < 0 || (r = y_check_keys(c, v, keys, "bench.search")) < 0)
                return r;
        if ((k = y_get(v, "max")) && (r = y_int(c, k, "bench.search.max", 1, 100000, &b->search_max)) < 0)
                return r;
        if ((k = y_get(v, "rounds")) && (r = y_int(c, k, "bench.search.rounds", 1, 16, &b->search_rounds)) < 0)
                return r;
        return 0;
}

/* A constraint's key: a metric path ("ttft_ms.p99", "goodput.requests_per_s"), or the short
 * form NAME_STAT_ms ("ttft_p99_ms") for a stat of a distribution. *ret (caller frees) is
 * the path. */
static int sla_path(struct ytree_ctx *c, unsigned line, const char *key, char **ret) {
        static const char *const stats[] = {"p50", "p90", "p99", "p999", "mean", "min", "max"};
        _cleanup_free_ char *path = NULL;
        size_t n = strlen(key);
        if (!strchr(key, '.') && n > 3 && strcmp(key + n - 3, "_ms") == 0)
                for (size_t i = 0; i < ELEMENTSOF(stats) && !path; i++) {
                        size_t k = strlen(stats[i]);
                        if (n > k + 4 && key[n - 4 - k] == '_' && memcmp(key + n - 3 - k, stats[i], k) == 0)
                                path = strdup_printf("%.*s_ms.%s", (int)(n - 4 - k), key, stats[i]);
                }
        if (!path && !(path = strdup(key)))
                return -ENOMEM;
        if (!path)
                return -ENOMEM;
        const struct metric_info *along = NULL;
        const struct metric_info *whole = metric_resolve(path, strlen(path), &along);
        const char *dot = strrchr(path, '.');
        bool stat = false;
        for (size_t i = 0; i < ELEMENTSOF(stats) && dot && !whole; i++)
                stat |= strcmp(dot + 1, stats[i]) == 0;
        if (!along || (!whole && !(stat && strcmp(along->unit, "ms") == 0)))
                return ytree_fail(c, line, "objective.where: unknown metric '%s' (a bench figure such as ttft_ms.p99, "
                                  "itl_p99_ms or requests_per_s)", ytree_esc(c, key));
        *ret = TAKE_PTR(path);
        return 0;
}

/* objective: {metric: M, at: N, where: {PATH: LIMIT, ...}} -> "M@N where PATH<=LIMIT,..."
 * (>= for a higher-is-better metric), the text the journal keeps and the reports read. */
static int parse_objective_map(struct ytree_ctx *c, const struct ynode *v, char **ret) {
        static const char *const keys[] = {"metric", "at", "where", NULL};
        const struct ynode *k;
        const char *metric = NULL;
        int at = 0, r;
        if ((r = y_check_keys(c, v, keys, "objective")) < 0)
                return r;
        if (!(k = y_get(v, "metric")))
                return ytree_fail(c, v->line, "objective: give metric: (e.g. output_tokens_per_s)");
        if ((r = y_scalar(c, k, "objective.metric", &metric)) < 0)
                return r;
        if ((k = y_get(v, "at")) && (r = y_int(c, k, "objective.at", 1, 100000, &at)) < 0)
                return r;
        _cleanup_buf_ struct buf b;
        buf_init(&b, 4096);
        if ((r = buf_puts(&b, metric)) < 0 || (at && (r = buf_printf(&b, "@%d", at)) < 0))
                return r;
        if ((k = y_get(v, "where"))) {
                if ((r = y_map(c, k, "objective.where")) < 0)
                        return r;
                size_t n = k->n_items / 2;
                if (n == 0 || n > OBJECTIVE_MAX_LIMITS)
                        return ytree_fail(c, k->line, "objective.where takes 1 to %d constraints, not %zu",
                                          OBJECTIVE_MAX_LIMITS, n);
                for (size_t i = 0; i < n; i++) {
                        const struct ynode *key = k->items[2 * i], *val = k->items[2 * i + 1];
                        _cleanup_free_ char *path = NULL;
                        const char *name;
                        double limit;
                        if ((r = y_scalar(c, key, "a constraint's metric", &name)) < 0 ||
                            (r = sla_path(c, key->line, name, &path)) < 0 ||
                            (r = y_double(c, val, "a constraint's limit", 0, &limit)) < 0)
                                return r;
                        const struct metric_info *along = NULL;
                        metric_resolve(path, strlen(path), &along);
                        bool at_most = along->direction == METRIC_LOWER_BETTER;
                        if ((r = buf_printf(&b, "%s%s%s%.17g", i ? "," : " where ", path, at_most ? "<=" : ">=", limit)) < 0)
                                return r;
                }
        }
        char *t = strdup(buf_str(&b));
        if (!t)
                return -ENOMEM;
        free(*ret);
        *ret = t;
        return 0;
}

static char *beside_matrix(const struct matrix *m, const char *file);

/* One entry of the option table (config/options.h) at its key of map, if there. */
static int parse_option(struct ytree_ctx *c, const struct ynode *map, const struct option_def *d, void *dst) {
        const struct ynode *v = y_get(map, d->key);
        if (!v || d->type == OT_CUSTOM)
                return 0;
        _cleanup_free_ char *what = options_what(d);
        if (!what)
                return -ENOMEM;
        int r, k;
        bool b;
        double x;
        const char *s;
        switch (d->type) {
        case OT_INT:
                return y_int(c, v, what, (long)d->min, (long)d->max, dst);
        case OT_U64:
        case OT_SIZE:
                if ((r = y_int(c, v, what, (long)d->min, (long)d->max, &k)) < 0)
                        return r;
                if (d->type == OT_U64)
                        *(uint64_t *)dst = (uint64_t)k;
                else
                        *(size_t *)dst = (size_t)k;
                return 0;
        case OT_DOUBLE:
                if ((r = y_double(c, v, what, d->min, &x)) < 0)
                        return r;
                if (x > d->max || ((d->flags & OF_MIN_OPEN) && x == d->min) || ((d->flags & OF_MAX_OPEN) && x == d->max))
                        return ytree_fail(c, v->line, "%s %s, not %s", what, d->bad ? d->bad : "is out of range",
                                          ytree_esc(c, v->value));
                *(double *)dst = x;
                return 0;
        case OT_DURATION:
                /* a duration that may be 0 (a pause): "0" as the command line takes it */
                if ((d->flags & OF_ZERO_OK) && v->kind == Y_SCALAR && parse_duration(v->value, dst) == 0)
                        return 0;
                return y_duration(c, v, what, dst);
        case OT_BOOL:
                if ((r = y_bool(c, v, what, &b)) < 0)
                        return r;
                *(bool *)dst = (d->flags & OF_NEGATE) ? !b : b;
                return 0;
        case OT_STRING:
                return y_string(c, v, what, dst);
        case OT_ENUM: {
                if ((r = y_scalar(c, v, what, &s)) < 0)
                        return r;
                if (d->parse(s, dst) == 0)
                        return 0;
                _cleanup_free_ char *h = d->names ? ytree_hint(s, d->names, strv_length((char *const *)d->names)) : NULL;
                return ytree_fail(c, v->line, "%s '%s'%s%s", d->bad, ytree_esc(c, s), h ? h : "",
                                  d->bad_tail ? d->bad_tail : "");
        }
        case OT_MS:
        case OT_CUSTOM:
                break;
        }
        return 0;
}

/* The keys of map in scope that the table parses (OT_CUSTOM ones are the caller's). */
static int parse_options(struct ytree_ctx *c, const struct ynode *map, enum option_scope scope, struct bench_spec *b,
                         struct eval_options *e) {
        for (size_t i = 0; i < options_table_n; i++) {
                const struct option_def *d = &options_table[i];
                if (d->scope != scope || !d->key)
                        continue;
                int r = parse_option(c, map, d, options_place(d, b, NULL, e));
                if (r < 0)
                        return r;
        }
        return 0;
}

/* bench.dataset: vLLM's dataset options under their names (docs/matrix.md "bench"), the
 * file read now so that a bad one stops the matrix here, at its own FILE:LINE. */
static int parse_dataset(struct ytree_ctx *c, const struct ynode *n, const struct ynode *bench, struct matrix *m) {
        const char *keys[64];
        options_keys(OS_DATASET, keys, ELEMENTSOF(keys));
        struct bench_spec *b = &m->bench;
        struct dataset_options *o = &b->dataset;
        const struct ynode *v;
        int r;
        if ((r = y_map(c, n, "bench.dataset")) < 0 || (r = y_check_keys(c, n, keys, "bench.dataset")) < 0)
                return r;
        /* the random dataset's lengths are input_tokens and output_tokens by other names */
        static const char *const aliases[][2] = {{"random_input_len", "input_tokens"},
                                                 {"random_output_len", "output_tokens"}};
        for (size_t i = 0; i < ELEMENTSOF(aliases); i++)
                if ((v = y_get(n, aliases[i][0])) && y_get(bench, aliases[i][1]))
                        return ytree_fail(c, v->line, "bench: give %s or dataset.%s, not both", aliases[i][1],
                                          aliases[i][0]);
        if ((r = parse_options(c, n, OS_DATASET, b, NULL)) < 0)
                return r;
        const struct ynode *unit = y_get(n, "trace_unit");
        if (unit && o->kind != DATASET_TRACE)
                return ytree_fail(c, unit->line, "bench.dataset.trace_unit goes with the trace dataset only");
        const struct ynode *path = y_get(n, "path");
        if (path && (r = y_string(c, path, "bench.dataset.path", &o->path)) < 0)
                return r;
        const char *bad = dataset_options_check(o);
        if (bad)
                return ytree_fail(c, path && o->path && !*o->path ? path->line : n->line, "bench.dataset (%s): %s",
                                  dataset_kind_name(o->kind), bad);
        if (!dataset_has_file(o))
                return 0;
        _cleanup_free_ char *file = beside_matrix(m, o->path);
        _cleanup_free_ char *err = NULL;
        if (!file)
                return -ENOMEM;
        r = dataset_load(o->kind, file, &m->bench_data, &err);
        if (r == -ENOMEM)
                return r;
        if (r == -EINVAL && err) {
                /* the dataset file's own FILE:LINE */
                free(c->error);
                c->error = TAKE_PTR(err);
                return r;
        }
        if (r < 0)
                return ytree_fail(c, path->line, "%s", err ? err : strerror(-r));
        b->data = m->bench_data;
        /* a trace that cannot be replayed as given is refused now, not after a day's wait */
        dataset_trace_apply_unit(m->bench_data, o);
        _cleanup_free_ char *why = NULL;
        if ((r = dataset_trace_check(m->bench_data, o, m->request_timeout, &why)) == -ENOMEM)
                return r;
        if (r < 0)
                return ytree_fail(c, path->line, "bench.dataset %s: %s", ytree_esc(c, o->path), why);
        return 0;
}

/* The bench: map's keys (m->has_bench). */
static int parse_bench_map(struct ytree_ctx *c, const struct ynode *n, struct matrix *m) {
        struct bench_spec *b = &m->bench;
        const struct ynode *v;
        int r;
        if ((v = y_get(n, "concurrency"))) {
                if (v->kind == Y_SEQ && v->n_items == 0)
                        return ytree_fail(c, v->line, "bench.concurrency is empty; give levels like [1, 8, 32]");
                if (v->kind != Y_SEQ)
                        return ytree_fail(c, v->line, "bench.concurrency must be a list of positive integers like [1, 8, 32], not %s",
                                    y_describe(c, v));
                if (v->n_items > MATRIX_MAX_LEVELS)
                        return ytree_fail(c, v->line, "bench.concurrency has too many levels (%zu, at most %d)",
                                    v->n_items, MATRIX_MAX_LEVELS);
                if (!(b->concurrency = calloc(v->n_items, sizeof(int))))
                        return -ENOMEM;
                for (size_t i = 0; i < v->n_items; i++) {
                        if ((r = y_int(c, v->items[i], "a concurrency level", 1, 100000, &b->concurrency[i])) < 0)
                                return r;
                        for (size_t j = 0; j < i; j++)
                                if (b->concurrency[j] == b->concurrency[i])
                                        return ytree_fail(c, v->items[i]->line, "concurrency %d appears twice",
                                                    b->concurrency[i]);
                        b->n_concurrency = i + 1;
                }
        }
        /* request_rate: vllm bench serve's name for it */
        const struct ynode *rate = y_get(n, "rate"), *request_rate = y_get(n, "request_rate");
        if (rate && request_rate)
                return ytree_fail(c, request_rate->line, "bench: give rate or request_rate (its other name), "
                                  "not both");
        const struct ynode *req = y_get(n, "requests"), *dur = y_get(n, "duration");
        if (req && dur)
                return ytree_fail(c, dur->line, "bench: give requests or duration, not both");
        if ((r = parse_options(c, n, OS_BENCH, b, NULL)) < 0)
                return r;
        if (dur)
                b->requests = 0;
        v = rate ? rate : request_rate;
        /* one request per 1/rate: a gap longer than the request timeout measures
         * nothing for most of the level (--rate 1e-300 waited for ever) */
        if (v && b->rate > 0 && 1.0 / b->rate > (double)m->request_timeout / USEC_PER_SEC) {
                char t[32];
                return ytree_fail(c, v->line,
                                  "bench.rate %s is one request every %.3gs, longer than the request timeout "
                                  "(%s)",
                                  ytree_esc(c, v->value), 1.0 / b->rate, format_duration(m->request_timeout, t));
        }
        if ((v = y_get(n, "max_failures")) && (r = parse_max_failures(c, v, b)) < 0)
                return r;
        if ((v = y_get(n, "search")) && (r = parse_search(c, v, b)) < 0)
                return r;
        if ((v = y_get(n, "dataset")) && !y_null(v)) {
                if ((r = parse_dataset(c, v, n, m)) < 0)
                        return r;
                /* as vllm bench serve: the prompts drawn are the requests sent (multi_turn:
                 * the sessions; a trace: its lines) */
                if (!req && !dur && b->dataset.num_prompts > 0)
                        b->requests = b->dataset.num_prompts;
                if (!req && !dur && b->dataset.kind == DATASET_TRACE && b->data)
                        b->requests = (int)MIN(b->data->n, b->dataset.num_prompts > 0
                                                                   ? (size_t)b->dataset.num_prompts
                                                                   : b->data->n);
        }
        /* a burstiness is a shape of gamma arrivals, Poisson's among them */
        if ((v = y_get(n, "burstiness")))
                b->poisson = true;
        if (b->poisson && b->rate == 0)
                return ytree_fail(c, (v ? v : y_get(n, "poisson"))->line,
                                  "bench: Poisson or gamma arrivals need a rate (requests per second)");
        if (b->dataset.kind == DATASET_MULTI_TURN && !b->chat)
                return ytree_fail(c, y_get(n, "endpoint")->line,
                                  "bench.dataset multi_turn sends conversations: it needs the chat endpoint");
        if (b->dataset.kind == DATASET_TRACE && b->rate > 0)
                return ytree_fail(c, (rate ? rate : request_rate)->line,
                                  "bench.dataset trace: the trace says when requests go; give no rate "
                                  "(dataset.trace_speed scales its times)");
        return 0;
}

/* objective: (a string or a map), checked against the bench's levels. */
static int parse_objective(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        const struct bench_spec *b = &m->bench;
        const struct ynode *v;
        int r;
        if (!(m->objective = strdup(OBJECTIVE_DEFAULT)))
                return -ENOMEM;
        if ((v = y_get(root, "objective"))) {
                if (v->kind == Y_MAP)
                        r = parse_objective_map(c, v, &m->objective);
                else
                        r = y_string(c, v, "objective", &m->objective);
                if (r < 0)
                        return r;
                struct objective o;
                objective_parse(m->objective, &o);
                if (!o.smoke) {
                        _cleanup_free_ char *metric = strndup(o.metric, o.metric_len);
                        if (!metric)
                                return -ENOMEM;
                        if (!o.info || !o.info->objective) {
                                /* The metrics an objective may name: the table's, in its order. */
                                const char *names[_METRIC_MAX];
                                size_t n_names = 0;
                                for (int i = 0; i < _METRIC_MAX; i++)
                                        if (metric_info((enum metric)i)->objective)
                                                names[n_names++] = metric_key((enum metric)i);
                                _cleanup_free_ char *h = ytree_hint(metric, names, n_names);
                                return ytree_fail(c, v->line, "objective: unknown metric '%s'%s", ytree_esc(c, metric), h ? h : "");
                        }
                        if (o.bad_limits)
                                return ytree_fail(c, v->line, "objective: cannot read the constraints of '%s' "
                                                  "(give where: {METRIC: LIMIT, ...}, at most %d)",
                                                  ytree_esc(c, m->objective), OBJECTIVE_MAX_LIMITS);
                        long level = o.concurrency;
                        /* an SLA objective may leave the level open: the best one that meets it */
                        if (level == 0 && o.n_limits > 0 && !strchr(m->objective, '@'))
                                return 0;
                        if (level < 1 || level > 100000)
                                return ytree_fail(c, v->line,
                                            "objective must be METRIC@CONCURRENCY (e.g. output_tokens_per_s@1) or smoke, not '%s'",
                                            ytree_esc(c, m->objective));
                        bool found = false;
                        for (size_t i = 0; i < b->n_concurrency && !found; i++)
                                found = b->concurrency[i] == level;
                        if (!found)
                                return ytree_fail(c, v->line, "objective is measured at concurrency %ld, which bench.concurrency%s does not include",
                                            level, m->has_bench ? "" : " (default [1, 8, 32])");
                }
        }

        return 0;
}

/* emit: systemd, script, both (the default) or null. */
static int parse_emit(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *v;
        int r;
        m->emit = EMIT_SYSTEMD | EMIT_SCRIPT;
        if ((v = y_get(root, "emit"))) {
                static const char *const kinds[] = {"systemd", "script", NULL};
                if (y_null(v)) {
                        m->emit = 0;
                        return 0;
                }
                size_t count = v->kind == Y_SEQ ? v->n_items : 1;
                m->emit = 0;
                for (size_t i = 0; i < count; i++) {
                        const struct ynode *e = v->kind == Y_SEQ ? v->items[i] : v;
                        const char *s;
                        if ((r = y_scalar(c, e, "emit", &s)) < 0)
                                return r;
                        if (strcmp(s, "systemd") == 0)
                                m->emit |= EMIT_SYSTEMD;
                        else if (strcmp(s, "script") == 0)
                                m->emit |= EMIT_SCRIPT;
                        else {
                                _cleanup_free_ char *h = ytree_hint(s, kinds, 2);
                                return ytree_fail(c, e->line, "emit: unknown output '%s'%s", ytree_esc(c, s), h ? h : "");
                        }
                }
        }
        return 0;
}

static int parse_bench(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        static const int default_levels[] = {1, 8, 32};
        struct bench_spec *b = &m->bench;
        *b = (struct bench_spec){.input_tokens = 1024, .output_tokens = 256, .requests = 64, .warmup = 2, .chat = true,
                                 .max_failure_share = -1, .calibrate = true, .repeats = 1,
                                 .checks_under_load = true};
        dataset_options_init(&b->dataset);
        const struct ynode *n = y_get(root, "bench");
        int r;
        m->has_bench = n && !y_null(n);
        if (m->has_bench) {
                const char *keys[64];
                options_keys(OS_BENCH, keys, ELEMENTSOF(keys));
                if ((r = y_map(c, n, "bench")) < 0 || (r = y_check_keys(c, n, keys, "bench")) < 0 ||
                    (r = parse_bench_map(c, n, m)) < 0)
                        return r;
        }
        if (!b->concurrency) {
                if (!(b->concurrency = malloc(sizeof(default_levels))))
                        return -ENOMEM;
                memcpy(b->concurrency, default_levels, sizeof(default_levels));
                b->n_concurrency = ELEMENTSOF(default_levels);
        }

        if ((r = parse_objective(c, root, m)) < 0)
                return r;
        b->objective = m->objective;
        return parse_emit(c, root, m);
}

/* srun options gauntlet sets itself for every job (docs/slurm.md): a job is found again by
 * its name, runs one server, and sends its output back over srun. */
static const char *const slurm_own_options[] = {
        "--job-name", "-J", "--comment", "--nodes", "-N", "--ntasks", "-n", "--jobid",
        "--output", "-o", "--error", "-e", "--input", "-i", "--pty", NULL,
};

/* Whether arg sets the srun option opt: "--nodes", "--nodes=2"; "-N", "-N2". */
static bool slurm_arg_sets(const char *arg, const char *opt) {
        size_t n = strlen(opt);
        if (strncmp(arg, opt, n) != 0)
                return false;
        return arg[n] == '\0' || (opt[1] == '-' ? arg[n] == '=' : true);
}

/* `slurm.time`: a duration with a unit (90m, 2h) becomes Slurm's "[D-]H:MM:SS"; Slurm's own
 * forms ("30:00", "1:30:00", "2-00:00:00", "2-12", UNLIMITED) are kept as written. A bare
 * number is refused: Slurm reads minutes where the matrix reads seconds. */
static int parse_slurm_time(struct ytree_ctx *c, const struct ynode *v, char **ret) {
        const char *s;
        int r = y_scalar(c, v, "slurm.time", &s);
        if (r < 0)
                return r;
        if (strcasecmp(s, "UNLIMITED") == 0 || strcasecmp(s, "INFINITE") == 0)
                return (*ret = strdup(s)) ? 0 : -ENOMEM;
        if (strpbrk(s, ":-")) {
                /* [days-]hours[:minutes[:seconds]] or minutes:seconds[...]: digits in groups */
                const char *p = s;
                bool days = false;
                size_t groups = 0, digits = 0;
                for (; *p; p++) {
                        if (*p >= '0' && *p <= '9') {
                                digits++;
                                continue;
                        }
                        if (digits == 0 || digits > 6 || (*p == '-' && (days || groups > 0)) || (*p != ':' && *p != '-'))
                                break;
                        days |= *p == '-';
                        groups++;
                        digits = 0;
                }
                if (*p || digits == 0 || digits > 6 || groups > 3 || (!days && groups > 2))
                        return ytree_fail(c, v->line,
                                          "slurm.time '%s' is neither a duration like 90m or 2h nor Slurm's "
                                          "[days-]hours:minutes:seconds",
                                          ytree_esc(c, s));
                return (*ret = strdup(s)) ? 0 : -ENOMEM;
        }
        usec_t u = 0;
        if (strspn(s, "0123456789") == strlen(s))
                return ytree_fail(c, v->line,
                                  "slurm.time '%s' has no unit: Slurm reads a bare number as minutes, the matrix "
                                  "as seconds; write 30m, 2h or \"0:30:00\"",
                                  ytree_esc(c, s));
        if (parse_duration(s, &u) < 0 || u == 0)
                return ytree_fail(c, v->line, "slurm.time must be a duration above zero like 90m or 2h, or Slurm's "
                                              "[days-]hours:minutes:seconds, not %s",
                                  y_describe(c, v));
        unsigned long long sec = (unsigned long long)((u + USEC_PER_SEC - 1) / USEC_PER_SEC);
        unsigned long long d = sec / 86400, h = sec / 3600 % 24, mi = sec / 60 % 60, se = sec % 60;
        *ret = d ? strdup_printf("%llu-%02llu:%02llu:%02llu", d, h, mi, se)
                 : strdup_printf("%llu:%02llu:%02llu", h, mi, se);
        return *ret ? 0 : -ENOMEM;
}

/* `launcher:` and `slurm:` (docs/slurm.md). The slurm defaults are filled in even without
 * the map, for `gauntlet run --launcher slurm`. */
static int parse_launcher(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *v, *n;
        int r;
        struct slurm_settings *sl = &m->slurm;
        sl->gpus_per_cell = m->gpus_per_cell;
        sl->max_parallel = 4;
        sl->queue_timeout = 60 * 60 * USEC_PER_SEC;
        if ((v = y_get(root, "launcher"))) {
                const char *s;
                m->line_launcher = v->line;
                if ((r = y_scalar(c, v, "launcher", &s)) < 0)
                        return r;
                if (strcmp(s, "local") == 0)
                        m->launcher = LAUNCHER_LOCAL;
                else if (strcmp(s, "slurm") == 0)
                        m->launcher = LAUNCHER_SLURM;
                else
                        return ytree_fail(c, v->line, "launcher: unknown launcher '%s' (local or slurm)", ytree_esc(c, s));
        }
        if (!(n = y_get(root, "slurm")) || y_null(n))
                return 0;
        static const char *const keys[] = {"partition", "account", "gpus_per_cell", "time", "max_parallel",
                                           "queue_timeout", "extra_args", NULL};
        if ((r = y_map(c, n, "slurm")) < 0 || (r = y_check_keys(c, n, keys, "slurm")) < 0)
                return r;
        sl->line = y_key(root, "slurm")->line;
        const char *names[] = {"partition", "account"};
        char **dst[] = {&sl->partition, &sl->account};
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                if (!(v = y_get(n, names[i])))
                        continue;
                _cleanup_free_ char *what = strdup_printf("slurm.%s", names[i]);
                if (!what)
                        return -ENOMEM;
                if ((r = y_string(c, v, what, dst[i])) < 0)
                        return r;
                if (!**dst[i] || strpbrk(*dst[i], " \t\r\n"))
                        return ytree_fail(c, v->line, "%s '%s' is not a Slurm name", what, ytree_esc(c, *dst[i]));
        }
        if ((v = y_get(n, "gpus_per_cell")) && (r = y_int(c, v, "slurm.gpus_per_cell", 0, 1024, &sl->gpus_per_cell)) < 0)
                return r;
        if ((v = y_get(n, "time")) && (r = parse_slurm_time(c, v, &sl->time)) < 0)
                return r;
        if ((v = y_get(n, "max_parallel")) &&
            (r = y_int(c, v, "slurm.max_parallel", 1, MATRIX_MAX_SLURM_PARALLEL, &sl->max_parallel)) < 0)
                return r;
        if ((v = y_get(n, "queue_timeout")) && (r = y_duration(c, v, "slurm.queue_timeout", &sl->queue_timeout)) < 0)
                return r;
        if ((v = y_get(n, "extra_args"))) {
                if ((r = y_strv(c, v, "slurm.extra_args", MATRIX_MAX_ARGS, &sl->extra_args)) < 0)
                        return r;
                for (size_t i = 0; sl->extra_args[i]; i++)
                        for (const char *const *o = slurm_own_options; *o; o++)
                                if (slurm_arg_sets(sl->extra_args[i], *o))
                                        return ytree_fail(c, v->items[i]->line,
                                                          "slurm.extra_args: '%s' is gauntlet's to set (it names each "
                                                          "job, runs one server in it and reads its output)",
                                                          ytree_esc(c, sl->extra_args[i]));
        }
        return 0;
}

static int parse_checks(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        const struct ynode *v = y_get(root, "checks");
        m->checks_default = true;
        if (!v || y_null(v))
                return 0;
        if (v->kind == Y_SCALAR) {
                if (strcmp(v->value, "default") == 0)
                        return 0;
                return ytree_fail(c, v->line, "checks must be 'default' or a list of checks, not %s", y_describe(c, v));
        }
        m->checks_default = false;
        return suite_parse_checks(c, v, &m->checks, &m->n_checks);
}

/* ---- probes: one parser per probe key; a new probe adds a row to probe_parsers ---- */

static int parse_probe_long_context(struct ytree_ctx *c, const struct ynode *n, struct probes_options *o) {
        static const char *const keys[] = {"share", "max_tokens", "timeout", "context", NULL};
        const struct ynode *v;
        int r, ctx;
        if ((r = y_check_keys(c, n, keys, "probes.long_context")) < 0)
                return r;
        if ((v = y_get(n, "share"))) {
                if ((r = y_double(c, v, "probes.long_context.share", 0, &o->long_context.share)) < 0)
                        return r;
                if (!(o->long_context.share > 0) || o->long_context.share > 1)
                        return ytree_fail(c, v->line, "probes.long_context.share is a share of the context above 0 and "
                                          "at most 1, not %s", ytree_esc(c, v->value));
        }
        if ((v = y_get(n, "max_tokens")) &&
            (r = y_int(c, v, "probes.long_context.max_tokens", PROBES_MIN_FILLER_TOKENS, PROBES_MAX_LC_MAX_TOKENS,
                       &o->long_context.max_tokens)) < 0)
                return r;
        if ((v = y_get(n, "timeout"))) {
                if ((r = y_duration(c, v, "probes.long_context.timeout", &o->long_context.timeout)) < 0)
                        return r;
                if (o->long_context.timeout == 0)
                        return ytree_fail(c, v->line, "probes.long_context.timeout must be above 0");
        }
        if ((v = y_get(n, "context"))) {
                if ((r = y_int(c, v, "probes.long_context.context", 1, PROBES_MAX_CONTEXT, &ctx)) < 0)
                        return r;
                o->long_context.context = ctx;
        }
        return 0;
}

static int parse_probe_sampling(struct ytree_ctx *c, const struct ynode *n, struct probes_options *o) {
        static const char *const keys[] = {"runs", "min_right", "temperature", "top_p", NULL};
        const struct ynode *v, *mr;
        int r;
        if ((r = y_check_keys(c, n, keys, "probes.sampling")) < 0)
                return r;
        if ((v = y_get(n, "runs")) && (r = y_int(c, v, "probes.sampling.runs", 1, PROBES_MAX_RUNS, &o->sampling.runs)) < 0)
                return r;
        /* by default most runs: 4 of 5, scaled to the runs asked for */
        o->sampling.min_right = v ? (o->sampling.runs * PROBES_DEFAULT_MIN_RIGHT + PROBES_DEFAULT_RUNS - 1) / PROBES_DEFAULT_RUNS
                                  : PROBES_DEFAULT_MIN_RIGHT;
        if ((mr = y_get(n, "min_right")) &&
            (r = y_int(c, mr, "probes.sampling.min_right", 1, o->sampling.runs, &o->sampling.min_right)) < 0)
                return r;
        if ((v = y_get(n, "temperature"))) {
                if ((r = y_double(c, v, "probes.sampling.temperature", 0, &o->sampling.temperature)) < 0)
                        return r;
                if (!(o->sampling.temperature > 0) || o->sampling.temperature > 2)
                        return ytree_fail(c, v->line, "probes.sampling.temperature must be above 0 and at most 2, not %s",
                                          ytree_esc(c, v->value));
        }
        if ((v = y_get(n, "top_p"))) {
                if ((r = y_double(c, v, "probes.sampling.top_p", 0, &o->sampling.top_p)) < 0)
                        return r;
                if (!(o->sampling.top_p > 0) || o->sampling.top_p > 1)
                        return ytree_fail(c, v->line, "probes.sampling.top_p must be above 0 and at most 1, not %s",
                                          ytree_esc(c, v->value));
        }
        return 0;
}

static int parse_probe_multi_turn(struct ytree_ctx *c, const struct ynode *n, struct probes_options *o) {
        static const char *const keys[] = {"stream", NULL};
        const struct ynode *v;
        int r;
        if ((r = y_check_keys(c, n, keys, "probes.multi_turn")) < 0)
                return r;
        if ((v = y_get(n, "stream"))) {
                if (v->kind == Y_SCALAR && strcmp(v->value, "both") == 0) {
                        o->multi_turn.stream = STREAM_BOTH;
                        return 0;
                }
                bool yes = v->kind == Y_SCALAR && (strcmp(v->value, "true") == 0 || strcmp(v->value, "yes") == 0);
                bool no = v->kind == Y_SCALAR && (strcmp(v->value, "false") == 0 || strcmp(v->value, "no") == 0);
                if (!yes && !no)
                        return ytree_fail(c, v->line, "probes.multi_turn.stream must be both, true or false, not %s",
                                          y_describe(c, v));
                o->multi_turn.stream = yes ? STREAM_YES : STREAM_NO;
        }
        return 0;
}

/* probes.under_load: true, false or {eval_samples: N} (docs/metrics.md "Checks under load"). */
static int parse_under_load(struct ytree_ctx *c, const struct ynode *v, struct matrix_under_load *u) {
        if (v->kind != Y_MAP)
                return y_bool(c, v, "probes.under_load", &u->on);
        static const char *const keys[] = {"eval_samples", NULL};
        int r, n = (int)u->eval_samples;
        if ((r = y_check_keys(c, v, keys, "probes.under_load")) < 0)
                return r;
        const struct ynode *e = y_get(v, "eval_samples");
        if (e && (r = y_int(c, e, "probes.under_load.eval_samples", 1, EVAL_MAX_QUESTIONS, &n)) < 0)
                return r;
        u->on = true;
        u->eval_samples = (size_t)n;
        return 0;
}

/* `probes: {KEY: false | true | {options}}`. Another probe (the bench's under_load) is one
 * more row here, its options in struct probes_options. */
static const struct {
        const char *key;
        int kind;                     /* enum probe_kind */
        int (*parse)(struct ytree_ctx *c, const struct ynode *n, struct probes_options *o);
} probe_parsers[] = {
        {"long_context", PROBE_LONG_CONTEXT, parse_probe_long_context},
        {"sampling", PROBE_SAMPLING, parse_probe_sampling},
        {"multi_turn", PROBE_MULTI_TURN, parse_probe_multi_turn},
};

static int parse_probes(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        struct probes_options *o = &m->probes;
        probes_options_init(o);
        m->under_load = (struct matrix_under_load){.on = true, .eval_samples = MATRIX_UNDER_LOAD_EVAL_SAMPLES};
        const struct ynode *n = y_get(root, "probes"), *ul;
        int r;
        if (!n || y_null(n))
                return 0;
        m->line_probes = n->line;
        if (n->kind == Y_SCALAR) {
                bool b;
                if ((r = y_bool(c, n, "probes (or a map of probes)", &b)) < 0)
                        return r;
                for (int k = 0; k < _PROBE_MAX; k++)
                        o->on[k] = b;
                m->under_load.on = b;
                return 0;
        }
        /* the probes asked after the checks, and the bench's under_load (its own struct: the
         * bench asks it, not probes_run) */
        const char *keys[ELEMENTSOF(probe_parsers) + 2];
        for (size_t i = 0; i < ELEMENTSOF(probe_parsers); i++)
                keys[i] = probe_parsers[i].key;
        keys[ELEMENTSOF(probe_parsers)] = "under_load";
        keys[ELEMENTSOF(probe_parsers) + 1] = NULL;
        if ((r = y_map(c, n, "probes")) < 0 || (r = y_check_keys(c, n, keys, "probes")) < 0)
                return r;
        if ((ul = y_get(n, "under_load")) && !y_null(ul) && (r = parse_under_load(c, ul, &m->under_load)) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(probe_parsers); i++) {
                const struct ynode *v = y_get(n, probe_parsers[i].key);
                if (!v || y_null(v))
                        continue;
                _cleanup_free_ char *what = strdup_printf("probes.%s", probe_parsers[i].key);
                if (!what)
                        return -ENOMEM;
                if (v->kind == Y_SCALAR) {
                        bool b;
                        if ((r = y_bool(c, v, what, &b)) < 0)
                                return r;
                        o->on[probe_parsers[i].kind] = b;
                        continue;
                }
                if ((r = y_map(c, v, what)) < 0 || (r = probe_parsers[i].parse(c, v, o)) < 0)
                        return r;
        }
        return 0;
}

/* A proportion from 0 to 1. */
/* The folder of the matrix file, where a relative eval file is looked for. */
static char *beside_matrix(const struct matrix *m, const char *file) {
        if (file[0] == '/')
                return strdup(file);
        const char *slash = strrchr(m->path, '/');
        if (!slash)
                return strdup(file);
        return strdup_printf("%.*s/%s", (int)(slash - m->path), m->path, file);
}


static int parse_eval(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        struct eval_options *o = &m->eval;
        eval_options_init(o);
        const struct ynode *n = y_get(root, "eval"), *v;
        const struct ynode *ref = y_get(root, "reference");
        int r;
        if (!n || y_null(n)) {
                if (ref && !y_null(ref))
                        return ytree_fail(c, ref->line, "reference is the eval's reference cell; it needs an eval: key");
                return 0;
        }
        m->has_eval = true;
        m->line_eval = n->line;
        bool builtin = false;
        const struct ynode *sets = NULL;
        if (n->kind == Y_SCALAR) {
                /* eval: FILE, or eval: builtin */
                if (strcmp(n->value, "builtin") == 0)
                        builtin = true;
                else if ((r = y_string(c, n, "eval", &o->file)) < 0)
                        return r;
        } else {
                const char *keys[32];
                options_keys(OS_EVAL, keys, ELEMENTSOF(keys));
                if ((r = y_map(c, n, "eval")) < 0 || (r = y_check_keys(c, n, keys, "eval")) < 0)
                        return r;
                const struct ynode *f = y_get(n, "file");
                sets = y_get(n, "builtin");
                if (f && sets)
                        return ytree_fail(c, sets->line, "eval: give file or builtin, not both");
                if (f && (r = y_string(c, f, "eval.file", &o->file)) < 0)
                        return r;
                builtin = !f;
                if ((r = parse_options(c, n, OS_EVAL, NULL, o)) < 0)
                        return r;
                if ((v = y_get(n, "thinking"))) {
                        bool b;
                        if ((r = y_bool(c, v, "eval.thinking", &b)) < 0)
                                return r;
                        o->thinking = b ? THINKING_ON : THINKING_OFF;
                }
        }
        if (builtin && sets && !(sets->kind == Y_SCALAR && (streq_ptr(sets->value, "all") || streq_ptr(sets->value, "true")))) {
                if (sets->kind != Y_SEQ || sets->n_items == 0)
                        return ytree_fail(c, sets->line, "eval.builtin must be all or a list of sets (products, sums, letters, sort, copy), not %s",
                                    y_describe(c, sets));
                for (size_t i = 0; i < sets->n_items; i++) {
                        const char *s;
                        if ((r = y_scalar(c, sets->items[i], "a built-in set", &s)) < 0)
                                return r;
                        int b = eval_builtin_from_name(s);
                        if (b < 0) {
                                const char *names[_EVAL_BUILTIN_MAX];
                                for (int k = 0; k < _EVAL_BUILTIN_MAX; k++)
                                        names[k] = eval_builtin_name((enum eval_builtin)k);
                                _cleanup_free_ char *h = ytree_hint(s, names, _EVAL_BUILTIN_MAX);
                                return ytree_fail(c, sets->items[i]->line, "unknown built-in set '%s'%s", ytree_esc(c, s),
                                            h ? h : "");
                        }
                        if (o->builtins & (1u << b))
                                return ytree_fail(c, sets->items[i]->line, "built-in set '%s' appears twice", s);
                        o->builtins |= 1u << b;
                }
        }

        if (o->file) {
                if (!*o->file)
                        return ytree_fail(c, n->line, "eval.file is empty");
                if (!(o->path = beside_matrix(m, o->file)))
                        return -ENOMEM;
                struct check_spec *specs = NULL;
                size_t k = 0;
                _cleanup_free_ char *err = NULL;
                r = suite_load_jsonl(o->path, &specs, &k, &err);
                if (r == -ENOMEM)
                        return r;
                if (r == -EINVAL && err) {
                        /* the eval file's own FILE:LINE */
                        free(c->error);
                        c->error = TAKE_PTR(err);
                        return r;
                }
                if (r < 0)
                        return ytree_fail(c, n->line, "%s", err ? err : strerror(-r));
                r = eval_set_from_specs(o, specs, k, &m->eval_set);
        } else
                r = eval_set_builtin(o, &m->eval_set);
        if (r < 0)
                return r;

        if (ref && !y_null(ref)) {
                if (m->n_axes == 0)
                        return ytree_fail(c, ref->line, "reference needs axes (a matrix of one cell has nothing to compare)");
                if ((r = parse_cell(c, m, ref, "reference", &m->reference)) < 0)
                        return r;
                m->line_reference = ref->line; /* a cell that runs: cells_load_matrix */
        }
        return 0;
}

/* The longest scalar below n, as its line: a map's value is named by its key's line (the
 * env variable, not the start of its value). */
static void longest_scalar(const struct ynode *n, unsigned line, size_t *best, unsigned *ret_line) {
        if (!n)
                return;
        if (n->kind == Y_SCALAR) {
                if (n->len > *best) {
                        *best = n->len;
                        *ret_line = line ? line : n->line;
                }
                return;
        }
        for (size_t i = 0; i < n->n_items; i++) {
                if (n->kind == Y_MAP && i % 2 == 0)
                        continue; /* a key: its value is looked at with the key's line */
                longest_scalar(n->items[i], n->kind == Y_MAP ? n->items[i - 1]->line : 0, best, ret_line);
        }
}

static int matrix_parse(struct ytree_ctx *c, const struct ynode *root, struct matrix *m) {
        int r;
        m->line_top = root->line;
        if (root->kind == Y_MAP) {
                /* where the bulk of a cell is, for the size check (cells.c) */
                size_t best = 0;
                static const char *const keys[] = {"command", "args", "env", "axes"};
                for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                        const struct ynode *key = y_key(root, keys[k]);
                        longest_scalar(y_get(root, keys[k]), key ? key->line : 0, &best, &m->line_longest);
                }
        }
        if (root->kind != Y_MAP)
                return ytree_fail(c, root->line, "a matrix must be a map of keys (engine, model, axes, ...), not %s",
                            y_describe(c, root));
        if ((r = y_check_keys(c, root, top_keys, "the matrix")) < 0 || (r = parse_engine(c, root, m)) < 0 ||
            (r = parse_command(c, root, m)) < 0 || (r = parse_base(c, root, m)) < 0 ||
            (r = parse_axes(c, root, m)) < 0 || (r = parse_launcher(c, root, m)) < 0)
                return r;
        if ((r = parse_strategy(c, root, m)) < 0 || (r = parse_checks(c, root, m)) < 0 ||
            (r = parse_probes(c, root, m)) < 0 || (r = parse_bench(c, root, m)) < 0)
                return r;
        return parse_eval(c, root, m);
}

int matrix_parse_string(const char *text, size_t len, const char *name, struct matrix **ret, char **ret_error) {
        struct ytree_ctx c = {.name = name};
        struct ytree d = {0};
        struct matrix *m = calloc(1, sizeof(*m));
        int r = m ? 0 : -ENOMEM;
        if (r >= 0 && (!(m->path = strdup(name)) || !(m->text = strndup(text, len))))
                r = -ENOMEM;
        if (r >= 0)
                r = ytree_load(&c, text, len, &d);
        if (r >= 0)
                r = matrix_parse(&c, d.root, m);
        ytree_release(&d);
        if (r < 0) {
                if (ret_error)
                        *ret_error = TAKE_PTR(c.error);
                ytree_ctx_release(&c);
                if (m)
                        matrix_free(m);
                return r;
        }
        ytree_ctx_release(&c);
        *ret = m;
        return 0;
}

size_t axis_reading_flag(const struct axis *ax, char *buf, size_t size) {
        const char *arg = ax->flag, *key = NULL;
        size_t n = 0;
        bool args_agree = true, env_agree = true;
        for (size_t v = 0; !ax->flag && v < ax->n_values; v++) {
                const struct axis_value *x = &ax->values[v];
                if (x->args && x->args[0]) {
                        if (x->args[0][0] != '-' || (arg && strcmp(arg, x->args[0]) != 0))
                                args_agree = false;
                        arg = x->args[0];
                }
                for (size_t e = 0; x->env && x->env[e]; e++) {
                        size_t k = strcspn(x->env[e], "=");
                        if (e > 0 || (key && (k != n || strncmp(key, x->env[e], k) != 0)))
                                env_agree = false;
                        key = x->env[e];
                        n = k;
                }
        }
        if (arg && args_agree) {
                key = arg;
                n = strlen(arg);
                while (n > 1 && key[n - 1] == '=') /* "--kv=": the flag is "--kv" */
                        n--;
        } else if (!key || !env_agree)
                return 0;
        if (n >= size)
                return 0;
        memcpy(buf, key, n);
        buf[n] = '\0';
        return n;
}

void matrix_free(struct matrix *m) {
        if (!m)
                return;
        free(m->path);
        free(m->text);
        free(m->engine);
        free(m->model);
        free(m->tokenizer);
        strv_free(m->version_command);
        strv_free(m->command);
        strv_free(m->args);
        strv_free(m->env);
        free(m->host);
        strv_free(m->port_owners);
        free(m->workdir);
        for (size_t i = 0; i < m->n_axes; i++) {
                for (size_t j = 0; j < m->axes[i].n_values; j++)
                        axis_value_release(&m->axes[i].values[j]);
                free(m->axes[i].values);
                free(m->axes[i].name);
                free(m->axes[i].flag);
        }
        free(m->axes);
        free(m->baseline);
        for (size_t i = 0; i < m->n_excludes; i++)
                free(m->excludes[i].value);
        free(m->excludes);
        checks_free_suite(m->checks, m->n_checks);
        free(m->bench.concurrency);
        dataset_options_release(&m->bench.dataset);
        dataset_free(m->bench_data);
        free(m->objective);
        eval_options_release(&m->eval);
        eval_set_release(&m->eval_set);
        free(m->reference);
        free(m->slurm.partition);
        free(m->slurm.account);
        free(m->slurm.time);
        strv_free(m->slurm.extra_args);
        free(m);
}

