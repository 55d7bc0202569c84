/* cgroup.h -- a cgroup v2 of its own for each server, where the host gives gauntlet a subtree.
 *
 * No fork, double fork, setsid or emptied environment takes a process out of its cgroup.
 * So where the host lets gauntlet make cgroups, every server is born in one of its own
 * ("gauntlet-<attempt token>", a child of gauntlet's own cgroup: spawn.h's into_cgroup),
 * its processes are that cgroup's members, and at the stop the cgroup is killed
 * (cgroup.kill, or SIGKILL to each member on kernels before 5.14), waited for until empty
 * (cgroup.events says "populated 0") and removed, as systemd does. Where it cannot,
 * procs.h finds a server's processes through /proc instead (descendants, session, token).
 *
 * Where things are, never assumed: the hierarchy is the "cgroup2" line of
 * /proc/self/mountinfo (hybrid hosts mount it at /sys/fs/cgroup/unified), gauntlet's cgroup
 * the "0::" line of /proc/self/cgroup. When children there are legal: the "no internal
 * processes" rule lets a cgroup that holds processes of its own (gauntlet's does) have
 * children that hold processes only while it enables no controller for them
 * (cgroup.subtree_control empty), unless it is the root; a threaded cgroup has no such
 * children at all. On a systemd host this is the subtree of a unit with Delegate=yes (or
 * user@.service), or whatever root runs in.
 */
#ifndef GAUNTLET_CGROUP_H
#define GAUNTLET_CGROUP_H

#include <stdbool.h>
#include <sys/types.h>

/* Set (to anything but "" or "0"), gauntlet does not use cgroups: the /proc ways only. */
#define CGROUP_ENV_OFF "GAUNTLET_NO_CGROUP"
/* A server's cgroup is this prefix and its attempt's token. */
#define CGROUP_PREFIX "gauntlet-"

/* Where gauntlet makes its servers' cgroups: its own cgroup. */
struct cgroup_base {
        char *path;           /* its directory, e.g. /sys/fs/cgroup/unified/system.slice/x.service */
        int dirfd;
        bool has_kill;        /* cgroup.kill exists (Linux 5.14); else members get SIGKILL one by one */
};

/* Whether gauntlet can contain its servers in cgroups here: 0 and *ret when its own cgroup
 * is on a cgroup2 mount, is a domain cgroup whose children may hold processes, and a child
 * can be made there and processes moved into it (checked by making and removing one).
 * Otherwise a negative errno and, in *ret_reason (optional; caller frees), why not in a few
 * words: "GAUNTLET_NO_CGROUP is set", "no cgroup v2 hierarchy is mounted", "cannot create
 * a cgroup in '/sys/fs/cgroup/x': Permission denied", ... */
int cgroup_base_open(struct cgroup_base **ret, char **ret_reason);
void cgroup_base_free(struct cgroup_base *b);
static inline void cgroup_base_freep(struct cgroup_base **b) { cgroup_base_free(*b); }
#define _cleanup_cgroup_base_ __attribute__((cleanup(cgroup_base_freep)))

/* One server's cgroup. */
struct cgroup {
        char *path;           /* its directory */
        int dirfd;            /* clone3's CLONE_INTO_CGROUP takes it (spawn.h) */
        int events_fd;        /* cgroup.events: EPOLLPRI when "populated" changes; read to re-arm */
        bool has_kill;
        bool removed;
};

/* "gauntlet-<token>" (caller frees), or NULL. */
char *cgroup_name(const char *token);

/* Makes the cgroup `name` under b. -EEXIST when there is one already. */
int cgroup_create(const struct cgroup_base *b, const char *name, struct cgroup **ret);

/* An existing cgroup called `name`, wherever it is: first a child of gauntlet's own cgroup
 * (whether or not cgroups are in force now: an earlier run may have used them), then the
 * cgroup of any process whose cgroup is called so (an earlier run from another cgroup).
 * -ENOENT when none is found. For what a killed run left behind. */
int cgroup_find(const char *name, struct cgroup **ret);

/* The cgroup's member processes (cgroup.procs; zombies are no members), and those of the
 * cgroups below it (a server may make its own). *ret is a malloc'ed array, possibly
 * empty. */
int cgroup_members(const struct cgroup *cg, pid_t **ret, size_t *ret_n);

/* 1 while any process is in the cgroup or below it, 0 when none is, or a negative errno.
 * Re-arms events_fd. */
int cgroup_populated(const struct cgroup *cg);

/* SIGKILL to every process in it at once, forks in flight included (cgroup.kill).
 * -EOPNOTSUPP on kernels without cgroup.kill: the caller signals the members itself. */
int cgroup_kill(const struct cgroup *cg);

/* Removes the directory, and the cgroups a server made below it; -EBUSY while processes
 * are in any. Once removed, stays removed. */
int cgroup_remove(struct cgroup *cg);

/* Closes the descriptors; does not remove the cgroup. NULL is fine. */
void cgroup_free(struct cgroup *cg);

/* The directory of the cgroup v2 path cg (as /proc/PID/cgroup gives it, relative to the
 * cgroup namespace's root) in a mount table (the text of /proc/PID/mountinfo): the first
 * cgroup2 mount whose root holds cg, and the rest of cg below its mount point (escapes
 * such as \040 decoded). -ENOENT when no cgroup2 hierarchy is mounted, -EXDEV when none
 * holds cg. */
int cgroup_v2_dir(const char *mountinfo, const char *cg, char **ret);

#endif
