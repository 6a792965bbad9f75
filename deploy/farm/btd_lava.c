/* lavacli as a subprocess: its configuration (the user's, or a private one
 * holding the token from the environment), and the few answers boardtrace
 * reads from it. */
#define _GNU_SOURCE
#include "btd_lava.h"

#include "btd_msg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* lavacli's configuration file is XDG_CONFIG_HOME/lavacli.yaml. */
static int write_private_config(struct btd_lava *l, const char *uri, const char *user,
                                const char *token)
{
    char tmpl[] = "/tmp/boardtrace-lava.XXXXXX";
    if (!mkdtemp(tmpl)) {
        btd_error("farm: creating a private folder for lavacli's configuration: %s",
                  strerror(errno));
        return BTD_EXIT_LOCAL;
    }
    snprintf(l->config_home, sizeof l->config_home, "%s", tmpl);
    l->own_config = 1;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/lavacli.yaml", l->config_home);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        btd_error("farm: writing %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return BTD_EXIT_LOCAL;
    }
    fprintf(f, "farm:\n  uri: \"%s/RPC2\"\n  username: \"%s\"\n  token: \"%s\"\n", uri, user,
            token);
    if (fclose(f) != 0) {
        btd_error("farm: writing %s: %s", path, strerror(errno));
        return BTD_EXIT_LOCAL;
    }
    snprintf(l->identity, sizeof l->identity, "farm");
    return BTD_EXIT_OK;
}

/* A token or user name goes into YAML between double quotes: only characters
 * that need no escaping there. */
static int yaml_safe(const char *s)
{
    for (; *s; s++)
        if (*s < 0x21 || *s > 0x7e || *s == '"' || *s == '\\')
            return 0;
    return 1;
}

int btd_lava_open(struct btd_lava *l, const char *lava)
{
    memset(l, 0, sizeof *l);
    if (strstr(lava, "://") == NULL) {
        if (strlen(lava) >= sizeof l->identity) {
            btd_error("farm: --lava %s: identity name too long", lava);
            return BTD_EXIT_USAGE;
        }
        snprintf(l->identity, sizeof l->identity, "%s", lava);
        /* The link to a job needs the server's address: the identity's uri. */
        struct btd_buf out = {0};
        const char *args[] = {"identities", "show", lava, NULL};
        if (btd_lava_cli(l, &out, args) == 0) {
            const char *u = strstr(btd_buf_str(&out), "uri: ");
            if (u) {
                u += 5;
                size_t n = strcspn(u, "\n");
                if (n > 5 && strncmp(u + n - 5, "/RPC2", 5) == 0)
                    n -= 5;
                snprintf(l->url, sizeof l->url, "%.*s", (int)n, u);
            }
        }
        btd_buf_free(&out);
        if (!l->url[0]) {
            btd_error("farm: --lava %s: no such identity in lavacli's configuration "
                      "($XDG_CONFIG_HOME/lavacli.yaml, default ~/.config/lavacli.yaml)",
                      lava);
            return BTD_EXIT_USAGE;
        }
        return BTD_EXIT_OK;
    }
    if (strncmp(lava, "http://", 7) != 0 && strncmp(lava, "https://", 8) != 0) {
        btd_error("farm: --lava %s: expected http://HOST[:PORT] or https://..., or a lavacli "
                  "identity",
                  lava);
        return BTD_EXIT_USAGE;
    }
    size_t n = strlen(lava);
    while (n > 0 && lava[n - 1] == '/')
        n--;
    if (n >= sizeof l->url || !yaml_safe(lava)) {
        btd_error("farm: --lava %s: not a usable URL", lava);
        return BTD_EXIT_USAGE;
    }
    snprintf(l->url, sizeof l->url, "%.*s", (int)n, lava);
    const char *token = getenv("LAVA_TOKEN");
    const char *user = getenv("LAVA_USER");
    if (!token || !*token || !user || !*user) {
        btd_error("farm: --lava %s: set LAVA_USER and LAVA_TOKEN (a token of that user, from "
                  "LAVA's API > Tokens page), or give --lava the name of a lavacli identity",
                  lava);
        return BTD_EXIT_USAGE;
    }
    if (!yaml_safe(token) || !yaml_safe(user)) {
        btd_error("farm: LAVA_USER or LAVA_TOKEN holds spaces, quotes or control characters");
        return BTD_EXIT_USAGE;
    }
    return write_private_config(l, l->url, user, token);
}

