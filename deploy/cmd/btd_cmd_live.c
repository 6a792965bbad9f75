/* `boardtrace live`: run the program on the board and forward a port on the
 * host's 127.0.0.1 to its tracing port through the same SSH connection
 * (direct-tcpip), so the Tracy GUI connects to the board as if it were local. */
#define _GNU_SOURCE
#include "btd_cmd.h"
#include "btd_deploy.h"
#include "btd_interrupt.h"
#include "btd_msg.h"
#include "btd_session.h"
#include "btd_status.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

enum { MAX_FORWARDS = 16 };

struct forward {
    int fd;
    ssh_channel ch;
    bool client_eof; /* the GUI closed its side */
};

struct live {
    struct btd_deploy *d;
    struct btd_session *s;
    int listen_fd;
    int local_port;
    bool announced;
    struct forward fw[MAX_FORWARDS];
    int nfw;
};

static int listen_local(int port, int *bound)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *bound = ntohs(a.sin_port);
    return fd;
}

static void drop(struct live *l, int i)
{
    close(l->fw[i].fd);
    ssh_channel_close(l->fw[i].ch);
    ssh_channel_free(l->fw[i].ch);
    l->fw[i] = l->fw[--l->nfw];
    btd_note("GUI connection closed");
}

static int live_fds(void *ctx, struct pollfd *fds, int max)
{
    struct live *l = ctx;
    int n = 0;
    fds[n++] = (struct pollfd){.fd = l->listen_fd, .events = POLLIN};
    for (int i = 0; i < l->nfw && n < max; i++)
        fds[n++] = (struct pollfd){.fd = l->fw[i].client_eof ? -1 : l->fw[i].fd, .events = POLLIN};
    return n;
}

