/* emit.h -- a systemd unit or a POSIX launch script for one cell.
 *
 * emit_cell turns a cell of a report view (report.h, as journaled: real values) into the
 * unit or script, header comments included: what `gauntlet emit` prints and what `gauntlet
 * run` leaves beside its reports. Below it, emit_systemd and emit_script turn a struct
 * emit_spec into text, with every argument and value escaped for its destination, so that
 * the unit or script runs the exact argv and environment the sweep ran. Emitted files carry
 * real values (secrets included): they are meant to launch the server.
 */
#ifndef GAUNTLET_EMIT_H
#define GAUNTLET_EMIT_H

#include <stdbool.h>

#include "text/buf.h"
#include "base/util.h"

struct emit_spec {
        char *const *argv;         /* resolved ({host}/{port} filled in); at least argv[0] */
        char *const *env;          /* "KEY=VALUE", real values; may be NULL */
        const char *workdir;       /* absolute path the server runs in, or NULL */
        usec_t startup_timeout;    /* TimeoutStartSec=; 0: none written */
        const char *description;   /* one line for Description= (escaped here) */
        char *const *comments;     /* header comment lines, any text (escaped here); may be NULL */
        const char *path_env;      /* PATH to resolve argv[0] for systemd; NULL: getenv("PATH") */
};

/* A unit: comments, [Unit] Description/After/Wants, [Service] Type=simple, ExecStart,
 * Environment=, WorkingDirectory=, Restart=on-failure, TimeoutStartSec=,
 * KillMode=control-group, [Install] WantedBy=multi-user.target. -EINVAL for what systemd
 * cannot express (an env name that is not env_name_valid, util.h: systemd would drop it;
 * a workdir that is relative, holds a control character, ends in a backslash or a blank).
 * argv[0] is resolved to an absolute path through PATH when found. */
int emit_systemd(const struct emit_spec *s, struct buf *out);
/* #!/bin/sh, set -e, the comments, cd WORKDIR, export K='V' lines, exec 'arg' ... ;
 * env names a shell cannot export go through `env -- 'K=V'` on the exec line (the "--":
 * a name starting with '-' is not taken for an option). */
int emit_script(const struct emit_spec *s, struct buf *out);

struct report_view;

struct emit_cell_options {
        bool systemd;          /* a systemd unit, else a launch script */
        bool chosen_by_best;   /* the header says "the best passing cell", else "chosen with --cell" */
        const char *name;      /* the service's name; NULL: "gauntlet-ENGINE" */
        int port;              /* used when the matrix fixed none; 0: the attempt's */
};

/* Appends to out the unit or script of cell idx of v (a view as journaled, its secrets
 * unmasked). 0, or a negative errno with *ret_error (optional; caller frees) one line
 * saying why: no port known, an env name or workdir the destination cannot express
 * (-EINVAL), -ENOMEM. */
int emit_cell(const struct report_view *v, size_t idx, const struct emit_cell_options *o, struct buf *out,
              char **ret_error);

/* One word in systemd's quoting: "..." with \ and " escaped, % as %%, control characters,
 * DEL and bytes that are not UTF-8 as \xNN; in_exec also writes $ as $$ (ExecStart=
 * expands $VAR; Environment= does not, so there a $ stays). A lone ";" in ExecStart= is
 * written \; (a bare ; separates commands). */
int emit_quote_systemd(struct buf *out, const char *s, bool in_exec);
/* One word in POSIX sh quoting: '...' with ' as '\''. Any byte is safe inside. */
int emit_quote_sh(struct buf *out, const char *s);
/* "# " + line with control characters as \xNN (\n as \n) and a trailing backslash as
 * \x5c, so that a comment stays one line in sh and in systemd (no continuation). */
int emit_comment(struct buf *out, const char *line);

/* argv[0] as something systemd can exec: an absolute name is kept; a relative one with a
 * slash is joined to workdir; a bare name is searched in path_env (absolute entries
 * only) for an executable regular file. Returns 1 and the absolute name when found, 0 and
 * a copy of name when not (systemd then searches its own fixed list). */
int emit_resolve_executable(const char *name, const char *path_env, const char *workdir, char **ret);

/* An absolute path without "." or ".." segments or doubled slashes, which systemd refuses in
 * WorkingDirectory=: the folder's real path when it exists (realpath: ".." after a symlink
 * means what the kernel makes of it), else the path normalised by its text ("a/b/../c" ->
 * "a/c", ".." at the root stays there). -EINVAL for a relative path; caller frees. */
int emit_workdir_normalize(const char *path, char **ret);

#endif
