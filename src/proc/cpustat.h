/* cpustat.h -- how much of the host's CPU time a hypervisor took (steal), and other
 * processes than the ones measured, read from the first line of /proc/stat.
 *
 * A virtual machine's vCPUs share real cores with other tenants; while a vCPU waits for
 * one, the kernel counts "steal" time. A bench level measured while the hypervisor took a
 * fifth of the CPU time reads slower for reasons that are not the server's: on the 2-core
 * VM the tests run on, 18% steal during a llama-server bench cost 30% of its tokens per
 * second (docs/metrics.md, "host_steal"). The bench reads the counters at the level's start
 * and end; compare refuses to call such a level's slowdown a regression (docs/compare.md).
 */
#ifndef GAUNTLET_CPUSTAT_H
#define GAUNTLET_CPUSTAT_H

#include <stdbool.h>
#include <stdint.h>

struct cpustat {
        bool known;
        uint64_t total;   /* every field of the "cpu" line but guest time (counted in user) */
        uint64_t steal;
        uint64_t busy;    /* user + nice + system: what processes ran (not interrupts) */
        uint64_t idle;    /* idle + iowait */
};

/* Reads /proc/stat. Not there or not readable: known = false, and 0 all the same (the
 * host's steal is then unknown, never an error). */
void cpustat_read(struct cpustat *ret);
/* Parses the text of /proc/stat (its "cpu " line). -EINVAL when there is none or it is
 * malformed. */
int cpustat_parse(const char *text, struct cpustat *ret);
/* The fraction of the CPU time between a and b that was stolen, in [0, 1]; NAN when either
 * is unknown or no time passed. */
double cpustat_steal(const struct cpustat *a, const struct cpustat *b);
/* The fraction of the CPU time between a and b that processes other than ours ran, when
 * ours (the bench and the server measured) ran own_s CPU seconds in that time: the busy
 * time less own_s, in [0, 1]. A compiler beside a bench slows the server as a hypervisor's
 * steal does, and /proc/stat counts it as any other process's. NAN when either is unknown,
 * own_s is not a number, or no time passed. ticks_per_s: sysconf(_SC_CLK_TCK). */
double cpustat_others(const struct cpustat *a, const struct cpustat *b, double own_s, long ticks_per_s);
/* The fraction of the CPU time between a and b that was idle (idle and iowait), in [0, 1];
 * NAN when either is unknown or no time passed. */
double cpustat_idle(const struct cpustat *a, const struct cpustat *b);
/* What other processes took that the ones measured may have wanted: their share (others)
 * beyond the host's idle share (idle), at least 0. While a CPU sat idle, other processes
 * ran beside ours, not in their place: on a 128-core host, servers of other slots spinning
 * on 10% of the CPUs take nothing from a bench; on 2 cores a compiler does. NAN when others
 * is unknown; idle unknown counts as none. */
double cpustat_contention(double others, double idle);

#endif
