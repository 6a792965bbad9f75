/* What listens on a TCP port of this machine, read from /proc/net/tcp and
 * /proc/net/tcp6: a capture that finds no client names what it found
 * instead (a program on [::1] only, another program, nothing). */
#pragma once

#include <stddef.h>

/* Writes "[::1]:8086, 127.0.0.1:8086" (the listening sockets' addresses) or
 * "nothing" into out; returns the number of listening sockets found, or -1
 * when neither table could be read (out then says so). */
int btc_listeners_describe(unsigned port, char *out, size_t outlen);
