/* Host and program facts for the welcome message, read from /proc, uname
 * and sysinfo; each falls back to "unknown" rather than failing. */
#define _GNU_SOURCE
#include "hostinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <boardtrace/config.h>
#include <boardtrace/trace.h>

#include "boardtrace/wire.h"

void bt_host_program_name(char *buf, size_t size)
{
    snprintf(buf, size, "%s", program_invocation_short_name);
}

static pthread_mutex_t program_name_mutex = PTHREAD_MUTEX_INITIALIZER;
static char *program_name; /* bt_program_set_name's copy, NULL: none */

void bt_program_set_name(const char *name)
{
    char *copy = name ? strdup(name) : NULL;
    if (name && !copy)
        return;
    pthread_mutex_lock(&program_name_mutex);
    char *old = program_name;
    program_name = copy;
    pthread_mutex_unlock(&program_name_mutex);
    free(old);
}

void bt_host_broadcast_name(char *buf, size_t size)
{
    pthread_mutex_lock(&program_name_mutex);
    if (program_name)
        snprintf(buf, size, "%s", program_name);
    else
        bt_host_program_name(buf, size);
    pthread_mutex_unlock(&program_name_mutex);
}

uint64_t bt_host_exec_time(void)
{
    /* open + fstat rather than stat: qemu's user mode redirects an open of
     * /proc/self/exe to the emulated program, but a stat reaches qemu's own
     * executable */
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    int rc = fstat(fd, &st);
    close(fd);
    return rc == 0 ? (uint64_t)st.st_mtime : 0;
}

uint8_t bt_host_cpu_arch(void)
{
#if defined(__x86_64__)
    return BT_CPU_ARCH_X64;
#elif defined(__i386__)
    return BT_CPU_ARCH_X86;
#elif defined(__aarch64__)
    return BT_CPU_ARCH_ARM64;
#elif defined(__arm__)
    return BT_CPU_ARCH_ARM32;
#else
    return BT_CPU_ARCH_UNKNOWN; /* RISC-V has no value in the protocol */
#endif
}

void bt_host_cpu_id(char vendor[12], uint32_t *id)
{
    memset(vendor, 0, 12);
    *id = 0;
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (__get_cpuid(0, &a, &b, &c, &d)) {
        memcpy(vendor, &b, 4);
        memcpy(vendor + 4, &d, 4);
        memcpy(vendor + 8, &c, 4);
    }
    if (__get_cpuid(1, &a, &b, &c, &d))
        *id = (a & 0xFFFu) | ((a & 0x0FFF0000u) >> 4);
#endif
}

/* The /proc/cpuinfo value of the first of `keys` it has (x86 "model name",
 * arm64 "CPU part", riscv "uarch"/"isa"), in one pass: rewinding would bring
 * stdio's seeking into every traced program. */
static int cpu_model(char *out, size_t size)
{
    static const char *const keys[] = {"model name", "uarch", "isa", "Hardware", "CPU part"};
    const size_t nkeys = sizeof(keys) / sizeof(keys[0]);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return -errno;
    char line[512];
    size_t best = nkeys; /* the key whose value is in `out` */
    while (best > 0 && fgets(line, sizeof(line), f)) {
        for (size_t k = 0; k < best; k++) {
            size_t kl = strlen(keys[k]);
            if (strncmp(line, keys[k], kl) != 0)
                continue;
            char *colon = strchr(line + kl, ':');
            if (!colon)
                continue;
            colon++;
            while (*colon == ' ' || *colon == '\t')
                colon++;
            colon[strcspn(colon, "\n")] = 0;
            snprintf(out, size, "%s", colon);
            best = k;
            break;
        }
    }
    fclose(f);
    return best < nkeys ? 0 : -ENOENT;
}

size_t bt_host_info(char *buf, size_t size)
{
    struct utsname u;
    char model[256] = "unknown";
    /* getpwuid would drag NSS into static board binaries; $USER is enough. */
    const char *user = getenv("USER");
    if (!user || !*user)
        user = "unknown";
    if (uname(&u) != 0)
        strcpy(u.release, "unknown");
    cpu_model(model, sizeof(model));
    struct sysinfo si;
    unsigned long long ram_mb = 0;
    if (sysinfo(&si) == 0)
        ram_mb = (unsigned long long)si.totalram * si.mem_unit / (1024 * 1024);
    int n = snprintf(buf, size,
                     "OS: Linux %s\nCompiler: %s\nUser: %s\nArch: %s\nCPU: %s\nCPU cores: %ld\n"
                     "RAM: %llu MB\nTracer: boardtrace %s\n",
                     u.release, BT_BUILD_COMPILER, user, BT_BUILD_PROCESSOR, model,
                     sysconf(_SC_NPROCESSORS_ONLN), ram_mb, BT_VERSION_STRING);
    if (n < 0)
        return 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}
