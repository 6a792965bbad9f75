/* The deploy tests' stalling proxy (see stall_proxy.h). */
#define _GNU_SOURCE
#include "stall_proxy.h"

#include "deploy_support.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int board_port_of_proxy; /* one proxy per test at a time */

static void serve(struct stall_proxy *p, int client, bool first)
{
    int up = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_port = htons((uint16_t)board_port_of_proxy)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(up, (struct sockaddr *)&a, sizeof a) != 0) {
        close(up);
        close(client);
        return;
    }
    long long free_budget = -1, none = 0;
    char buf[16384];
    int from[2] = {client, up}, to[2] = {up, client};
    bool closed = false;
    while (!p->done && !closed) {
        long long *later = p->blackhole ? &none : &free_budget;
        long long left[2] = {first ? (long long)p->up_budget : *later,
                             first ? (long long)p->down_budget : *later};
        /* A stalled direction is still watched for its end. */
        struct pollfd fds[2];
        for (int i = 0; i < 2; i++)
            fds[i] = (struct pollfd){.fd = from[i], .events = left[i] != 0 ? POLLIN : POLLRDHUP};
        if (poll(fds, 2, 100) < 0)
            break;
        for (int i = 0; i < 2 && !closed; i++) {
            if (!fds[i].revents)
                continue;
            if (left[i] == 0) {
                closed = true;
                break;
            }
            size_t want =
                left[i] < 0 || left[i] > (long long)sizeof buf ? sizeof buf : (size_t)left[i];
            ssize_t n = read(from[i], buf, want);
            if (n <= 0 || write(to[i], buf, (size_t)n) != n)
                closed = true;
            else if (first && left[i] > 0)
                (i == 0 ? &p->up_budget : &p->down_budget)[0] -= n;
        }
    }
    close(client);
    close(up);
}

static void *proxy_main(void *arg)
{
    struct stall_proxy *p = arg;
    bool first = true;
    while (!p->done) {
        struct pollfd l = {.fd = p->listen_fd, .events = POLLIN};
        if (poll(&l, 1, 100) != 1)
            continue;
        int client = accept(p->listen_fd, NULL, NULL);
        if (client < 0)
            break;
        serve(p, client, first);
        first = false;
    }
    return NULL;
}

int stall_proxy_start(struct stall_proxy *p, int board_port, const char *board_known_hosts,
                      const char *user_target, const char *folder, char *kh, size_t khlen,
                      char *target, size_t targetlen)
{
    board_port_of_proxy = board_port;
    p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (bind(p->listen_fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(p->listen_fd, 4) != 0 ||
        getsockname(p->listen_fd, (struct sockaddr *)&a, &alen) != 0)
        return -1;
    p->port = ntohs(a.sin_port);
    char *known = read_file(board_known_hosts, NULL);
    char *key = known ? strchr(known, ' ') : NULL;
    const char *colon = strchr(user_target, ':');
    if (!key || !colon) {
        free(known);
        return -1;
    }
    char text[2000];
    int n = snprintf(text, sizeof text, "%s[127.0.0.1]:%d%s", known, p->port, key);
    free(known);
    snprintf(kh, khlen, "%s/known_hosts.%d", folder, p->port);
    if (write_file(kh, text, (size_t)n) != 0)
        return -1;
    snprintf(target, targetlen, "%.*s:%d", (int)(colon - user_target), user_target, p->port);
    return pthread_create(&p->thread, NULL, proxy_main, p) == 0 ? 0 : -1;
}

void stall_proxy_stop(struct stall_proxy *p)
{
    p->done = 1;
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
}
