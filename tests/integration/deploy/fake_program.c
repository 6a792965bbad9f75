/* Test double for a traced program, built static for riscv64 and run on the
 * emulated board: prints its arguments and BT_TEST_* variables (hex, so any
 * byte shows), then serves a fixed "event" stream on TRACY_PORT to whoever
 * connects, like a tracing runtime with TRACY_NO_EXIT=1 would. With
 * BT_TEST_NO_LISTEN set it behaves like a program built without tracing;
 * BT_TEST_LINGER=N keeps it running N seconds after serving; BT_TEST_HOLD=N
 * keeps the connection open N seconds after the events, as a traced program
 * that runs on does; BT_TEST_FAIL_AT_START=N exits with status N at once,
 * before opening the port; BT_TEST_WAIT_BEFORE_LISTEN=N waits N seconds
 * before it opens the port, as a program slow to start does;
 * BT_TEST_IPV6_LOOPBACK listens on [::1] alone; BT_TEST_SERVE_FILE=PATH
 * serves that file's bytes instead of the events (a real trace, uploaded
 * beside it, for what the host does with one). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

extern char **environ;

static void print_hex(const char *label, const char *s)
{
    printf("%s ", label);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        printf("%02x", *p);
    printf("\n");
}

int main(int argc, char **argv)
{
    printf("fake-program argc %d\n", argc - 1);
    for (int i = 1; i < argc; i++) {
        char label[32];
        snprintf(label, sizeof label, "arg%d", i);
        print_hex(label, argv[i]);
    }
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "BT_TEST_", 8) == 0)
            print_hex("env", *e);
    const char *names[] = {"TRACY_NO_EXIT", "TRACY_ONLY_LOCALHOST", "TRACY_NO_BROADCAST",
                           "TRACY_PORT"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        printf("%s=%s\n", names[i], getenv(names[i]) ? getenv(names[i]) : "(unset)");
    fflush(stdout);
    fprintf(stderr, "fake-program: a line on stderr\n");

    if (getenv("BT_TEST_READ_FILE")) {
        /* A data file the program expects where it runs (--upload, --cwd). */
        char cwd[1024] = "", line[256] = "";
        FILE *f = fopen(getenv("BT_TEST_READ_FILE"), "r");
        if (!getcwd(cwd, sizeof cwd))
            cwd[0] = '\0';
        if (f && fgets(line, sizeof line, f))
            line[strcspn(line, "\n")] = '\0';
        printf("cwd %s; read %s: %s\n", cwd, getenv("BT_TEST_READ_FILE"),
               f ? line : "(cannot open)");
        fflush(stdout);
        if (f)
            fclose(f);
    }
    if (getenv("BT_TEST_FAIL_AT_START")) {
        fprintf(stderr, "fake-program: cannot start\n");
        return atoi(getenv("BT_TEST_FAIL_AT_START"));
    }
    if (getenv("BT_TEST_NO_LISTEN")) {
        /* Like a program built without tracing: runs until it is stopped,
         * never opens the port (no race with the ready timeout). */
        sleep(300);
        return 0;
    }
    if (getenv("BT_TEST_WAIT_BEFORE_LISTEN"))
        sleep((unsigned)atoi(getenv("BT_TEST_WAIT_BEFORE_LISTEN")));
    int port = getenv("TRACY_PORT") ? atoi(getenv("TRACY_PORT")) : 8086;
    int events = getenv("BT_TEST_EVENTS") ? atoi(getenv("BT_TEST_EVENTS")) : 1000;
    int status = getenv("BT_TEST_EXIT") ? atoi(getenv("BT_TEST_EXIT")) : 0;
    /* BT_TEST_IPV6_LOOPBACK: [::1] alone, where upstream's clients listen
     * under TRACY_ONLY_LOCALHOST. */
    int v6 = getenv("BT_TEST_IPV6_LOOPBACK") != NULL;
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct sockaddr_in6 a6 = {.sin6_family = AF_INET6,
                              .sin6_port = htons((unsigned short)port),
                              .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    int bound = v6 ? bind(fd, (struct sockaddr *)&a6, sizeof a6)
                   : bind(fd, (struct sockaddr *)&a, sizeof a);
    if (bound != 0 || listen(fd, 1) != 0) {
        perror("fake-program: listen");
        return 100;
    }
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 60000) != 1) {
        fprintf(stderr, "fake-program: nobody connected within 60 s\n");
        return 101;
    }
    int c = accept(fd, NULL, NULL);
    const char *serve = getenv("BT_TEST_SERVE_FILE");
    if (serve) {
        FILE *in = fopen(serve, "rb");
        if (!in) {
            perror(serve);
            return 103;
        }
        char buf[65536];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, in)) > 0)
            if (write(c, buf, got) != (ssize_t)got)
                return 102;
        fclose(in);
        printf("fake-program: served %s\n", serve);
        fflush(stdout);
        close(c);
        close(fd);
        return status;
    }
    char line[64];
    /* BT_TEST_DISK_FULL: the capture double fails to write its file as on
     * a full disk, keeping what it received in its journal; =cut: its
     * journal too was cut short. */
    const char *full = getenv("BT_TEST_DISK_FULL");
    int n = snprintf(line, sizeof line, "BTFAKE %d%s\n", events,
                     !full                 ? ""
                     : strcmp(full, "cut") ? " disk-full"
                                           : " journal-cut disk-full");
    if (write(c, line, (size_t)n) != n)
        return 102;
    for (int i = 0; i < events; i++) {
        n = snprintf(line, sizeof line, "event %d\n", i);
        if (write(c, line, (size_t)n) != n)
            return 102;
    }
    printf("fake-program: sent %d events\n", events);
    fflush(stdout);
    if (getenv("BT_TEST_HOLD"))
        sleep((unsigned)atoi(getenv("BT_TEST_HOLD")));
    close(c);
    close(fd);
    if (getenv("BT_TEST_LINGER"))
        sleep((unsigned)atoi(getenv("BT_TEST_LINGER")));
    printf("fake-program: exiting with %d\n", status);
    return status;
}
