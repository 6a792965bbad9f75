/* What /proc and /sys say about the machine and its threads (sysinfo.c). */
#ifndef BT_SYSINFO_H
#define BT_SYSINFO_H

#include <stddef.h>
#include <stdint.h>

/* The CPUs configured, 1 to 256. */
int bt_sysinfo_cpu_count(void);
/* A number alone in a file; fallback when it cannot be read. */
unsigned long bt_sysinfo_read_ulong(const char *path, unsigned long fallback);
/* A value of a CPU's topology (physical_package_id, die_id, core_id); 0
 * when unknown. */
unsigned long bt_sysinfo_topology(int cpu, const char *name);

/* A thread's name and its process's (id and name) from /proc, for threads
 * that context switches name; "???" when unknown, *pid 0. */
void bt_sysinfo_external_name(uint32_t tid, char *thread, size_t thread_size, char *process,
                              size_t process_size, uint32_t *pid);

#endif
