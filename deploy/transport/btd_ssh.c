/* SSH connection setup and exec channels (see btd_ssh.h). Host keys follow
 * OpenSSH's rules: unknown keys are refused unless the user accepts new ones,
 * changed keys always; passphrases are only ever asked on the terminal. */
#define _GNU_SOURCE
#include "btd_ssh.h"

#include "btd_decimal.h"
#include "btd_known_hosts.h"
#include "btd_msg.h"
#include "btd_probe.h"

#include <errno.h>
#include <libssh/callbacks.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int btd_target_parse(const char *spec, struct btd_target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *host = spec;
    const char *at = strrchr(spec, '@');
    if (at) {
        size_t n = (size_t)(at - spec);
        if (n == 0 || n >= sizeof t->user) {
            snprintf(err, errlen, "bad user in '%s' (expected [USER@]HOST[:PORT])", spec);
            return -1;
        }
        memcpy(t->user, spec, n);
        host = at + 1;
    }
    const char *port = NULL;
    size_t hostlen;
    if (host[0] == '[') {
        const char *close = strchr(host, ']');
        if (!close) {
            snprintf(err, errlen, "missing ']' in '%s' (expected [USER@][ADDRESS]:PORT)", spec);
            return -1;
        }
        host++;
        hostlen = (size_t)(close - host);
        if (close[1] == ':')
            port = close + 2;
        else if (close[1] != '\0') {
            snprintf(err, errlen, "unexpected '%s' after ']' in '%s'", close + 1, spec);
            return -1;
        }
    } else {
        const char *colon = strchr(host, ':');
        if (colon && strchr(colon + 1, ':')) {
            snprintf(err, errlen, "write an IPv6 address as [ADDRESS]:PORT (found '%s')", host);
            return -1;
        }
        hostlen = colon ? (size_t)(colon - host) : strlen(host);
        if (colon)
            port = colon + 1;
    }
    if (hostlen == 0 || hostlen >= sizeof t->host) {
        snprintf(err, errlen, "no host in '%s' (expected [USER@]HOST[:PORT])", spec);
        return -1;
    }
    memcpy(t->host, host, hostlen);
    if (port) {
        long p;
        if (btd_parse_decimal(port, &p) != 0 || p < 1 || p > 65535) {
            snprintf(err, errlen, "bad port '%s' in '%s' (expected 1..65535)", port, spec);
            return -1;
        }
        t->port = (int)p;
    }
    return 0;
}

static int watchdog_fd = -1;
static int watchdog_seconds;
static volatile sig_atomic_t watchdog_fired;

static void on_alarm(int sig)
{
    (void)sig;
    watchdog_fired = 1;
    if (watchdog_fd >= 0)
        shutdown(watchdog_fd, SHUT_RDWR);
}

void btd_watchdog_start(struct btd_conn *c, int seconds)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    watchdog_fd = ssh_get_fd(c->session);
    watchdog_seconds = seconds;
    watchdog_fired = 0;
    alarm((unsigned)seconds);
}

void btd_watchdog_kick(void)
{
    if (watchdog_fd >= 0)
        alarm((unsigned)watchdog_seconds);
}

bool btd_watchdog_stop(void)
{
    alarm(0);
    watchdog_fd = -1;
    return watchdog_fired != 0;
}

/* Set when a key needed its passphrase but there was no terminal to ask. */
static bool passphrase_unasked;

static int ask_passphrase(const char *prompt, char *buf, size_t len, int echo, int verify,
                          void *userdata)
{
    (void)userdata;
    if (!isatty(STDIN_FILENO)) {
        passphrase_unasked = true;
        return -1;
    }
    return ssh_getpass(prompt, buf, len, echo, verify);
}

static struct ssh_callbacks_struct callbacks = {.auth_function = ask_passphrase};

static void fingerprint(ssh_session s, char *out, size_t outlen, char *type, size_t typelen)
{
    ssh_key key = NULL;
    unsigned char *hash = NULL;
    size_t hlen = 0;
    snprintf(out, outlen, "(unavailable)");
    snprintf(type, typelen, "?");
    if (ssh_get_server_publickey(s, &key) != SSH_OK)
        return;
    snprintf(type, typelen, "%s", ssh_key_type_to_char(ssh_key_type(key)));
    if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &hlen) == 0) {
        char *fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, hlen);
        if (fp) {
            snprintf(out, outlen, "%s", fp);
            ssh_string_free_char(fp);
        }
        ssh_clean_pubkey_hash(&hash);
    }
    ssh_key_free(key);
}

