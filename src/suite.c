/* suite.c -- check suite files: YAML -> checked check specs (the eval loader joins it later). */
#include "suite.h"

#include <regex.h>
#include <string.h>

#include "golden.h"

static const char *const check_keys[] = {"name",     "prompt",     "messages", "mode",   "thinking",
                                         "reasoning", "max_tokens", "stream",   "expect", NULL};
static const char *const expect_keys[] = {"equals", "contains", "regex", "number", NULL};
static const char *const roles[] = {"system", "user", "assistant", "developer", "tool", NULL};

static int parse_messages(struct ytree_ctx *c, const struct ynode *n, json_t **ret) {
        int r = y_seq(c, n, "messages");
        if (r < 0)
                return r;
        if (n->n_items == 0)
                return ytree_fail(c, n->line, "messages must not be empty");
        json_t *a = json_array();
        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_items; i++) {
                static const char *const keys[] = {"role", "content", NULL};
                const struct ynode *m = n->items[i];
                const char *role = NULL, *content = NULL;
                if ((r = y_map(c, m, "a message")) < 0 || (r = y_check_keys(c, m, keys, "a message")) < 0)
                        goto fail;
                const struct ynode *rn = y_get(m, "role"), *cn = y_get(m, "content");
                if (!rn || !cn) {
                        r = ytree_fail(c, m->line, "a message needs both 'role' and 'content'");
                        goto fail;
                }
                if ((r = y_scalar(c, rn, "role", &role)) < 0 || (r = y_scalar(c, cn, "content", &content)) < 0)
                        goto fail;
                bool known = false;
                for (const char *const *k = roles; *k && !known; k++)
                        known = strcmp(*k, role) == 0;
                if (!known) {
                        _cleanup_free_ char *h = ytree_hint(role, roles, strv_length((char *const *)roles));
                        r = ytree_fail(c, rn->line, "unknown role '%s'%s", ytree_esc(c, role), h ? h : "");
                        goto fail;
                }
                if (json_array_append_new(a, json_pack("{s:s, s:s}", "role", role, "content", content)) < 0) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        *ret = a;
        return 0;
fail:
        json_decref(a);
        return r;
}

static int parse_expect(struct ytree_ctx *c, const struct ynode *n, struct expect *ret) {
        static const enum expect_kind kinds[] = {EXPECT_EQUALS, EXPECT_CONTAINS, EXPECT_REGEX, EXPECT_NUMBER};
        enum expect_kind kind = EXPECT_EQUALS;
        const struct ynode *v = n;
        if (n->kind == Y_MAP) {
                if (n->n_items != 2)
                        return ytree_fail(c, n->line, "expect must be a string or a map with one key (equals, contains, regex or number)");
                int r = y_check_keys(c, n, expect_keys, "expect");
                if (r < 0)
                        return r;
                for (size_t i = 0; expect_keys[i]; i++)
                        if (strcmp(n->items[0]->value, expect_keys[i]) == 0)
                                kind = kinds[i];
                v = n->items[1];
        }
        const char *s;
        int r = y_scalar(c, v, "expect", &s);
        if (r < 0)
                return r;
        if (kind == EXPECT_REGEX) {
                _cleanup_free_ char *why = NULL;
                if (golden_regex_check(s, &why) < 0)
                        return ytree_fail(c, v->line, "expect: regular expression '%s' refused: %s", ytree_esc(c, s),
                                    why ? why : "too complex");
                regex_t re;
                int e = regcomp(&re, s, REG_EXTENDED | REG_NOSUB);
                if (e != 0) {
                        char msg[128]; /* regerror's own text, cut to fit */
                        regerror(e, &re, msg, sizeof(msg));
                        return ytree_fail(c, v->line, "expect: invalid regular expression '%s': %s", ytree_esc(c, s), msg);
                }
                regfree(&re);
        } else if (kind == EXPECT_NUMBER) {
                /* golden_match's own reading of the value, so what loads also matches at
                 * run time (strtod took ".23", "0x1p3" and "inf", which golden refuses) */
                struct expect probe = {EXPECT_NUMBER, (char *)s};
                bool match;
                int e = golden_match(&probe, "0", &match, NULL);
                if (e == -ENOMEM)
                        return e;
                if (e < 0)
                        return ytree_fail(c, v->line, "expect: number needs a number, not '%s'", ytree_esc(c, s));
        }
        char *copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        ret->kind = kind;
        ret->value = copy;
        return 0;
}

