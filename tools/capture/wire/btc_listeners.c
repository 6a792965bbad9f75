/* Listening sockets on one TCP port, from the kernel's socket tables: each
 * line holds the local address in hex (the words of the address in the
 * machine's byte order), the port in hex, and the state (0A: LISTEN). */
#define _GNU_SOURCE
#include "btc_listeners.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { TCP_LISTEN = 0x0A };

static void append(char *out, size_t outlen, const char *text)
{
    size_t used = strlen(out);
    if (used < outlen)
        snprintf(out + used, outlen - used, "%s%s", used ? ", " : "", text);
}

/* Adds the listeners of one table; -1 when it cannot be read. */
static int scan(const char *path, int v6, unsigned port, char *out, size_t outlen)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[512];
    int found = 0;
    if (!fgets(line, sizeof line, f)) { /* the column names */
        fclose(f);
        return 0;
    }
    while (fgets(line, sizeof line, f)) {
        char local[64];
        unsigned lport, state;
        if (sscanf(line, " %*u: %63[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x", local, &lport, &state) !=
                3 ||
            lport != port || state != TCP_LISTEN)
            continue;
        char addr[INET6_ADDRSTRLEN], text[INET6_ADDRSTRLEN + 16];
        if (v6 && strlen(local) == 32) {
            uint32_t words[4];
            for (int i = 0; i < 4; i++)
                sscanf(local + 8 * i, "%8x", &words[i]);
            struct in6_addr a;
            memcpy(&a, words, sizeof a);
            inet_ntop(AF_INET6, &a, addr, sizeof addr);
            snprintf(text, sizeof text, "[%s]:%u", addr, port);
        } else if (!v6 && strlen(local) == 8) {
            uint32_t word;
            sscanf(local, "%8x", &word);
            struct in_addr a;
            memcpy(&a, &word, sizeof a);
            inet_ntop(AF_INET, &a, addr, sizeof addr);
            snprintf(text, sizeof text, "%s:%u", addr, port);
        } else {
            continue;
        }
        append(out, outlen, text);
        found++;
    }
    fclose(f);
    return found;
}

int btc_listeners_describe(unsigned port, char *out, size_t outlen)
{
    if (outlen)
        out[0] = '\0';
    int v4 = scan("/proc/net/tcp", 0, port, out, outlen);
    int v6 = scan("/proc/net/tcp6", 1, port, out, outlen);
    if (v4 < 0 && v6 < 0) {
        snprintf(out, outlen, "unknown (/proc/net/tcp cannot be read)");
        return -1;
    }
    int n = (v4 > 0 ? v4 : 0) + (v6 > 0 ? v6 : 0);
    if (n == 0)
        snprintf(out, outlen, "nothing");
    return n;
}
