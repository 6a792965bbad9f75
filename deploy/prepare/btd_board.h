/* What boardtrace learns about a board in one round trip: architecture,
 * `uname -a`, a private temporary folder, free space there, TCP ports in use,
 * what tracing modes 3-4 need (/proc/self/exe, exec permission), and the
 * board's own C library (its loader, glibc's version) and Python (python3's
 * version). */
#ifndef BTD_BOARD_H
#define BTD_BOARD_H

#include "btd_ssh.h"

#include <stdbool.h>
#include <stdint.h>

enum {
    BTD_BOARD_MAX_PORTS = 4096,
    BTD_PORT_MIN = 10000, /* the tracing port is chosen in MIN..MAX */
    BTD_PORT_MAX = 65535,
};

struct btd_board {
    char uname_m[64];
    const char *arch; /* normalized uname_m */
    char uname[512];
    char dir[1024];      /* the private folder made (mode 0700), "" if none */
    char dir_error[600]; /* why it could not be made */
    uint64_t free_bytes; /* in dir (or the base folder) */
    bool free_known;
    bool maps_readable; /* /proc/self/maps */
    bool exe_link;      /* /proc/self/exe resolves: the runtime reads its own symbols */
    int exec_ok;        /* -1 unknown, 0 folder is noexec, 1 can run files there */
    char perf_paranoid[16];
    char loader[256];               /* the board's own dynamic loader, "" none */
    char libc[64];                  /* "glibc 2.41" when the board says, else "" */
    char python[256];               /* python3 as PATH finds it, "" none */
    char python_real[256];          /* the file it leads to (/usr/bin/python3.13) */
    char python_version[16];        /* "3.13" from that file's name, "" unknown */
    int ports[BTD_BOARD_MAX_PORTS]; /* local TCP ports in use, any state */
    int nports;
    int ephemeral_lo, ephemeral_hi; /* ip_local_port_range, 0 0 if unknown */
};

/* Probes the board. base is the folder for the temporary folder (NULL: the
 * board's ${TMPDIR:-/tmp}); make_dir creates boardtrace.TAGXXXXXX in it, tag
 * being the host's own (letters and digits, NULL none), so a host that lost
 * the probe's answer can still find the folder it made. Returns 0, or -1
 * with err (the command itself failed). A folder that cannot be made is not
 * an error here: dir is "" and dir_error says why. */
int btd_board_probe(struct btd_conn *c, const char *base, const char *tag, bool make_dir,
                    struct btd_board *b, char *err, size_t errlen);

/* Parses the probe's output (exposed for tests). */
void btd_board_parse(const char *text, struct btd_board *b);

/* A port in BTD_PORT_MIN..BTD_PORT_MAX outside the board's ephemeral range
 * (Linux's default when unknown) that no TCP socket used, chosen at random. */
int btd_board_free_port(const struct btd_board *b);

/* Removes a folder made by the probe (rm -rf). Returns 0 or -1 with err. */
int btd_board_remove_dir(struct btd_conn *c, const char *dir, char *err, size_t errlen);
/* Removes the folders under base (as for the probe) that a probe given tag
 * made, whatever their name's end: those this user owns, not links.
 * Returns how many, or -1 with err. */
int btd_board_remove_tagged(struct btd_conn *c, const char *base, const char *tag, char *err,
                            size_t errlen);

/* Whether a file of that name in a run's folder would be one of the
 * supervisor's or the capture's own. */
bool btd_board_name_reserved(const char *name);

#endif
