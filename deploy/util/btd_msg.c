/* Messages and exit statuses (see btd_msg.h). Everything goes to stderr so
 * that stdout carries only the program's own output and the summary. */
#define _GNU_SOURCE
#include "btd_msg.h"

#include "btd_escape.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int btd_verbosity = 1;

const char *btd_exit_step(int status)
{
    switch (status) {
    case BTD_EXIT_OK:
        return "ok";
    case BTD_EXIT_USAGE:
        return "usage";
    case BTD_EXIT_LOCAL:
        return "local files";
    case BTD_EXIT_CONNECT:
        return "connect";
    case BTD_EXIT_HOSTKEY:
        return "host key";
    case BTD_EXIT_AUTH:
        return "authentication";
    case BTD_EXIT_BOARD:
        return "board preflight";
    case BTD_EXIT_UPLOAD:
        return "upload";
    case BTD_EXIT_START:
        return "start";
    case BTD_EXIT_CAPTURE:
        return "capture";
    case BTD_EXIT_PULL:
        return "pull";
    case BTD_EXIT_OUTPUT:
        return "output";
    case BTD_EXIT_PROGRAM:
        return "program";
    case BTD_EXIT_INTERRUPTED:
        return "interrupted";
    default:
        return "unknown";
    }
}

static void emit(const char *kind, const char *fmt, va_list ap)
{
    fflush(stdout);
    fputs("boardtrace: ", stderr);
    fputs(kind, stderr);
    /* Messages carry board text (uname, paths, its errors): escaped. */
    btd_escape_vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void btd_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("error: ", fmt, ap);
    va_end(ap);
}

void btd_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit("warning: ", fmt, ap);
    va_end(ap);
}

void btd_note(const char *fmt, ...)
{
    if (btd_verbosity < 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("", fmt, ap);
    va_end(ap);
}

void btd_debug(const char *fmt, ...)
{
    if (btd_verbosity < 2)
        return;
    va_list ap;
    va_start(ap, fmt);
    emit("debug: ", fmt, ap);
    va_end(ap);
}

void btd_format_size(double bytes, char *out, unsigned long outlen)
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(out, outlen, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

double btd_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}