static void accept_client(struct live *l)
{
    int fd = accept4(l->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    if (l->nfw == MAX_FORWARDS) {
        close(fd);
        return;
    }
    /* The board's loopback addresses in turn: our runtime listens on both,
     * upstream's clients under TRACY_ONLY_LOCALHOST on [::1] alone. */
    static const char *const board_addrs[] = {"127.0.0.1", "::1"};
    ssh_channel ch = NULL;
    const char *reached = NULL;
    for (size_t i = 0; i < sizeof board_addrs / sizeof board_addrs[0] && !reached; i++) {
        ch = ssh_channel_new(l->d->conn.session);
        if (ch && ssh_channel_open_forward(ch, board_addrs[i], l->s->port, "127.0.0.1",
                                           l->local_port) == SSH_OK)
            reached = board_addrs[i];
        else if (ch)
            ssh_channel_free(ch);
    }
    if (!reached) {
        btd_warn("cannot forward to the board's port %d on 127.0.0.1 or [::1]: %s", l->s->port,
                 ssh_get_error(l->d->conn.session));
        close(fd);
        return;
    }
    l->fw[l->nfw++] = (struct forward){.fd = fd, .ch = ch};
    btd_note("GUI connected; forwarding to the board's %s%s%s:%d", strchr(reached, ':') ? "[" : "",
             reached, strchr(reached, ':') ? "]" : "", l->s->port);
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int live_work(void *ctx, struct pollfd *fds, int n)
{
    struct live *l = ctx;
    if (!l->announced && l->s->ready) {
        printf("live: connect the Tracy GUI to 127.0.0.1:%d (forwarded to the board's "
               "loopback port %d); at its end the program waits until a GUI has taken its data "
               "(TRACY_NO_EXIT=1); Ctrl-C stops it\n"
               "live: a program traced with boardtrace's runtime serves any Tracy GUI from "
               "0.10 to 0.14.0 (tenstorrent's 0.10 fork with --env "
               "BOARDTRACE_TRACY_FLAVOR=tt); one built with upstream's client, only that "
               "release's GUI\n",
               l->local_port, l->s->port);
        fflush(stdout);
        l->announced = true;
    }
    char buf[32768];
    /* Board to GUI: whatever the forward channels hold. */
    for (int i = 0; i < l->nfw; i++) {
        int got;
        while ((got = ssh_channel_read_nonblocking(l->fw[i].ch, buf, sizeof buf, 0)) > 0) {
            if (write_all(l->fw[i].fd, buf, (size_t)got) != 0)
                break;
        }
        if (got == SSH_ERROR || ssh_channel_is_eof(l->fw[i].ch) ||
            ssh_channel_is_closed(l->fw[i].ch)) {
            drop(l, i--);
        }
    }
    if (n > 0 && (fds[0].revents & POLLIN))
        accept_client(l);
    /* GUI to board. fds[1..] match fw[] as live_fds listed them. */
    for (int i = 1; i < n && i - 1 < l->nfw; i++) {
        struct forward *f = &l->fw[i - 1];
        if (fds[i].fd != f->fd || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t got = read(f->fd, buf, sizeof buf);
        if (got > 0) {
            if (ssh_channel_write(f->ch, buf, (uint32_t)got) != got)
                f->client_eof = true;
        } else {
            f->client_eof = true;
            ssh_channel_send_eof(f->ch);
        }
    }
    return 0;
}

int btd_cmd_live(const struct btd_options *o)
{
    struct btd_deploy d = {.o = o, .t_start = btd_now()};
    struct btd_session s = {.trace_size = -1};
    struct live l = {.d = &d, .s = &s, .listen_fd = -1};
    int status = btd_binary_load(&d.program, o->program, "program");
    if (status != BTD_EXIT_OK)
        return status;
    btd_program_tracing(&d.program);
    l.listen_fd = listen_local(o->local_port, &l.local_port);
    if (l.listen_fd < 0) {
        btd_error("cannot listen on 127.0.0.1:%d: %s; choose another port with -L (0 picks a "
                  "free one)",
                  o->local_port, strerror(errno));
        return BTD_EXIT_LOCAL;
    }
    btd_install_signals();
    status = btd_deploy_start(&d);
    bool leave = false;
    if (status == BTD_EXIT_OK) {
        s.extra_fds = live_fds;
        s.extra_work = &live_work;
        s.extra_ctx = &l;
        /* The program runs: one Ctrl-C stops it gently, as in run. */
        btd_interrupt_step("run", false);
        status = btd_session_start(&s, &d, NULL, btd_board_free_port(&d.board));
        if (status == BTD_EXIT_OK)
            status = btd_session_wait(&s);
        leave = status == BTD_EXIT_INTERRUPTED;
        if (status == BTD_EXIT_OK && (s.corrupt || !s.verified)) {
            btd_error("the upload is corrupt on %s: %s (expected SHA-256 %s)", d.conn.where,
                      s.corrupt ? s.corrupt_what : "the board did not verify it", d.program.sha);
            status = BTD_EXIT_UPLOAD;
        } else if (status == BTD_EXIT_OK && s.not_ready && !btd_interrupted) {
            btd_session_not_ready_error(&s, &d.program, o->ready_timeout);
            status = BTD_EXIT_START;
        } else if (status == BTD_EXIT_OK && s.program_exited && s.program_exit != 0 &&
                   !btd_interrupted) {
            status = BTD_EXIT_PROGRAM;
        }
        if (s.program_exited && s.program_stopped)
            btd_note("the program was stopped as asked (%s, exit status %d)",
                     btd_status_signal(s.program_exit) ? btd_status_signal(s.program_exit)
                                                       : "it exited",
                     s.program_exit);
        else if (s.program_exited && btd_status_signal(s.program_exit))
            btd_error("the program was killed by %s (exit status %d)",
                      btd_status_signal(s.program_exit), s.program_exit);
        else if (s.program_exited)
            btd_note("program exited with status %d", s.program_exit);
    }
    /* What the board sent last may still be in the forward channels. */
    for (double end = btd_now() + 2; l.nfw > 0 && btd_now() < end && status != BTD_EXIT_START;) {
        live_work(&l, NULL, 0);
        if (l.nfw > 0)
            ssh_channel_poll_timeout(l.fw[0].ch, 50, 0);
    }
    while (l.nfw > 0)
        drop(&l, 0);
    close(l.listen_fd);
    if (d.conn.session && ssh_is_connected(d.conn.session)) {
        if (s.started) {
            if (btd_session_finish(&s, s.finished && !(o->keep || leave)))
                d.board.dir[0] = '\0';
            else if (o->keep || leave || !s.finished)
                btd_note("kept %s on %s", d.board.dir, d.conn.where);
        } else {
            btd_deploy_cleanup(&d, o->keep || leave);
        }
    }
    btd_session_free(&s);
    btd_conn_close(&d.conn);
    free(d.libs);
    free(d.extras);
    return status;
}