static int parse_check(struct ytree_ctx *c, const struct ynode *n, struct check_spec *spec) {
        int r = y_map(c, n, "a check");
        if (r < 0)
                return r;
        if ((r = y_check_keys(c, n, check_keys, "a check")) < 0)
                return r;
        const struct ynode *v;
        const char *name;
        if (!(v = y_get(n, "name")))
                return ytree_fail(c, n->line, "a check needs a 'name'");
        if ((r = y_name(c, v, "a check name", false, &name)) < 0)
                return r;
        if (!(spec->name = strdup(name)))
                return -ENOMEM;

        spec->mode = CHECK_CHAT;
        if ((v = y_get(n, "mode"))) {
                static const char *const modes[] = {"chat", "completion", "models", NULL};
                const char *s;
                if ((r = y_scalar(c, v, "mode", &s)) < 0)
                        return r;
                if (streq_ptr(s, "chat"))
                        spec->mode = CHECK_CHAT;
                else if (streq_ptr(s, "completion") || streq_ptr(s, "completions"))
                        spec->mode = CHECK_COMPLETION;
                else if (streq_ptr(s, "models"))
                        spec->mode = CHECK_MODELS;
                else {
                        _cleanup_free_ char *h = ytree_hint(s, modes, 3);
                        return ytree_fail(c, v->line, "unknown mode '%s'%s", ytree_esc(c, s), h ? h : "");
                }
        }

        const struct ynode *pn = y_get(n, "prompt"), *mn = y_get(n, "messages");
        if (spec->mode == CHECK_MODELS) {
                if (pn || mn || y_get(n, "expect"))
                        return ytree_fail(c, n->line, "check '%s': mode models takes no prompt, messages or expect",
                                    ytree_esc(c, name));
        } else if (pn && mn)
                return ytree_fail(c, mn->line, "check '%s': give prompt or messages, not both", ytree_esc(c, name));
        else if (!pn && !mn)
                return ytree_fail(c, n->line, "check '%s' needs a prompt (or messages)", ytree_esc(c, name));
        else if (mn && spec->mode != CHECK_CHAT)
                return ytree_fail(c, mn->line, "check '%s': messages need mode chat", ytree_esc(c, name));
        if (pn && (r = y_string(c, pn, "prompt", &spec->prompt)) < 0)
                return r;
        if (mn && (r = parse_messages(c, mn, &spec->messages)) < 0)
                return r;

        spec->thinking = THINKING_UNSET;
        if ((v = y_get(n, "thinking"))) {
                bool b;
                if ((r = y_bool(c, v, "thinking", &b)) < 0)
                        return r;
                spec->thinking = b ? THINKING_ON : THINKING_OFF;
        }
        spec->require_reasoning = spec->thinking == THINKING_ON;
        if ((v = y_get(n, "reasoning"))) {
                if ((r = y_bool(c, v, "reasoning", &spec->require_reasoning)) < 0)
                        return r;
                if (spec->require_reasoning && spec->thinking == THINKING_OFF)
                        return ytree_fail(c, v->line, "check '%s': reasoning: true needs thinking on", ytree_esc(c, name));
        }
        if ((v = y_get(n, "max_tokens")) && (r = y_int(c, v, "max_tokens", 1, 1000000, &spec->max_tokens)) < 0)
                return r;

        spec->stream = spec->mode == CHECK_MODELS ? STREAM_NO : STREAM_BOTH;
        if ((v = y_get(n, "stream"))) {
                bool b;
                if (v->kind == Y_SCALAR && streq_ptr(v->value, "both"))
                        spec->stream = STREAM_BOTH;
                else if (v->kind == Y_SCALAR && v->plain && y_bool(c, v, "stream", &b) == 0)
                        spec->stream = b ? STREAM_YES : STREAM_NO;
                else {
                        free(c->error); /* y_bool's message is the wrong one here */
                        c->error = NULL;
                        return ytree_fail(c, v->line, "stream must be true, false or both, not %s", y_describe(c, v));
                }
        }
        if ((v = y_get(n, "expect")) && (r = parse_expect(c, v, &spec->expect)) < 0)
                return r;
        return 0;
}

int suite_parse_checks(struct ytree_ctx *c, const struct ynode *n, struct check_spec **ret, size_t *ret_n) {
        int r = y_seq(c, n, "checks");
        if (r < 0)
                return r;
        if (n->n_items == 0)
                return ytree_fail(c, n->line, "the check list is empty");
        if (n->n_items > SUITE_MAX_CHECKS)
                return ytree_fail(c, n->line, "too many checks (%zu, at most %d)", n->n_items, SUITE_MAX_CHECKS);
        struct check_spec *specs = calloc(n->n_items, sizeof(*specs));
        if (!specs)
                return -ENOMEM;
        for (size_t i = 0; i < n->n_items; i++) {
                r = parse_check(c, n->items[i], &specs[i]);
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (strcmp(specs[j].name, specs[i].name) == 0)
                                r = ytree_fail(c, n->items[i]->line, "check name '%s' appears twice", ytree_esc(c, specs[i].name));
                if (r < 0) {
                        checks_free_suite(specs, n->n_items);
                        return r;
                }
        }
        *ret = specs;
        *ret_n = n->n_items;
        return 0;
}

int suite_load_checks_string(const char *text, size_t len, const char *name, struct check_spec **ret, size_t *ret_n,
                             char **ret_error) {
        struct ytree_ctx c = {.name = name};
        struct ytree d = {0};
        int r = ytree_load(&c, text, len, &d);
        const struct ynode *list = d.root;
        if (r >= 0 && list->kind == Y_MAP) {
                static const char *const keys[] = {"checks", NULL};
                r = y_check_keys(&c, list, keys, "a check suite");
                if (r >= 0 && !(list = y_get(d.root, "checks")))
                        r = ytree_fail(&c, d.root->line, "a check suite needs 'checks:' with a list");
        }
        if (r >= 0)
                r = suite_parse_checks(&c, list, ret, ret_n);
        if (r < 0 && ret_error)
                *ret_error = TAKE_PTR(c.error);
        ytree_release(&d);
        ytree_ctx_release(&c);
        return r;
}

int suite_load_checks_file(const char *path, struct check_spec **ret, size_t *ret_n, char **ret_error) {
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        int r = ytree_read_path(path, &text, &len, ret_error);
        if (r < 0)
                return r;
        return suite_load_checks_string(text, len, path, ret, ret_n, ret_error);
}

