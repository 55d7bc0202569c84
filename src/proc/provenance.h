/* provenance.h -- what a sweep ran with: the engine's version as the engine says it, the
 * versions of the Python libraries its profile lists, the model file, the GPU, driver and
 * CUDA, and the cell's environment (docs/provenance.md).
 *
 * One JSON object per sweep and distinct cell environment, journaled in the provenance
 * table and shown by every report:
 *   {"engine": {"name", "version": line-or-null, "command": [argv], "reason": why-null},
 *    "libraries": {DIST: version-or-null, ...} or {} (the profile lists none),
 *    "libraries_reason": why they are unknown, or null,
 *    "model": {"path", "kind": "gguf"|"folder"|"file"|null, "size", "mtime", "hash",
 *              "hashed": what the hash covers, "reason": why-null},
 *    "gpu": {"names": [..], "driver", "cuda"} (from the host fingerprint),
 *    "env": ["KEY=VALUE", ...] (the cell's own, secrets masked)}
 * Nothing here fails a sweep: a field that cannot be read is null, with a one-line reason
 * beside it. Text from a command is data: cleaned (text_clean) and cut at HOST_MAX_LINE.
 *
 * The commands run without a shell, all at once, with a short timeout (PROVENANCE_TIMEOUT)
 * and their output capped (spawn_run_capture), in gauntlet's environment with the cell's
 * added (later entries win, as a server gets it).
 */
#ifndef GAUNTLET_PROVENANCE_H
#define GAUNTLET_PROVENANCE_H

#include <jansson.h>
#include <stddef.h>

#include "base/profile.h"
#include "base/util.h"
#include "io/loop.h"

/* A version command must answer at once: a sweep is not slowed by its provenance. */
#define PROVENANCE_TIMEOUT (2 * USEC_PER_SEC)

struct provenance_input {
        const struct profile *profile;
        const char *program;                /* the server's program as the sweep starts it
                                               ("{program}"); NULL: none (generic) */
        char *const *version_command;       /* the matrix's `version_command:`; NULL: the
                                               profile's version_command */
        const char *model;                  /* the matrix's model; NULL: none */
        const char *host_json;              /* the host fingerprint (GPU, driver, CUDA); NULL */
};

/* Gathers the provenance for each of envs[0..n) (each a cell's env, "KEY=VALUE",
 * NULL-terminated, or NULL for none): ret[i] a new object each. The model and the GPU are
 * read once. Returns 0, -ENOMEM, or -EINTR (a signal caught by the loop; nothing is
 * returned then). */
int provenance_gather(struct loop *l, const struct provenance_input *in, char *const *const *envs, size_t n,
                      json_t **ret);

/* The model entry for path (as above). NULL only on ENOMEM. A GGUF's hash covers its size
 * and its bytes up to the end of the key-value section (header and metadata), not the
 * tensor infos or data; a folder's covers config.json and every *.safetensors.index.json
 * (names and bytes); any other file's its size and first 1 MiB. */
json_t *provenance_model(const char *path);

/* The changes from a to b, one line each ("engine version: b6123 -> b6200", "model hash
 * changed", "driver 550.1 -> 560.2"), in a fixed order; *ret NULL-terminated (strv_free),
 * empty when nothing differs. A field missing or unknown on one side and known on the
 * other is a change too. 0 or -ENOMEM. */
int provenance_diff(const json_t *a, const json_t *b, char ***ret);

#endif
