/* Helpers for the deploy integration tests (see deploy_support.h). */
#define _GNU_SOURCE
#include "deploy_support.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *boardtrace, *board_sh, *board_dir;
struct board board;
char work[512];

int deploy_group_setup(void **state)
{
    (void)state;
    if (board_load(board_sh, board_dir, &board) != 0)
        return -1;
    make_temp_dir(work, sizeof work);
    return work[0] ? 0 : -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int deploy_group_teardown(void **state)
{
    (void)state;
    if (!work[0])
        return 0;
    if (getenv("BT_KEEP_TEST_FILES")) {
        fprintf(stderr, "files kept in %s\n", work);
        return 0;
    }
    if (nftw(work, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "could not remove %s: %s\n", work, strerror(errno));
    return 0;
}

static void append(char **buf, size_t *len, const char *data, size_t n)
{
    *buf = realloc(*buf, *len + n + 1);
    memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
}

pid_t spawn_logged(char *const argv[], const char *log)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

bool wait_for_text(const char *path, const char *text, int timeout_s, unsigned poll_us)
{
    time_t start = time(NULL);
    bool found = false;
    while (!found && time(NULL) - start < timeout_s) {
        char *content = read_file(path, NULL);
        found = content && strstr(content, text);
        free(content);
        usleep(poll_us);
    }
    return found;
}

int run_command(char *const argv[], const char *cwd, int timeout_s, struct result *r)
{
    memset(r, 0, sizeof *r);
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        int devnull = open("/dev/null", O_RDONLY);
        dup2(devnull, 0);
        if (cwd && chdir(cwd) != 0)
            _exit(126);
        execv(argv[0], argv);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    size_t olen = 0, elen = 0;
    r->out = calloc(1, 1);
    r->err = calloc(1, 1);
    struct pollfd fds[2] = {{.fd = out[0], .events = POLLIN}, {.fd = err[0], .events = POLLIN}};
    time_t deadline = time(NULL) + timeout_s;
    int open_fds = 2;
    while (open_fds > 0) {
        if (time(NULL) > deadline) {
            kill(pid, SIGKILL);
            break;
        }
        if (poll(fds, 2, 1000) < 0 && errno != EINTR)
            break;
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char buf[8192];
            ssize_t n = read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                if (i == 0)
                    append(&r->out, &olen, buf, (size_t)n);
                else
                    append(&r->err, &elen, buf, (size_t)n);
            } else {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_fds--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0)
            close(fds[i].fd);
    int st = 0;
    waitpid(pid, &st, 0);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

void result_print(const struct result *r)
{
    fprintf(stderr, "--- exit status %d; stdout:\n%s\n--- stderr:\n%s\n---\n", r->status,
            r->out ? r->out : "", r->err ? r->err : "");
}

void result_free(struct result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

static void unquote(char *dst, size_t dstlen, const char *v)
{
    size_t n = strlen(v);
    if (n >= 2 && v[0] == '\'' && v[n - 1] == '\'') {
        v++;
        n -= 2;
    }
    snprintf(dst, dstlen, "%.*s", (int)n, v);
}

int board_load(const char *script, const char *dir, struct board *b)
{
    memset(b, 0, sizeof *b);
    char *argv[] = {"/bin/sh", (char *)script, "--dir", (char *)dir, "env", NULL};
    struct result r;
    if (run_command(argv, NULL, 30, &r) != 0 || r.status != 0) {
        fprintf(stderr, "board.sh env failed: %s\n", r.err ? r.err : "");
        result_free(&r);
        return -1;
    }
    for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        const char *v = eq + 1;
        if (strcmp(line, "BOARD_TARGET") == 0)
            unquote(b->target, sizeof b->target, v);
        else if (strcmp(line, "BOARD_PORT") == 0)
            b->port = atoi(v);
        else if (strcmp(line, "BOARD_KEY") == 0)
            unquote(b->key, sizeof b->key, v);
        else if (strcmp(line, "BOARD_KNOWN_HOSTS") == 0)
            unquote(b->known_hosts, sizeof b->known_hosts, v);
        else if (strcmp(line, "BOARD_ROOTFS") == 0)
            unquote(b->rootfs, sizeof b->rootfs, v);
        else if (strcmp(line, "BOARD_DIR") == 0)
            unquote(b->dir, sizeof b->dir, v);
    }
    result_free(&r);
    return b->port > 0 && b->key[0] ? 0 : -1;
}

void board_args(const struct board *b, const char **argv)
{
    argv[0] = "--host";
    argv[1] = b->target;
    argv[2] = "-i";
    argv[3] = b->key;
    argv[4] = "--known-hosts";
    argv[5] = b->known_hosts;
}

char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0;
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        append(&buf, &n, chunk, got);
    fclose(f);
    if (!buf)
        buf = calloc(1, 1);
    if (len)
        *len = n;
    return buf;
}

int write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(data, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

long long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

int count_run_dirs(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, "boardtrace.", 11) == 0;
    closedir(d);
    return n;
}

void make_temp_dir(char *out, size_t outlen)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(out, outlen, "%s/bt-deploy-test.XXXXXX", base);
    if (!mkdtemp(out))
        out[0] = '\0';
}

/* The socket inodes process pid holds. */
static int socket_inodes(pid_t pid, unsigned long *out, int max)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        char link[600], target[64];
        snprintf(link, sizeof link, "%s/%s", path, e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k <= 0)
            continue;
        target[k] = '\0';
        unsigned long ino;
        if (sscanf(target, "socket:[%lu]", &ino) == 1)
            out[n++] = ino;
    }
    closedir(d);
    return n;
}

/* Finds in /proc/net/tcp the entry with the given inode (local and remote
 * ports out), or with the given local and remote ports (inode out). */
static bool tcp_entry(unsigned long *ino, int *local, int *remote, bool by_inode)
{
    FILE *f = fopen("/proc/net/tcp", "r");
    if (!f)
        return false;
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned lport, rport;
        unsigned long inode;
        if (sscanf(line, " %*d: %*x:%x %*x:%x %*x %*x:%*x %*x:%*x %*x %*u %*u %lu", &lport, &rport,
                   &inode) != 3)
            continue;
        if (by_inode ? inode == *ino : ((int)lport == *local && (int)rport == *remote)) {
            *ino = inode;
            *local = (int)lport;
            *remote = (int)rport;
            found = true;
        }
    }
    fclose(f);
    return found;
}

int kill_ssh_server_side(pid_t client, int port)
{
    unsigned long mine[64];
    int n = socket_inodes(client, mine, 64);
    int client_port = -1;
    for (int i = 0; i < n && client_port < 0; i++) {
        unsigned long ino = mine[i];
        int local = 0, remote = 0;
        if (tcp_entry(&ino, &local, &remote, true) && remote == port)
            client_port = local;
    }
    if (client_port < 0)
        return 0;
    unsigned long server = 0;
    int local = port, remote = client_port;
    if (!tcp_entry(&server, &local, &remote, false))
        return 0;
    int killed = 0;
    DIR *d = opendir("/proc");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid <= 0 || pid == client)
            continue;
        unsigned long held[256];
        int k = socket_inodes(pid, held, 256);
        for (int i = 0; i < k; i++) {
            if (held[i] == server && kill(pid, SIGKILL) == 0) {
                killed++;
                break;
            }
        }
    }
    if (d)
        closedir(d);
    return killed;
}
