/* placeholder.c -- filling {model}, {host} and {port} into argument templates. */
#include "text/placeholder.h"

#include <stdio.h>
#include <string.h>

#include "text/buf.h"
#include "base/util.h"

char *placeholder_fill(const char *s, const char *const *keys, const char *const *vals, size_t n) {
        _cleanup_buf_ struct buf b;
        buf_init(&b, 0);
        while (*s) {
                bool hit = false;
                if (*s == '{')
                        for (size_t i = 0; i < n && !hit; i++)
                                if (vals[i] && startswith(s, keys[i])) {
                                        if (buf_puts(&b, vals[i]) < 0)
                                                return NULL;
                                        s += strlen(keys[i]);
                                        hit = true;
                                }
                if (!hit && buf_append(&b, s++, 1) < 0)
                        return NULL;
        }
        return buf_detach(&b);
}

int placeholder_fill_argv(char *const *argv, const char *host, int port, char ***ret) {
        static const char *const keys[] = {"{host}", "{port}"};
        char portbuf[16];
        snprintf(portbuf, sizeof(portbuf), "%d", port);
        const char *vals[] = {host, portbuf};
        _cleanup_strv_free_ char **out = calloc(strv_length(argv) + 1, sizeof(char *));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; argv && argv[i]; i++)
                if (!(out[i] = placeholder_fill(argv[i], keys, vals, 2)))
                        return -ENOMEM;
        *ret = TAKE_PTR(out);
        return 0;
}
