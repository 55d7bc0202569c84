/* corpus-meta.h -- what a corpus file's question was, read from its NAME.meta
 * (docs/detectors.md): shared by tests/unit/test_detect.c and tools/corpus-figures.c, two
 * programs outside the library that score the corpus the same way. */
#ifndef GAUNTLET_CORPUS_META_H
#define GAUNTLET_CORPUS_META_H

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* What was asked, as the checks pass it to the detectors (checks.c spec_question): the meta's
 * `question=` line, or the text of the messages of its `request=` line (collected files),
 * one per line; NULL when neither is there. Caller frees. */
static inline char *meta_question(const char *meta) {
        for (const char *p = meta; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, "question=", 9) == 0)
                        return strndup(p + 9, strcspn(p + 9, "\n"));
        for (const char *p = meta; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
                if (strncmp(p, "request=", 8) != 0)
                        continue;
                size_t n = strcspn(p, "\n");
                const char *j = memchr(p, '{', n);
                if (!j)
                        return NULL;
                json_t *root = json_loadb(j, n - (size_t)(j - p), 0, NULL);
                json_t *msgs = json_object_get(root, "messages");
                size_t cap = 1, len = 0, i;
                json_t *m;
                json_array_foreach(msgs, i, m) {
                        const char *c = json_string_value(json_object_get(m, "content"));
                        cap += c ? strlen(c) + 1 : 0;
                }
                char *q = malloc(cap);
                if (q) {
                        json_array_foreach(msgs, i, m) {
                                const char *c = json_string_value(json_object_get(m, "content"));
                                if (c) {
                                        memcpy(q + len, c, strlen(c));
                                        len += strlen(c);
                                        q[len++] = '\n';
                                }
                        }
                        q[len] = '\0';
                }
                json_decref(root);
                return q;
        }
        return NULL;
}

#endif