void btd_lava_close(struct btd_lava *l)
{
    if (l->own_config) {
        char path[PATH_MAX + 16];
        snprintf(path, sizeof path, "%s/lavacli.yaml", l->config_home);
        unlink(path);
        rmdir(l->config_home);
        l->own_config = 0;
    }
}

int btd_lava_cli(const struct btd_lava *l, struct btd_buf *out, const char *const *args)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        const char *argv[32];
        int n = 0;
        argv[n++] = "lavacli";
        argv[n++] = "-i";
        argv[n++] = l->identity;
        for (int i = 0; args[i] && n < 31; i++)
            argv[n++] = args[i];
        argv[n] = NULL;
        if (l->config_home[0])
            setenv("XDG_CONFIG_HOME", l->config_home, 1);
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        execvp("lavacli", (char *const *)argv);
        dprintf(fds[1], "cannot run lavacli: %s (tools/setup.sh installs it)\n", strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    btd_buf_clear(out);
    char chunk[4096];
    for (;;) {
        ssize_t r = read(fds[0], chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        btd_buf_append(out, chunk, (size_t)r);
    }
    btd_buf_puts(out, "");
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* lavacli's last line, for a message. lavacli puts the token in the URLs it
 * names (http://USER:TOKEN@HOST/RPC2): each is shown as USER:***@. */
static void say_failure(const char *what, const struct btd_buf *out)
{
    const char *s = btd_buf_str(out);
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == '\n')
        n--;
    size_t start = n;
    while (start > 0 && s[start - 1] != '\n')
        start--;
    struct btd_buf line = {0};
    const char *p = s + start, *end = s + n;
    while (p < end) {
        const char *scheme = strstr(p, "://");
        if (!scheme || scheme >= end) {
            btd_buf_append(&line, p, (size_t)(end - p));
            break;
        }
        const char *host = scheme + 3;
        size_t auth = strcspn(host, "@/ \n");
        const char *colon = memchr(host, ':', auth);
        btd_buf_append(&line, p, (size_t)(host - p));
        if (host + auth < end && host[auth] == '@' && colon) {
            btd_buf_append(&line, host, (size_t)(colon - host));
            btd_buf_puts(&line, ":***@");
            p = host + auth + 1;
        } else {
            p = host;
        }
    }
    btd_error("farm: %s: lavacli says: %s", what, line.len ? btd_buf_str(&line) : "(nothing)");
    btd_buf_free(&line);
}

int btd_lava_submit(const struct btd_lava *l, const char *path, long *job)
{
    struct btd_buf out = {0};
    const char *args[] = {"jobs", "submit", path, NULL};
    int rc = btd_lava_cli(l, &out, args);
    char *end = NULL;
    long id = rc == 0 ? strtol(btd_buf_str(&out), &end, 10) : 0;
    if (rc != 0 || id <= 0 || (end && *end && *end != '\n')) {
        say_failure("submitting a job", &out);
        btd_buf_free(&out);
        return -1;
    }
    *job = id;
    btd_buf_free(&out);
    return 0;
}

/* The value of "KEY   : VALUE" in lavacli's plain output. */
static void field(const char *text, const char *key, char *out, size_t outlen)
{
    out[0] = '\0';
    size_t klen = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        if (strncmp(p, key, klen) != 0 || (p[klen] != ' ' && p[klen] != ':'))
            continue;
        const char *v = strchr(p, ':');
        if (!v)
            return;
        v++;
        while (*v == ' ')
            v++;
        size_t n = strcspn(v, "\n");
        snprintf(out, outlen, "%.*s", (int)n, v);
        return;
    }
}

int btd_lava_job_show(const struct btd_lava *l, long job, struct btd_lava_job *out)
{
    char id[32];
    snprintf(id, sizeof id, "%ld", job);
    struct btd_buf buf = {0};
    const char *args[] = {"jobs", "show", id, NULL};
    int rc = btd_lava_cli(l, &buf, args);
    if (rc == 0) {
        field(btd_buf_str(&buf), "state", out->state, sizeof out->state);
        field(btd_buf_str(&buf), "Health", out->health, sizeof out->health);
        field(btd_buf_str(&buf), "device", out->device, sizeof out->device);
        if (strcmp(out->device, "None") == 0)
            out->device[0] = '\0';
    }
    btd_buf_free(&buf);
    return rc == 0 && out->state[0] ? 0 : -1;
}

int btd_lava_case_passed(const struct btd_lava *l, long job, const char *suite, const char *name)
{
    char id[32];
    snprintf(id, sizeof id, "%ld", job);
    struct btd_buf buf = {0};
    const char *args[] = {"results", id, NULL};
    int rc = btd_lava_cli(l, &buf, args);
    char line[256];
    snprintf(line, sizeof line, "* %s.%s [pass]", suite, name);
    int passed = rc == 0 && strstr(btd_buf_str(&buf), line) != NULL;
    btd_buf_free(&buf);
    return rc == 0 ? passed : -1;
}

/* "KEY: VALUE" (VALUE maybe in double quotes) among the rendered lines. */
static void yaml_value(const char *text, const char *key, char *out, size_t outlen)
{
    out[0] = '\0';
    size_t klen = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
        const char *s = p + strspn(p, " ");
        if (strncmp(s, key, klen) != 0 || s[klen] != ':')
            continue;
        const char *v = s + klen + 1;
        v += strspn(v, " ");
        size_t n = strcspn(v, "\n");
        if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
            v++;
            n -= 2;
        }
        snprintf(out, outlen, "%.*s", (int)n, v);
        return;
    }
}