static int verify_host_key(struct btd_conn *c, const struct btd_connect_options *o)
{
    char fp[128], type[64], entry[300];
    char *file = NULL;
    ssh_options_get(c->session, SSH_OPTIONS_KNOWNHOSTS, &file);
    const char *kh = file ? file : "known_hosts";
    enum ssh_known_hosts_e state = btd_known_hosts_check(c->session);
    int rc = BTD_EXIT_HOSTKEY;
    fingerprint(c->session, fp, sizeof fp, type, sizeof type);
    switch (state) {
    case SSH_KNOWN_HOSTS_OK:
        rc = BTD_EXIT_OK;
        break;
    case SSH_KNOWN_HOSTS_CHANGED:
        /* known_hosts names a host on another port than 22 "[host]:port". */
        if (c->port != 22)
            snprintf(entry, sizeof entry, "[%s]:%d", c->host, c->port);
        else
            snprintf(entry, sizeof entry, "%s", c->host);
        btd_error("host key for %s has CHANGED: the board now offers %s %s, which does not "
                  "match the key recorded in %s. Refusing to connect (a changed key may mean "
                  "someone is intercepting the connection). If the board was reinstalled, "
                  "remove its old line with: ssh-keygen -f '%s' -R '%s'",
                  c->where, type, fp, kh, kh, entry);
        break;
    case SSH_KNOWN_HOSTS_OTHER:
        btd_error("host key for %s: the board offers a %s key (%s) but %s records a key of "
                  "another type for it. Refusing to connect; check the board and update %s",
                  c->where, type, fp, kh, kh);
        break;
    case SSH_KNOWN_HOSTS_NOT_FOUND:
    case SSH_KNOWN_HOSTS_UNKNOWN:
        if (o->accept_new_host_key) {
            if (ssh_session_update_known_hosts(c->session) != SSH_OK) {
                btd_error("cannot record the host key of %s in %s: %s", c->where, kh,
                          ssh_get_error(c->session));
                break;
            }
            btd_note("accepted new host key for %s: %s %s (recorded in %s)", c->where, type, fp,
                     kh);
            rc = BTD_EXIT_OK;
        } else {
            btd_error("host %s is unknown: its %s key fingerprint is %s and %s has no entry for "
                      "it. Refusing to connect. If this is your board, check the fingerprint "
                      "and run again with --accept-new-host-key to record it",
                      c->where, type, fp, kh);
        }
        break;
    case SSH_KNOWN_HOSTS_ERROR:
    default:
        btd_error("cannot check the host key of %s against %s: %s", c->where, kh,
                  ssh_get_error(c->session));
        break;
    }
    if (rc == BTD_EXIT_OK)
        snprintf(c->hostkey, sizeof c->hostkey, "%s %s", type, fp);
    ssh_string_free_char(file);
    return rc;
}

static int authenticate(struct btd_conn *c, const struct btd_connect_options *o)
{
    int rc = ssh_userauth_none(c->session, NULL);
    if (rc == SSH_AUTH_SUCCESS) {
        snprintf(c->auth_method, sizeof c->auth_method, "none (the board asks for nothing)");
        return BTD_EXIT_OK;
    }
    if (rc == SSH_AUTH_ERROR) {
        btd_error("authentication with %s failed: %s", c->where, ssh_get_error(c->session));
        return BTD_EXIT_AUTH;
    }
    int methods = ssh_userauth_list(c->session, NULL);
    if (methods & SSH_AUTH_METHOD_PUBLICKEY) {
        rc = ssh_userauth_publickey_auto(c->session, NULL, NULL);
        if (rc == SSH_AUTH_SUCCESS) {
            snprintf(c->auth_method, sizeof c->auth_method, "public key");
            return BTD_EXIT_OK;
        }
    }
    if (passphrase_unasked)
        btd_error("a key is protected by a passphrase and there is no terminal to ask for it: "
                  "run boardtrace on a terminal, or load the key into ssh-agent (ssh-add)");
    btd_error("authentication with %s refused: tried %s%s%sthe default identity files; the "
              "board accepts:%s%s%s. boardtrace never takes passwords on the command line: "
              "load a key into ssh-agent or give one with -i",
              c->where, getenv("SSH_AUTH_SOCK") ? "ssh-agent, " : "",
              o->identity ? o->identity : "", o->identity ? ", " : "",
              methods & SSH_AUTH_METHOD_PUBLICKEY ? " publickey" : "",
              methods & SSH_AUTH_METHOD_PASSWORD ? " password" : "",
              methods & SSH_AUTH_METHOD_INTERACTIVE ? " keyboard-interactive" : "");
    return BTD_EXIT_AUTH;
}

