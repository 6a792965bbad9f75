/* What /proc and /sys say about the machine and its threads, for system
 * tracing (sysinfo.h): the CPUs, their topology, and the names of threads
 * and processes that are not the program's. */
#define _GNU_SOURCE
#include "sysinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bt_sysinfo_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

/* A number alone in a file (no scanf: it would bring 45 KB of libc's
 * float parsing into every traced static program). */
unsigned long bt_sysinfo_read_ulong(const char *path, unsigned long fallback)
{
    FILE *f = fopen(path, "r");
    char text[32];
    unsigned long v = fallback;
    if (f && fgets(text, sizeof text, f)) {
        char *end;
        unsigned long n = strtoul(text, &end, 10);
        if (end != text)
            v = n;
    }
    if (f)
        fclose(f);
    return v;
}

unsigned long bt_sysinfo_topology(int cpu, const char *name)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, name);
    return bt_sysinfo_read_ulong(path, 0);
}

static void read_comm(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    if (f && fgets(out, (int)n, f)) {
        out[strcspn(out, "\n")] = 0;
    } else {
        snprintf(out, n, "???");
    }
    if (f)
        fclose(f);
}

void bt_sysinfo_external_name(uint32_t tid, char *thread, size_t thread_size, char *process,
                              size_t process_size, uint32_t *pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/comm", tid);
    read_comm(path, thread, thread_size);
    *pid = 0;
    snprintf(path, sizeof path, "/proc/%u/status", tid);
    FILE *f = fopen(path, "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "Tgid:", 5) == 0) {
            *pid = (uint32_t)strtoul(line + 5, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    if (*pid) {
        snprintf(path, sizeof path, "/proc/%u/comm", *pid);
        read_comm(path, process, process_size);
    } else {
        snprintf(process, process_size, "???");
    }
}