int btd_lava_device_ssh(const struct btd_lava *l, const char *device, struct btd_lava_ssh *out)
{
    struct btd_buf buf = {0};
    const char *args[] = {"devices", "dict", "get", device, "--render", NULL};
    int rc = btd_lava_cli(l, &buf, args);
    memset(out, 0, sizeof *out);
    if (rc != 0) {
        say_failure(device, &buf);
        btd_buf_free(&buf);
        return -1;
    }
    /* The deploy method's ssh block: host, port, user, identity_file. */
    const char *ssh = strstr(btd_buf_str(&buf), "      ssh:");
    char port[16];
    yaml_value(ssh ? ssh : "", "host", out->host, sizeof out->host);
    yaml_value(ssh ? ssh : "", "port", port, sizeof port);
    yaml_value(ssh ? ssh : "", "user", out->user, sizeof out->user);
    yaml_value(ssh ? ssh : "", "identity_file", out->identity, sizeof out->identity);
    btd_buf_free(&buf);
    out->port = atoi(port);
    if (!out->host[0] || out->port <= 0 || out->port > 65535 || !out->user[0]) {
        btd_error("farm: device %s: its device dictionary names no ssh_host, ssh_port and "
                  "ssh_user (LAVA's ssh device type)",
                  device);
        return -1;
    }
    return 0;
}

int btd_lava_cancel(const struct btd_lava *l, long job)
{
    char id[32];
    snprintf(id, sizeof id, "%ld", job);
    struct btd_buf buf = {0};
    const char *args[] = {"jobs", "cancel", id, NULL};
    int rc = btd_lava_cli(l, &buf, args);
    btd_buf_free(&buf);
    return rc == 0 ? 0 : -1;
}