int btd_conn_open(struct btd_conn *c, const struct btd_connect_options *o)
{
    memset(c, 0, sizeof *c);
    struct btd_target t;
    char why[300];
    if (btd_target_parse(o->target, &t, why, sizeof why) != 0) {
        btd_error("--host: %s", why);
        return BTD_EXIT_USAGE;
    }
    c->session = ssh_new();
    if (!c->session) {
        btd_error("cannot create an SSH session (libssh)");
        return BTD_EXIT_CONNECT;
    }
    ssh_session s = c->session;
    if (btd_verbosity >= 3) {
        int level = SSH_LOG_PROTOCOL;
        ssh_options_set(s, SSH_OPTIONS_LOG_VERBOSITY, &level);
    }
    ssh_options_set(s, SSH_OPTIONS_HOST, t.host);
    /* The config is read for the alias first, then the command line wins. */
    if (o->ssh_config && access(o->ssh_config, R_OK) != 0) {
        btd_error("-F %s: cannot read the SSH config file: %s", o->ssh_config, strerror(errno));
        return BTD_EXIT_USAGE;
    }
    if (ssh_options_parse_config(s, o->ssh_config) != 0) {
        btd_error("cannot parse SSH config %s: %s", o->ssh_config ? o->ssh_config : "~/.ssh/config",
                  ssh_get_error(s));
        return BTD_EXIT_USAGE;
    }
    bool no = false;
    ssh_options_set(s, SSH_OPTIONS_PROCESS_CONFIG, &no);
    if (t.user[0])
        ssh_options_set(s, SSH_OPTIONS_USER, t.user);
    if (t.port)
        ssh_options_set(s, SSH_OPTIONS_PORT, &t.port);
    if (o->identity) {
        if (access(o->identity, R_OK) != 0) {
            btd_error("-i %s: cannot read the identity file: %s", o->identity, strerror(errno));
            return BTD_EXIT_USAGE;
        }
        ssh_options_set(s, SSH_OPTIONS_ADD_IDENTITY, o->identity);
    }
    if (o->known_hosts)
        ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, o->known_hosts);
    long timeout = o->timeout_s > 0 ? o->timeout_s : 20;
    ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout);
    /* Transfers are request/response (SFTP) and small writes must not wait
     * for delayed ACKs. */
    int nodelay = 1;
    ssh_options_set(s, SSH_OPTIONS_NODELAY, &nodelay);
    ssh_callbacks_init(&callbacks);
    ssh_set_callbacks(s, &callbacks);

    char *user = NULL, *host = NULL;
    unsigned int port = 22;
    if (ssh_options_get(s, SSH_OPTIONS_USER, &user) != SSH_OK || !user) {
        /* Neither the target nor the config named a user: ssh's default. */
        struct passwd *pw = getpwuid(getuid());
        if (pw) {
            ssh_options_set(s, SSH_OPTIONS_USER, pw->pw_name);
            ssh_options_get(s, SSH_OPTIONS_USER, &user);
        }
    }
    ssh_options_get(s, SSH_OPTIONS_HOST, &host);
    ssh_options_get_port(s, &port);
    snprintf(c->user, sizeof c->user, "%s", user ? user : "");
    snprintf(c->host, sizeof c->host, "%s", host ? host : t.host);
    c->port = (int)port;
    snprintf(c->where, sizeof c->where, "%s@%s:%d", c->user, c->host, c->port);
    ssh_string_free_char(user);
    ssh_string_free_char(host);

    btd_debug("connecting to %s (from '%s')", c->where, o->target);
    if (ssh_connect(s) != SSH_OK) {
        char said[200];
        if (btd_probe_not_ssh(c->host, c->port, 2000, said, sizeof said))
            btd_error("cannot connect to %s: %s:%d answered but is not an SSH server (it sent "
                      "\"%s\"); check the port",
                      c->where, c->host, c->port, said);
        else
            btd_error("cannot connect to %s: %s", c->where, ssh_get_error(s));
        return BTD_EXIT_CONNECT;
    }
    int rc = verify_host_key(c, o);
    if (rc != BTD_EXIT_OK)
        return rc;
    return authenticate(c, o);
}

void btd_conn_close(struct btd_conn *c)
{
    if (c->sftp)
        sftp_free(c->sftp);
    c->sftp = NULL;
    if (c->session) {
        if (ssh_is_connected(c->session))
            ssh_disconnect(c->session);
        ssh_free(c->session);
    }
    c->session = NULL;
}

