/* host.h -- the host fingerprint: GPUs, driver, kernel, OS, CPU, memory, engine versions.
 *
 * The fingerprint is one JSON object, journaled with every sweep and shown by reports and
 * `gauntlet doctor` (docs/gpu.md has the fields):
 *   {"gpus": [{"index", "name", "uuid", "arch", "memory_mib", "memory_used_mib"}],
 *    "gpu_reason": why there are none (null when there are),
 *    "driver", "cuda", "kernel", "os", "cpu": {"model", "cores"}, "memory_mib", "hostname",
 *    "engines": {NAME: version-or-null},
 *    "python": {"version", "torch", "flashinfer"} (only when a Python engine was asked;
 *              null when python3 does not run)}
 * Unknown values are null, never an error. Text that came from the host (versions,
 * /proc/cpuinfo, os-release) is data: control characters and invalid UTF-8 become '?',
 * and each string is cut at HOST_MAX_LINE bytes (text_clean).
 *
 * Version commands run without a shell (spawn_run_capture: own process group, stdin from
 * /dev/null, stdout and stderr on pipes capped at HOST_MAX_OUTPUT each), all at once, as
 * events on the loop: their exits are pidfds, their output pipes, the timeout the loop's
 * `until`. A command that is not installed, fails, or is not done within the timeout
 * gives null; its process group is then killed.
 */
#ifndef GAUNTLET_HOST_H
#define GAUNTLET_HOST_H

#include <jansson.h>
#include <stdbool.h>

#include "proc/gpu.h"
#include "io/loop.h"
#include "base/profile.h"
#include "base/util.h"

/* Python engines import torch to print a version: a cold import takes seconds. */
#define HOST_COMMAND_TIMEOUT (15 * USEC_PER_SEC)
/* Output kept per stream of a version command; the rest is read and dropped. */
#define HOST_MAX_OUTPUT ((size_t)4096)
/* A version line, an OS or CPU name longer than this is cut. */
#define HOST_MAX_LINE ((size_t)200)

/* The fingerprint. With p, only p's engine is asked for its version; with p NULL, the
 * usual engines (llama.cpp, vllm, sglang, trtllm). Python engines (sglang, vllm, trtllm)
 * add the python entry. GPUs from g, a state the caller holds (gpu_open: GAUNTLET_FAKE_GPUS
 * applies), queried afresh here. *ret is a new reference. Fails only with -ENOMEM, or
 * -EINTR when a signal caught by the loop arrived while the commands ran (they are killed
 * first). */
int host_fingerprint_gpu(struct loop *l, const struct profile *p, struct gpu *g, json_t **ret);


/* One command to run for its first line (the exposed piece, for tests and tools). */
struct host_command {
        char *const *argv;       /* in: argv[0] looked up in PATH */
        char *line;              /* out, owned: the first non-blank line of stdout, or when
                                  * stdout has none, the first stderr line that mentions
                                  * "version" (llama-server prints there); trimmed and
                                  * cleaned as above. NULL when not found, not exited 0,
                                  * or nothing to keep */
        int exit_status;         /* out: 0..255, or -1 (not started, killed, signalled) */
        bool not_found;          /* out: argv[0] is not installed */
        bool timed_out;          /* out: still running at the deadline (killed) */
};

/* Runs cmds[0..n) at once and waits, as events on l, until all are done or timeout
 * passes; then kills what is left (SIGKILL to each process group) and reaps the main
 * processes. Returns 0, -ENOMEM, or -EINTR (a caught signal; every command killed). */
int host_run_commands(struct loop *l, struct host_command *cmds, size_t n, usec_t timeout);
void host_commands_release(struct host_command *cmds, size_t n);
/* The line of a finished capture worth keeping, as struct host_command's line (*ret NULL
 * when none, or when it did not exit 0). 0 or -ENOMEM. */
struct spawn_capture;
int host_command_line(const struct spawn_capture *c, char **ret);

#endif
