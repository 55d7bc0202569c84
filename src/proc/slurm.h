/* slurm.h -- the Slurm launcher: each cell's server a Slurm job of its own, run by srun.
 *
 * gauntlet spawns `srun ... PROGRAM ARGS` where it would spawn the server (supervise.h's
 * launcher hooks): srun asks Slurm for one task on one node, runs the server there and
 * streams its stdout and stderr back, so the cell's log fills as it does for a server run
 * here, and srun's exit stands for the server's end. Each job is named gauntlet-<token>
 * (the attempt's token, journaled before srun starts), which is how gauntlet finds it
 * again: to learn its node and state (squeue, scontrol), to cancel it (scancel), and in
 * the next run when gauntlet was killed. docs/slurm.md says how it is used.
 *
 * Slurm's commands come from PATH and read SLURM_CONF and the other SLURM_* variables as
 * they always do; they run through spawn_start (never a shell), on the loop, each with a
 * timeout, and what they print is data: parsed with limits, cleaned before it becomes
 * evidence.
 */
#ifndef GAUNTLET_SLURM_H
#define GAUNTLET_SLURM_H

#include <stdbool.h>

#include "base/util.h"
#include "proc/supervise.h"

#define SLURM_JOB_PREFIX "gauntlet-"
/* How long one Slurm command may take (MessageTimeout is 10 s by default; a command may
 * retry once). Past it the command is killed and counts as failed. */
#define SLURM_CMD_TIMEOUT (30 * USEC_PER_SEC)
/* Slurm's output kept per command (a job's record is a few KiB); past it, cut. */
#define SLURM_MAX_OUTPUT ((size_t)256 << 10)

/* A matrix's `slurm:` settings (docs/slurm.md); the matrix parser fills them. */
struct slurm_settings {
        char *partition;              /* NULL: the cluster's default partition */
        char *account;                /* NULL: the user's default account */
        int gpus_per_cell;            /* --gres=gpu:N per job; default the matrix's
                                         gpus_per_cell (its tp); 0: no GPU asked for */
        char *time;                   /* --time in Slurm's own form ("1:30:00"), from a
                                         duration or given as such; NULL: the partition's */
        int max_parallel;             /* jobs of this sweep at once; default 4 */
        usec_t queue_timeout;         /* how long a job may wait to start; default 1h */
        char **extra_args;            /* more srun options, before the server's argv; may be NULL */
        unsigned line;                /* of the `slurm:` key; 0 when absent */
};

/* The launcher for a matrix's `slurm:` settings; cfg outlives every server it starts. */
void slurm_launcher(const struct slurm_settings *cfg, struct server_launcher *ret);

/* What gauntlet knows of one job, from squeue or scontrol. */
struct slurm_job_info {
        long id;                    /* 0: no such job */
        char *state;                /* "PENDING", "RUNNING", "TIMEOUT", ...; NULL unknown */
        char *reason;               /* Slurm's reason ("Resources", "TimeLimit"), or NULL */
        char *nodes;                /* the node list, NULL or "" before it has one */
        char *exit_code;            /* "3:0" (status:signal), scontrol and sacct only */
        char *run_time, *time_limit; /* as Slurm writes them, scontrol only */
};
void slurm_job_info_release(struct slurm_job_info *j);

/* srun's argv for one server: job name and comment, one task on one node, the settings'
 * partition, account, GPUs, time and extra_args, then program and argv[1...]. */
int slurm_build_argv(const struct slurm_settings *cfg, const char *job_name, const char *comment,
                     const char *program, char *const *argv, char ***ret);

/* The value of KEY in scontrol's one-line output ("JobId=12 JobName=x Reason=..."): a value
 * runs until the next " Word=" (values may hold spaces). 1 and *ret (caller frees), 0 when
 * the key is absent, -ENOMEM. */
int slurm_field(const char *text, const char *key, char **ret);

/* The first line of `squeue --format=%i|%T|%N|%r` output into *ret. 1 found, 0 empty,
 * -EBADMSG for a line that is not that, -ENOMEM. */
int slurm_parse_squeue(const char *text, struct slurm_job_info *ret);

/* `scontrol -o show job` output into *ret (JobId, JobState, Reason, NodeList, ExitCode,
 * RunTime, TimeLimit). 1, 0 when it names no job, -ENOMEM. */
int slurm_parse_scontrol_job(const char *text, struct slurm_job_info *ret);

/* `sacct --parsable2 --format=JobID,State,ExitCode,NodeList,Elapsed,Timelimit` output
 * (the first line, "12|CANCELLED by 0|0:15|node1|00:00:03|01:00:00") into *ret, for a job
 * the controller has forgotten. 1, 0 when it names no job, -ENOMEM. */
int slurm_parse_sacct(const char *text, struct slurm_job_info *ret);

/* Whether a job in this state still holds a place in the queue or on a node. */
bool slurm_state_active(const char *state);

/* "3:0" -> status 3, signal 0. -EINVAL for anything else. */
int slurm_parse_exit_code(const char *s, int *ret_status, int *ret_signal);

/* What a job that ended in j->state means for the attempt: 1 and *ret when Slurm ended it
 * (time limit, preemption, node failure, cancelled by someone else, out of memory), with
 * evidence naming the job, its state and reason, and `stepd` (slurmstepd's own "*** ...
 * ***" line from the log, or NULL); 0 when the server ended by itself (COMPLETED, FAILED:
 * the log says why). -ENOMEM. */
int slurm_state_outcome(const struct slurm_job_info *j, const char *stepd, struct server_outcome *ret);

#endif
