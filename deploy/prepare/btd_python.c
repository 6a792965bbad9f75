/* `run --python SCRIPT`: a Python program run by the board's own python3
 * under `python3 -m boardtrace`. The extension built for the board's Python
 * (runtime/python, cross-built against that Python's headers) travels as the
 * run's program, so the architecture, glibc and tracing checks are its; the
 * script and the boardtrace, tracy and tracy_client packages travel as uploads
 * beside it, verified like it, and the supervisor lays them out as a folder
 * on PYTHONPATH (btd_supervisor.c). Before anything is uploaded the board's
 * python3 is checked: there, and the version the extension was built for. */
#define _GNU_SOURCE
#include "btd_python.h"
#include "btd_msg.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef BTD_BINARY_DIR
#define BTD_BINARY_DIR ""
#endif

/* The packages' files, by their place under the Python folder. */
const char *const btd_python_files[BTD_PYTHON_FILES] = {
    "boardtrace/__init__.py",   "boardtrace/__main__.py",
    "boardtrace/_child.py",     "boardtrace/_boot/sitecustomize.py",
    "tracy/__init__.py",        "tracy/__main__.py",
    "tracy_client/__init__.py", "tracy_client/_colors.py",
};

void btd_python_board_name(const char *file, char *out, size_t outlen)
{
    snprintf(out, outlen, "%s%s", BTD_PYTHON_PREFIX, file);
    for (char *p = out; *p; p++)
        if (*p == '/')
            *p = '-';
}

int btd_python_check_script(const char *script)
{
    struct stat st;
    if (stat(script, &st) != 0) {
        btd_error("--python %s: cannot read the script: %s", script, strerror(errno));
        return BTD_EXIT_LOCAL;
    }
    if (!S_ISREG(st.st_mode)) {
        btd_error("--python %s: expected a Python script, a regular file", script);
        return BTD_EXIT_LOCAL;
    }
    return BTD_EXIT_OK;
}

/* The extension in DIR/boardtrace: _boardtrace.cpython-3XY-TRIPLET.so, the
 * Python it was built for ("3.13") from its name. 0 found, -1 none. */
static int find_extension(const char *dir, char *path, size_t pathlen, char *version,
                          size_t versionlen)
{
    char pkg[4200];
    snprintf(pkg, sizeof pkg, "%s/boardtrace", dir);
    DIR *dp = opendir(pkg);
    if (!dp)
        return -1;
    int found = -1;
    struct dirent *e;
    while (found != 0 && (e = readdir(dp)) != NULL) {
        unsigned minor;
        int end = 0;
        if (sscanf(e->d_name, "_boardtrace.cpython-3%u-%*[^.].so%n", &minor, &end) == 1 &&
            end > 0 && e->d_name[end] == '\0' && minor < 100 &&
            (size_t)snprintf(path, pathlen, "%s/%s", pkg, e->d_name) < pathlen) {
            snprintf(version, versionlen, "3.%u", minor);
            found = 0;
        }
    }
    closedir(dp);
    return found;
}

int btd_python_prepare(struct btd_deploy *d)
{
    const struct btd_board *b = &d->board;
    const char *where = d->conn.where;
    /* The board build's Python folder: given, else beside an installed
     * boardtrace (PREFIX/share/boardtrace/ARCH/python), else the build
     * tree's board build, for the CLI of that build tree. */
    char dir[4096] = "";
    if (d->o->python_path) {
        snprintf(dir, sizeof dir, "%s", d->o->python_path);
    } else {
        char exe[1024] = "";
        ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[len > 0 ? len : 0] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        if (BTD_BINARY_DIR[0] && strcmp(exe, BTD_BINARY_DIR "/deploy") == 0)
            snprintf(dir, sizeof dir, "%s/cross/%s/runtime/python", BTD_BINARY_DIR, b->arch);
        else
            snprintf(dir, sizeof dir, "%s/../share/boardtrace/%s/python", exe, b->arch);
    }
    char ext[4400] = "", built[16] = "";
    bool have_ext = find_extension(dir, ext, sizeof ext, built, sizeof built) == 0;
    /* The board first: without a python3 no extension can help. */
    if (!b->python[0]) {
        char built_for[4200];
        if (have_ext)
            snprintf(built_for, sizeof built_for, "the extension in %s is built for Python %s", dir,
                     built);
        else
            snprintf(built_for, sizeof built_for, "no extension is built for it yet");
        btd_error("--python: %s has no python3 on its PATH; the script runs on the board's own "
                  "Python 3 (%s): install python3 there; nothing was uploaded",
                  where, built_for);
        return BTD_EXIT_BOARD;
    }
    if (!have_ext) {
        btd_error("--python: no boardtrace extension for %s's Python %s in %s/boardtrace "
                  "(_boardtrace.cpython-3X-TRIPLET.so); build it against the board's Python "
                  "headers: reconfigure with -DBT_CROSS_TARGETS=%s "
                  "-DBT_PYTHON_SYSROOT_%s=FOLDER (FOLDER holding the board's "
                  "usr/include/python3.X), or give --python-path DIR; nothing was uploaded",
                  where, b->python_version[0] ? b->python_version : "(version unknown)", dir,
                  b->arch, b->arch);
        return BTD_EXIT_LOCAL;
    }
    if (!b->python_version[0]) {
        btd_warn("--python: %s's python3 (%s) does not name its version; the extension is for "
                 "Python %s",
                 where, b->python_real, built);
    } else if (strcmp(b->python_version, built) != 0) {
        btd_error("--python: %s has Python %s (%s), but the extension %s is built for Python "
                  "%s: build it for %s's Python %s (BT_PYTHON_SYSROOT_%s naming that Python's "
                  "headers) and give its folder with --python-path; nothing was uploaded",
                  where, b->python_version, b->python_real, ext, built, where, b->python_version,
                  b->arch);
        return BTD_EXIT_BOARD;
    }
    snprintf(d->python_dir, sizeof d->python_dir, "%s", dir);
    snprintf(d->python_ext, sizeof d->python_ext, "%s", ext);
    int status = btd_binary_load(&d->program, d->python_ext, "Python extension");
    if (status != BTD_EXIT_OK)
        return status;
    btd_program_tracing(&d->program);
    for (int i = 0; i < BTD_PYTHON_FILES; i++) {
        char path[4400];
        snprintf(path, sizeof path, "%s/%s", dir, btd_python_files[i]);
        if (access(path, R_OK) != 0) {
            btd_error("--python: %s is missing from the Python folder %s (%s); build it again",
                      btd_python_files[i], dir, strerror(errno));
            return BTD_EXIT_LOCAL;
        }
    }
    btd_note("Python %s on %s (%s); the extension %s", built, where, b->python_real, ext);
    return BTD_EXIT_OK;
}
