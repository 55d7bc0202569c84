/* report_provenance.c -- the provenance block every report shows (report.h,
 * docs/provenance.md): one summary line, the changes since the earlier sweep, the JSON. */
#include "report/report.h"

#include <stdio.h>
#include <string.h>

#include "text/buf.h"

static const char *str(const json_t *o, const char *key) {
        return json_string_value(json_object_get(o, key));
}

/* "name version" or "name (version unknown: why)". */
static int put_engine(struct buf *b, const json_t *e) {
        const char *ver = str(e, "version"), *why = str(e, "reason");
        if (ver)
                return buf_printf(b, "%s %s", str(e, "name") ? str(e, "name") : "engine", ver);
        return buf_printf(b, "%s version unknown (%s)", str(e, "name") ? str(e, "name") : "engine", why ? why : "?");
}

static int put_libraries(struct buf *b, const json_t *p) {
        const json_t *libs = json_object_get(p, "libraries");
        const char *why = str(p, "libraries_reason");
        if (why)
                return buf_printf(b, "; libraries unknown (%s)", why);
        const char *k;
        json_t *v;
        bool first = true;
        json_object_foreach((json_t *)libs, k, v) {
                int r = buf_printf(b, "%s%s %s", first ? "; " : ", ", k,
                                   json_is_string(v) ? json_string_value(v) : "absent");
                if (r < 0)
                        return r;
                first = false;
        }
        return 0;
}

static int put_model(struct buf *b, const json_t *m) {
        const char *path = str(m, "path"), *hash = str(m, "hash");
        const char *base = path && strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        if (!m || !path)
                return buf_puts(b, "; no model file");
        if (!hash)
                return buf_printf(b, "; model %s unread (%s)", base, str(m, "reason") ? str(m, "reason") : "?");
        return buf_printf(b, "; model %s %.1f MiB, %s, modified %s", base,
                          (double)json_integer_value(json_object_get(m, "size")) / (1024.0 * 1024.0), hash,
                          str(m, "mtime") ? str(m, "mtime") : "?");
}

static int put_gpu(struct buf *b, const json_t *g) {
        const json_t *names = json_object_get(g, "names");
        int r = buf_puts(b, "; GPU ");
        if (r < 0)
                return r;
        if (json_array_size(names) == 0)
                r = buf_puts(b, "none");
        for (size_t i = 0; r >= 0 && i < json_array_size(names); i++)
                r = buf_printf(b, "%s%s", i ? ", " : "", json_string_value(json_array_get(names, i)));
        if (r >= 0 && str(g, "driver"))
                r = buf_printf(b, ", driver %s", str(g, "driver"));
        if (r >= 0 && str(g, "cuda"))
                r = buf_printf(b, ", CUDA %s", str(g, "cuda"));
        return r;
}

static int put_env(struct buf *b, const json_t *env) {
        int r = buf_puts(b, "; env");
        if (r >= 0 && json_array_size(env) == 0)
                r = buf_puts(b, " as gauntlet's");
        for (size_t i = 0; r >= 0 && i < json_array_size(env); i++)
                r = buf_printf(b, " %s", json_string_value(json_array_get(env, i)));
        return r;
}

char *report_provenance_summary(const struct report_view *v) {
        const json_t *p = json_array_get(v->provenance, 0);
        if (!p)
                return NULL;
        struct buf b;
        buf_init(&b, 0);
        size_t n = json_array_size(v->provenance);
        if (put_engine(&b, json_object_get(p, "engine")) < 0 || put_libraries(&b, p) < 0 ||
            put_model(&b, json_object_get(p, "model")) < 0 || put_gpu(&b, json_object_get(p, "gpu")) < 0 ||
            put_env(&b, json_object_get(p, "env")) < 0 ||
            (n > 1 && buf_printf(&b, " (first of %zu cell environments)", n) < 0)) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}

char *report_provenance_changes(const struct report_view *v) {
        if (!v->provenance_changes || !v->provenance_since)
                return NULL;
        if (!v->provenance_changes[0])
                return strdup_printf("unchanged since sweep %lld", (long long)v->provenance_since);
        struct buf b;
        buf_init(&b, 0);
        int r = buf_printf(&b, "since sweep %lld:", (long long)v->provenance_since);
        for (size_t i = 0; r >= 0 && v->provenance_changes[i]; i++)
                r = buf_printf(&b, "%s %s", i ? ";" : "", v->provenance_changes[i]);
        if (r < 0) {
                buf_release(&b);
                return NULL;
        }
        return buf_detach(&b);
}

json_t *report_provenance_json(const struct report_view *v) {
        if (!v->provenance)
                return json_null();
        json_t *changes = json_array();
        for (size_t i = 0; changes && v->provenance_changes && v->provenance_changes[i]; i++)
                if (json_array_append_new(changes, json_string(v->provenance_changes[i])) < 0) {
                        json_decref(changes);
                        return NULL;
                }
        if (!changes)
                return NULL;
        bool compared = v->provenance_since && v->provenance_changes;
        return json_pack("{s:I, s:O, s:o, s:o}", "sweep", (json_int_t)v->sweep_id, "records", v->provenance,
                         "compared_with", compared ? json_integer(v->provenance_since) : json_null(), "changes",
                         compared ? changes : (json_decref(changes), json_null()));
}
