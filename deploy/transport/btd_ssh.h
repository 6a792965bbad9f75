/* The SSH connection to a board: target parsing, ~/.ssh/config, host key
 * verification against known_hosts, authentication (agent, identity files),
 * and running commands on exec channels with timeouts. */
#ifndef BTD_SSH_H
#define BTD_SSH_H

#include "btd_buf.h"

#include <libssh/libssh.h>
#include <libssh/sftp.h>
#include <stdbool.h>

/* [USER@]HOST[:PORT], HOST possibly an ~/.ssh/config alias or [IPv6]. */
struct btd_target {
    char user[128]; /* "" when not given */
    char host[256];
    int port; /* 0 when not given */
};

/* Returns 0, or -1 with the reason in err. */
int btd_target_parse(const char *spec, struct btd_target *t, char *err, size_t errlen);

struct btd_connect_options {
    const char *target;      /* [USER@]HOST[:PORT] */
    const char *identity;    /* -i, tried first; NULL for agent and defaults */
    const char *known_hosts; /* NULL: ~/.ssh/known_hosts (or the config's) */
    const char *ssh_config;  /* NULL: ~/.ssh/config and /etc/ssh/ssh_config */
    bool accept_new_host_key;
    int timeout_s; /* connect timeout */
};

struct btd_conn {
    ssh_session session;
    char where[400]; /* user@host:port for messages */
    char host[256];
    int port;
    char user[128];
    char hostkey[200];    /* "ssh-ed25519 SHA256:..." once verified */
    char auth_method[48]; /* "public key" or "none ..." */
    sftp_session sftp;    /* NULL until btd_conn_sftp succeeds */
    int sftp_state;       /* 0 not tried, 1 available, -1 not offered */
};

/* Connects, verifies the host key and authenticates. Returns BTD_EXIT_OK or
 * the exit status of the step that failed, after printing why. */
int btd_conn_open(struct btd_conn *c, const struct btd_connect_options *o);
void btd_conn_close(struct btd_conn *c);

/* Opens SFTP once; false when the board does not offer it (then callers
 * stream over exec channels). */
bool btd_conn_sftp(struct btd_conn *c);

/* Streams for btd_ssh_exec_io. read_in fills buf with stdin data and returns
 * the count, 0 at the end or -1 on error (NULL: no input). write_out takes
 * stdout data and returns 0, or -1 to abort (NULL: collect into out).
 * not_started is set when the command never started (no channel, or the
 * exec request refused or unanswered): nothing ran, so it is safe to ask
 * again. */
struct btd_exec_io {
    long (*read_in)(void *ctx, char *buf, size_t len);
    int (*write_out)(void *ctx, const char *data, size_t len);
    void *ctx;
    bool not_started;
};

int btd_ssh_exec_io(struct btd_conn *c, const char *cmd, struct btd_exec_io *io,
                    struct btd_buf *out, struct btd_buf *errout, int idle_timeout_s, char *err,
                    size_t errlen);

/* Runs CMD in the board's shell. IN (may be NULL) is written to its stdin,
 * then EOF. Collects stdout and stderr (either may be NULL to discard).
 * Gives up after idle_timeout_s without any data. Returns the command's exit
 * status (0..255), or -1 with the reason in err when the channel failed. */
int btd_ssh_exec(struct btd_conn *c, const char *cmd, const void *in, size_t inlen,
                 struct btd_buf *out, struct btd_buf *errout, int idle_timeout_s, char *err,
                 size_t errlen);

/* A stall watchdog for transfers: libssh's SFTP calls block without a time
 * limit, so when nothing moves for SECONDS the connection's socket is shut
 * down and whichever libssh call waits returns an error. Transfers kick it on
 * every chunk. */
void btd_watchdog_start(struct btd_conn *c, int seconds);
void btd_watchdog_kick(void);
/* Stops it; true when it fired (the connection is then unusable). */
bool btd_watchdog_stop(void);

#endif
