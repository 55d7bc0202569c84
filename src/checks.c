/* checks.c -- check specs, results and the built-in smoke suite. */
#include "checks.h"

#include <string.h>

void check_spec_release(struct check_spec *c) {
        free(c->name);
        free(c->prompt);
        json_decref(c->messages);
        free(c->expect.value);
        *c = (struct check_spec){0};
}

void check_result_release(struct check_result *r) {
        free(r->name);
        free(r->cause);
        free(r->evidence);
        free(r->output);
        free(r->reasoning);
        free(r->finish_reason);
        *r = (struct check_result){0};
}

void checks_free_suite(struct check_spec *specs, size_t n) {
        for (size_t i = 0; i < n; i++)
                check_spec_release(&specs[i]);
        free(specs);
}

int checks_default_suite(struct check_spec **ret, size_t *ret_n) {
        static const struct {
                const char *name;
                enum check_mode mode;
                const char *prompt;
                enum thinking thinking;
                bool require_reasoning;
                int max_tokens;
                enum expect_kind kind;
                const char *value;
        } suite[] = {
                {"models", CHECK_MODELS, NULL, THINKING_UNSET, false, 0, EXPECT_NONE, NULL},
                {"ok", CHECK_CHAT, "Reply with exactly: OK", THINKING_OFF, false, 16, EXPECT_EQUALS, "OK"},
                {"math", CHECK_CHAT, "What is 17 * 19?", THINKING_OFF, false, 64, EXPECT_NUMBER, "323"},
                {"math-thinking", CHECK_CHAT, "What is 17 * 19?", THINKING_ON, true, 2048, EXPECT_NUMBER, "323"},
        };
        size_t n = ELEMENTSOF(suite);
        struct check_spec *specs = calloc(n, sizeof(*specs));
        if (!specs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct check_spec *c = &specs[i];
                c->name = strdup(suite[i].name);
                c->mode = suite[i].mode;
                c->prompt = suite[i].prompt ? strdup(suite[i].prompt) : NULL;
                c->thinking = suite[i].thinking;
                c->require_reasoning = suite[i].require_reasoning;
                c->max_tokens = suite[i].max_tokens;
                c->stream = suite[i].mode == CHECK_MODELS ? STREAM_NO : STREAM_BOTH;
                c->expect.kind = suite[i].kind;
                c->expect.value = suite[i].value ? strdup(suite[i].value) : NULL;
                if (!c->name || (suite[i].prompt && !c->prompt) || (suite[i].value && !c->expect.value)) {
                        checks_free_suite(specs, n);
                        return -ENOMEM;
                }
        }
        *ret = specs;
        *ret_n = n;
        return 0;
}
