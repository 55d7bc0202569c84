/* cpustat.c -- the host's stolen CPU time (cpustat.h). */
#include "proc/cpustat.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The fields of the "cpu" line, in order: user nice system idle iowait irq softirq steal
 * guest guest_nice. guest and guest_nice are already inside user and nice. */
#define CPUSTAT_FIELDS 8
#define CPUSTAT_STEAL 7

int cpustat_parse(const char *text, struct cpustat *ret) {
        *ret = (struct cpustat){0};
        if (!text)
                return -EINVAL;
        const char *p = strncmp(text, "cpu ", 4) == 0 ? text : strstr(text, "\ncpu ");
        if (!p)
                return -EINVAL;
        p += *p == '\n' ? 5 : 4;
        uint64_t f[CPUSTAT_FIELDS];
        size_t n = 0;
        while (n < CPUSTAT_FIELDS) {
                while (*p == ' ')
                        p++;
                if (*p < '0' || *p > '9')
                        break;
                char *end;
                errno = 0;
                unsigned long long v = strtoull(p, &end, 10);
                if (errno || (*end != ' ' && *end != '\n' && *end != '\0'))
                        return -EINVAL;
                f[n++] = v;
                p = end;
        }
        /* kernels before 2.6.11 had no steal field: four fields at least */
        if (n < 4)
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (ret->total > UINT64_MAX - f[i])
                        return -EINVAL;
                ret->total += f[i];
        }
        ret->steal = n > CPUSTAT_STEAL ? f[CPUSTAT_STEAL] : 0;
        ret->busy = f[0] + f[1] + f[2];
        ret->idle = f[3] + (n > 4 ? f[4] : 0);
        ret->known = true;
        return 0;
}

void cpustat_read(struct cpustat *ret) {
        *ret = (struct cpustat){0};
        int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return;
        /* the "cpu" line is the first; the rest (one line per CPU, interrupts) is not needed */
        char buf[512];
        ssize_t k = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (k <= 0)
                return;
        buf[k] = '\0';
        char *nl = strchr(buf, '\n');
        if (!nl)
                return;
        nl[1] = '\0';
        (void)cpustat_parse(buf, ret);
}

double cpustat_steal(const struct cpustat *a, const struct cpustat *b) {
        if (!a->known || !b->known || b->total <= a->total || b->steal < a->steal)
                return NAN;
        double s = (double)(b->steal - a->steal) / (double)(b->total - a->total);
        return s > 1 ? 1 : s;
}

double cpustat_others(const struct cpustat *a, const struct cpustat *b, double own_s, long ticks_per_s) {
        if (!a->known || !b->known || b->total <= a->total || b->busy < a->busy || !isfinite(own_s) || own_s < 0 ||
            ticks_per_s <= 0)
                return NAN;
        double hz = (double)ticks_per_s;
        double s = ((double)(b->busy - a->busy) / hz - own_s) / ((double)(b->total - a->total) / hz);
        return s < 0 ? 0 : s > 1 ? 1 : s;
}

double cpustat_idle(const struct cpustat *a, const struct cpustat *b) {
        if (!a->known || !b->known || b->total <= a->total || b->idle < a->idle)
                return NAN;
        double s = (double)(b->idle - a->idle) / (double)(b->total - a->total);
        return s > 1 ? 1 : s;
}

double cpustat_contention(double others, double idle) {
        if (isnan(others))
                return NAN;
        double c = others - (isnan(idle) ? 0 : idle);
        return c > 0 ? c : 0;
}
