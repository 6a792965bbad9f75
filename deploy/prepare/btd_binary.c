/* The program and the capture as files on the host (see btd_binary.h): their
 * ELF headers, what tracing the program holds, and where the default
 * capture for an architecture is found. */
#define _GNU_SOURCE
#include "btd_binary.h"
#include "btd_buf.h"
#include "btd_msg.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef BTD_SOURCE_DIR
#define BTD_SOURCE_DIR ""
#endif
#ifndef BTD_BINARY_DIR
#define BTD_BINARY_DIR ""
#endif
#ifndef BTD_INSTALL_PREFIX
#define BTD_INSTALL_PREFIX "/usr/local"
#endif

int btd_binary_load(struct btd_binary *b, const char *path, const char *role)
{
    memset(b, 0, sizeof *b);
    b->path = path;
    char err[400];
    struct stat st;
    if (stat(path, &st) != 0) {
        btd_error("%s %s: cannot read: %s", role, path, strerror(errno));
        return BTD_EXIT_LOCAL;
    }
    if (!S_ISREG(st.st_mode)) {
        btd_error("%s %s: expected a regular file", role, path);
        return BTD_EXIT_LOCAL;
    }
    if (btd_elf_read(path, &b->elf, err, sizeof err) != 0) {
        btd_error("%s %s", role, err);
        return BTD_EXIT_LOCAL;
    }
    b->arch = btd_elf_arch(&b->elf);
    if (!b->arch) {
        btd_error("%s %s: ELF machine %u is not one boardtrace knows (riscv64, aarch64, x86_64, "
                  "arm, i386)",
                  role, path, b->elf.machine);
        return BTD_EXIT_LOCAL;
    }
    b->size = (uint64_t)st.st_size;
    btd_elf_comment(path, b->toolchain, sizeof b->toolchain);
    b->has_symbols = btd_elf_has_symbols(path) == 1;
    return BTD_EXIT_OK;
}

void btd_program_tracing(struct btd_binary *program)
{
    const char *path = program->path;
    program->traced = btd_elf_boardtrace_note(path, program->bt_version, sizeof program->bt_version,
                                              &program->tracing_mode) == 1 ||
                      btd_elf_has_tracy_client(path) == 1;
    if (!program->traced)
        btd_warn("the program %s holds no tracing (no boardtrace note, no Tracy client): it will "
                 "not open a tracing port; build it with ENABLE_TRACY=ON (or Tracy's "
                 "TRACY_ENABLE=ON) and link boardtrace::runtime",
                 path);
}

int btd_find_capture(const char *arch, char *out, size_t outlen)
{
    char tried[8][1200];
    int n = 0;
    const char *env = getenv("BOARDTRACE_CAPTURE_DIR");
    if (env && env[0])
        snprintf(tried[n++], sizeof tried[0], "%s/%s/boardtrace-capture", env, arch);
    /* An installed boardtrace finds the capture beside itself, wherever the
     * prefix was moved; the build tree's places count only for a CLI that
     * runs from that build tree (an installed one never reaches into it). */
    char exe[1024] = "";
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    if (exe[0]) {
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", exe);
        snprintf(tried[n++], sizeof tried[0], "%s/../share/boardtrace/%s/boardtrace-capture",
                 dirname(copy), arch);
    }
    if (BTD_BINARY_DIR[0] && strcmp(exe, BTD_BINARY_DIR "/deploy/boardtrace") == 0) {
        snprintf(tried[n++], sizeof tried[0], "%s/cross/%s/tools/capture/boardtrace-capture",
                 BTD_BINARY_DIR, arch);
        snprintf(tried[n++], sizeof tried[0], "%s/build/%s/tools/capture/boardtrace-capture",
                 BTD_SOURCE_DIR, arch);
    }
    snprintf(tried[n++], sizeof tried[0], "%s/share/boardtrace/%s/boardtrace-capture",
             BTD_INSTALL_PREFIX, arch);
    for (int i = 0; i < n; i++) {
        if (access(tried[i], R_OK) == 0) {
            snprintf(out, outlen, "%s", tried[i]);
            return BTD_EXIT_OK;
        }
    }
    struct btd_buf list = {0};
    for (int i = 0; i < n; i++)
        btd_buf_printf(&list, "\n  %s", tried[i]);
    /* The way out names a build whose capture lands in one of those places:
     * for an installed boardtrace, a board build's capture put into its
     * prefix (installing the whole board build there would put the board's
     * library over the host's); from the build tree, a board build this
     * build makes or looks in. */
    char build[160];
    if (strcmp(arch, "riscv64") == 0 || strcmp(arch, "aarch64") == 0)
        snprintf(build, sizeof build, "cmake --preset %s && cmake --build --preset %s", arch, arch);
    else
        snprintf(build, sizeof build,
                 "a boardtrace build for %s in build/%s (its toolchain file, ENABLE_TRACY=ON)",
                 arch, arch);
    char prefix[1024];
    snprintf(prefix, sizeof prefix, "%s", exe);
    char *bin = strrchr(prefix, '/');
    if (bin)
        *bin = '\0';
    bin = strrchr(prefix, '/');
    if (bin)
        *bin = '\0';
    if (BTD_BINARY_DIR[0] && strcmp(exe, BTD_BINARY_DIR "/deploy/boardtrace") == 0)
        btd_error("no capture for %s given and none found; looked in:%s\nbuild one: "
                  "reconfigure this build with -DBT_CROSS_TARGETS=%s (it then builds %s/cross/%s), "
                  "or in %s: %s; or give --capture PATH",
                  arch, btd_buf_str(&list), arch, BTD_BINARY_DIR, arch, BTD_SOURCE_DIR, build);
    else
        btd_error("no capture for %s given and none found; looked in:%s\nbuild one (in "
                  "boardtrace's source: %s) and put it where this boardtrace looks: install -D "
                  "build/%s/tools/capture/boardtrace-capture %s/share/boardtrace/%s/"
                  "boardtrace-capture; or give --capture PATH (or set BOARDTRACE_CAPTURE_DIR)",
                  arch, btd_buf_str(&list), build, arch, prefix[0] ? prefix : "PREFIX", arch);
    btd_buf_free(&list);
    return BTD_EXIT_LOCAL;
}
