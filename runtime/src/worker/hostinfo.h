/* What the welcome message says about the program and the machine: program
 * name, executable time, CPU architecture and identification, host text. */
#ifndef BT_HOSTINFO_H
#define BT_HOSTINFO_H

#include <stddef.h>
#include <stdint.h>

void bt_host_program_name(char *buf, size_t size);
/* The name the discovery broadcast announces: bt_program_set_name's, else
 * the process name. */
void bt_host_broadcast_name(char *buf, size_t size);
uint64_t bt_host_exec_time(void);
uint8_t bt_host_cpu_arch(void);
/* x86 CPUID vendor (12 bytes, not terminated) and signature; zeros elsewhere. */
void bt_host_cpu_id(char vendor[12], uint32_t *id);
/* "OS: ...\nCompiler: ...\n..." lines; returns the length written. */
size_t bt_host_info(char *buf, size_t size);

#endif