bool btd_conn_sftp(struct btd_conn *c)
{
    if (c->sftp_state)
        return c->sftp_state > 0;
    c->sftp = sftp_new(c->session);
    if (c->sftp && sftp_init(c->sftp) == SSH_OK) {
        c->sftp_state = 1;
        return true;
    }
    btd_debug("SFTP not available on %s: %s", c->where, ssh_get_error(c->session));
    if (c->sftp)
        sftp_free(c->sftp);
    c->sftp = NULL;
    c->sftp_state = -1;
    return false;
}

struct mem_in {
    const char *data;
    size_t len;
    size_t pos;
};

static long read_mem(void *ctx, char *buf, size_t len)
{
    struct mem_in *m = ctx;
    size_t n = m->len - m->pos < len ? m->len - m->pos : len;
    memcpy(buf, m->data + m->pos, n);
    m->pos += n;
    return (long)n;
}

int btd_ssh_exec(struct btd_conn *c, const char *cmd, const void *in, size_t inlen,
                 struct btd_buf *out, struct btd_buf *errout, int idle_timeout_s, char *err,
                 size_t errlen)
{
    struct mem_in m = {in, inlen, 0};
    struct btd_exec_io io = {in ? read_mem : NULL, NULL, &m, false};
    return btd_ssh_exec_io(c, cmd, &io, out, errout, idle_timeout_s, err, errlen);
}

int btd_ssh_exec_io(struct btd_conn *c, const char *cmd, struct btd_exec_io *io,
                    struct btd_buf *out, struct btd_buf *errout, int idle_timeout_s, char *err,
                    size_t errlen)
{
    ssh_channel ch = ssh_channel_new(c->session);
    if (!ch || ssh_channel_open_session(ch) != SSH_OK ||
        ssh_channel_request_exec(ch, cmd) != SSH_OK) {
        snprintf(err, errlen, "cannot start a command on %s: %s", c->where,
                 ssh_get_error(c->session));
        if (ch)
            ssh_channel_free(ch);
        io->not_started = true;
        return -1;
    }
    btd_debug("exec on %s: %s", c->where, cmd);
    int status = -1;
    char buf[65536];
    if (io->read_in) {
        for (;;) {
            long n = io->read_in(io->ctx, buf, sizeof buf);
            if (n < 0) {
                snprintf(err, errlen, "reading the input for the board failed");
                goto done;
            }
            if (n == 0)
                break;
            if (ssh_channel_write(ch, buf, (uint32_t)n) != n) {
                snprintf(err, errlen, "sending input to %s failed: %s", c->where,
                         ssh_get_error(c->session));
                goto done;
            }
        }
    }
    ssh_channel_send_eof(ch);
    double last = btd_now();
    for (;;) {
        int got = 0;
        for (int stream = 0; stream < 2; stream++) {
            int n = ssh_channel_read_nonblocking(ch, buf, sizeof buf, stream);
            if (n == SSH_ERROR) {
                snprintf(err, errlen, "lost the connection to %s: %s", c->where,
                         ssh_get_error(c->session));
                goto done;
            }
            if (n <= 0)
                continue;
            got = 1;
            if (stream == 0 && io->write_out) {
                if (io->write_out(io->ctx, buf, (size_t)n) != 0) {
                    snprintf(err, errlen, "writing the data received from %s failed", c->where);
                    goto done;
                }
            } else if (stream == 0 && out) {
                btd_buf_append(out, buf, (size_t)n);
            } else if (stream == 1 && errout) {
                btd_buf_append(errout, buf, (size_t)n);
            }
        }
        if (got) {
            last = btd_now();
            continue;
        }
        if (ssh_channel_is_eof(ch) || ssh_channel_is_closed(ch))
            break;
        if (idle_timeout_s > 0 && btd_now() - last > idle_timeout_s) {
            snprintf(err, errlen, "%s sent nothing for %d s while running a command", c->where,
                     idle_timeout_s);
            goto done;
        }
        if (ssh_channel_poll_timeout(ch, 100, 0) == SSH_ERROR) {
            snprintf(err, errlen, "lost the connection to %s: %s", c->where,
                     ssh_get_error(c->session));
            goto done;
        }
    }
    status = ssh_channel_get_exit_status(ch);
    if (status < 0) {
        snprintf(err, errlen, "the command on %s ended without an exit status", c->where);
        status = -1;
    }
done:
    ssh_channel_close(ch);
    ssh_channel_free(ch);
    return status;
}
