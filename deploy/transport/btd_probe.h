/* What answers on a port where SSH failed (btd_probe.c). */
#ifndef BTD_PROBE_H
#define BTD_PROBE_H

#include <stddef.h>

/* 1 when HOST:PORT accepts a connection and speaks first with something that
 * is not an SSH banner (its first line, control bytes escaped, in said); 0
 * when it sends an SSH banner, nothing within timeout_ms, or cannot be
 * reached. */
int btd_probe_not_ssh(const char *host, int port, int timeout_ms, char *said, size_t saidlen);

#endif
