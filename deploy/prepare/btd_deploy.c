/* Steps shared by run and live (see btd_deploy.h): everything up to the program
 * (and capture) uploaded into a private folder on the board; the supervisor
 * verifies them there before it starts them. */
#define _GNU_SOURCE
#include "btd_deploy.h"
#include "btd_deploy_libs.h"
#include "btd_interrupt.h"
#include "btd_msg.h"
#include "btd_python.h"
#include "btd_quote.h"
#include "btd_strip.h"
#include "btd_uploads.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Room asked for beyond the uploads: the trace and the capture's buffers. */
enum { SPACE_MARGIN = 4 << 20 };

/* A board file name from a local one: letters, digits, '.', '_' and '-'. */
static void board_name(const char *path, const char *prefix, char *out, size_t outlen)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    snprintf(out, outlen, "%s%s", prefix, base[0] ? base : "program");
    for (char *p = out; *p; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-';
        if (!ok)
            *p = '_';
    }
    if (out[0] == '.' || out[0] == '-')
        out[0] = '_';
    if (btd_board_name_reserved(out)) {
        char copy[32];
        snprintf(copy, sizeof copy, "%s", out);
        snprintf(out, outlen, "bin-%s", copy);
    }
}

int btd_deploy_connect(struct btd_deploy *d)
{
    const struct btd_options *o = d->o;
    struct btd_connect_options co = {
        .target = o->host,
        .identity = o->identity,
        .known_hosts = o->known_hosts,
        .ssh_config = o->ssh_config,
        .accept_new_host_key = o->accept_new_host_key,
        .timeout_s = d->connect_timeout_s > 0 ? d->connect_timeout_s : 20,
    };
    d->xo.no_sftp = o->no_sftp;
    d->xo.idle_timeout_s = o->stall_timeout;
    int status = btd_conn_open(&d->conn, &co);
    if (status == BTD_EXIT_OK)
        btd_interrupt_watch_fd(ssh_get_fd(d->conn.session));
    return status;
}

/* The folder's tag: random, so no other run's folder has it. */
static void make_tag(char *tag, size_t size)
{
    unsigned char r[5] = {0};
    FILE *f = fopen("/dev/urandom", "rb");
    if (!f || fread(r, 1, sizeof r, f) != sizeof r) {
        unsigned long long t = (unsigned long long)(btd_now() * 1e9) ^ (unsigned long long)getpid();
        memcpy(r, &t, sizeof r);
    }
    if (f)
        fclose(f);
    snprintf(tag, size, "%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4]);
}

/* The preflight failed: its folder goes. When the connection was lost (the
 * probe's answer, or the removal, never came back), a new connection
 * removes it, found by its tag even when its name never arrived. */
static void remove_preflight_folder(struct btd_deploy *d)
{
    char err[600];
    struct btd_board *b = &d->board;
    bool lost = !d->conn.session || !ssh_is_connected(d->conn.session);
    /* A probe that failed with the connection up may still have made it. */
    int rc = lost ? 0
             : b->dir[0]
                 ? btd_board_remove_dir(&d->conn, b->dir, err, sizeof err)
                 : btd_board_remove_tagged(&d->conn, d->o->remote_dir, d->tag, err, sizeof err);
    if (rc < 0) {
        lost = !ssh_is_connected(d->conn.session);
        if (!lost)
            btd_warn("%s", err);
    }
    b->dir[0] = '\0';
    if (!lost || btd_interrupted)
        return;
    const char *base = d->o->remote_dir ? d->o->remote_dir : "${TMPDIR:-/tmp}";
    btd_note("the connection to %s was lost during the preflight; connecting again to remove "
             "the folder it made there (%s/boardtrace.%s*)",
             d->conn.where, base, d->tag);
    btd_conn_close(&d->conn);
    int removed = -1;
    if (btd_deploy_connect(d) == BTD_EXIT_OK)
        removed = btd_board_remove_tagged(&d->conn, d->o->remote_dir, d->tag, err, sizeof err);
    if (removed < 0)
        btd_warn("could not remove the preflight's folder %s/boardtrace.%s* on %s: it holds "
                 "nothing (boardtrace status lists it as stopped); remove it there with rm -rf",
                 base, d->tag, d->conn.where);
    else if (removed > 0)
        btd_note("removed the preflight's folder from %s", d->conn.where);
}

int btd_deploy_prepare(struct btd_deploy *d)
{
    char err[600];
    struct btd_board *b = &d->board;
    make_tag(d->tag, sizeof d->tag);
    if (btd_board_probe(&d->conn, d->o->remote_dir, d->tag, true, b, err, sizeof err) != 0) {
        btd_error("preflight on %s: %s", d->conn.where, err);
        remove_preflight_folder(d);
        return BTD_EXIT_BOARD;
    }
    btd_note("board %s: %s, %s", d->conn.where, b->uname_m, b->uname);
    int status = btd_interrupted ? BTD_EXIT_INTERRUPTED : BTD_EXIT_OK;
    /* A Python script: the board's python3 first; the extension for it is
     * the program. */
    if (status == BTD_EXIT_OK && d->python)
        status = btd_python_prepare(d);
    if (status == BTD_EXIT_OK && d->want_capture && !d->has_capture) {
        status = btd_find_capture(b->arch, d->capture_path, sizeof d->capture_path);
        if (status == BTD_EXIT_OK)
            status = btd_binary_load(&d->capture, d->capture_path, "capture");
        d->has_capture = status == BTD_EXIT_OK;
    }
    const struct btd_binary *wrong = status != BTD_EXIT_OK                   ? NULL
                                     : strcmp(b->arch, d->program.arch) != 0 ? &d->program
                                     : d->has_capture && strcmp(b->arch, d->capture.arch) != 0
                                         ? &d->capture
                                         : NULL;
    if (status != BTD_EXIT_OK) {
        /* Interrupted, or the default capture was not found (already said
         * where we looked). */
    } else if (wrong) {
        btd_error("architecture mismatch: the board %s is %s (uname -m: %s) but the %s %s is "
                  "built for %s (ELF machine %u); nothing was uploaded",
                  d->conn.where, b->arch, b->uname_m,
                  wrong != &d->program ? "capture"
                  : d->python          ? "Python extension"
                                       : "program",
                  wrong->path, wrong->arch, wrong->elf.machine);
        status = BTD_EXIT_BOARD;
    } else if (!b->dir[0]) {
        btd_error("no private folder on %s: %s", d->conn.where,
                  b->dir_error[0] ? b->dir_error : "mktemp -d gave no answer");
        return BTD_EXIT_BOARD;
    } else if (b->exec_ok == 0) {
        btd_error("files in %s on %s cannot be executed (noexec mount?); choose another folder "
                  "with --remote-dir",
                  b->dir, d->conn.where);
        status = BTD_EXIT_BOARD;
    } else {
        uint64_t need = d->program.size + (d->has_capture ? d->capture.size : 0) + SPACE_MARGIN;
        if (b->free_known && b->free_bytes < need) {
            char s_need[32], s_free[32];
            btd_format_size((double)need, s_need, sizeof s_need);
            btd_format_size((double)b->free_bytes, s_free, sizeof s_free);
            btd_error("not enough space in %s on %s: need %s (program, capture and 4 MiB for "
                      "the trace), found %s free",
                      b->dir, d->conn.where, s_need, s_free);
            status = BTD_EXIT_BOARD;
        }
    }
    if (status == BTD_EXIT_OK)
        status = btd_deploy_libc_check(d);
    if (status != BTD_EXIT_OK) {
        remove_preflight_folder(d);
        return status;
    }
    d->t_preflight = btd_now();
    btd_debug("private folder %s", b->dir);
    if (!d->program.has_symbols)
        btd_warn("%s has no symbol table (stripped): callstacks (tracing modes 3-4) will show "
                 "addresses without function names; give the unstripped file to run, or name "
                 "them later with boardtrace-report symbolize TRACE UNSTRIPPED",
                 d->program.path);
    if (!b->exe_link)
        btd_warn("/proc/self/exe does not resolve on %s: callstacks will not be named",
                 d->conn.where);

    board_name(d->program.path, "", d->program.name, sizeof d->program.name);
    snprintf(d->program.remote, sizeof d->program.remote, "%s/%s", b->dir, d->program.name);
    if (d->has_capture) {
        board_name(d->capture.path, "", d->capture.name, sizeof d->capture.name);
        if (strcmp(d->capture.name, d->program.name) == 0 ||
            strcmp(d->capture.name, "trace.tracy") == 0)
            board_name(d->capture.path, "capture-", d->capture.name, sizeof d->capture.name);
        snprintf(d->capture.remote, sizeof d->capture.remote, "%s/%s", b->dir, d->capture.name);
    }
    /* Nothing runs on the board yet: Ctrl-C ends the upload at once. */
    btd_interrupt_step("upload", true);
    int status_extra = btd_uploads_check(d);
    if (status_extra != BTD_EXIT_OK) {
        if (btd_board_remove_dir(&d->conn, b->dir, err, sizeof err) != 0)
            btd_warn("%s", err);
        b->dir[0] = '\0';
        return status_extra;
    }
    struct btd_binary *bins[2] = {&d->program, d->has_capture ? &d->capture : NULL};
    for (int i = 0; i < 2; i++) {
        if (!bins[i])
            continue;
        struct btd_binary *bin = bins[i];
        /* The board needs no symbols: a copy without them travels. Not for
         * live: its viewer names frames as they come, from the board. Nor
         * for a program with upstream Tracy's client: it names its frames
         * on the board from its own symbols and DWARF (stripped, it names
         * none, and a build with assertions aborts in DecodeCallstackPtr). */
        bin->upload_size = bin->size;
        bool upstream = bin == &d->program && bin->traced && !bin->bt_version[0];
        bool strippable = !d->o->no_strip && d->o->command == BTD_CMD_RUN && bin->has_symbols;
        if (strippable && upstream)
            btd_note("%s is sent with its symbols: upstream Tracy's client names its callstack "
                     "frames on the board from them",
                     bin->name);
        if (strippable && !upstream &&
            btd_strip_copy(bin->path, bin->upload, sizeof bin->upload, &bin->upload_size, err,
                           sizeof err) < 0) {
            btd_error("%s", err);
            return BTD_EXIT_LOCAL;
        }
        char label[160];
        snprintf(label, sizeof label, "upload %.120s", bin->name);
        int up = btd_upload(&d->conn, &d->xo, bin->upload[0] ? bin->upload : bin->path, bin->remote,
                            label, bin->sha, err, sizeof err);
        if (bin->upload[0])
            unlink(bin->upload);
        if (btd_interrupted)
            return BTD_EXIT_INTERRUPTED;
        if (up != 0) {
            btd_error("upload of %s to %s failed: %s", bin->path, d->conn.where, err);
            return BTD_EXIT_UPLOAD;
        }
        if (bin->upload[0])
            btd_debug("uploaded %s without symbols: %llu of %llu bytes", bin->path,
                      (unsigned long long)bin->upload_size, (unsigned long long)bin->size);
    }
    int sent = btd_uploads_send(d);
    if (sent != BTD_EXIT_OK)
        return sent;
    btd_debug("uploaded over %s", d->conn.sftp ? "SFTP" : "an exec channel");
    int libs = btd_deploy_libs(d);
    if (libs != BTD_EXIT_OK)
        return btd_interrupted ? BTD_EXIT_INTERRUPTED : libs;
    d->t_upload = btd_now();
    return BTD_EXIT_OK;
}

int btd_deploy_start(struct btd_deploy *d)
{
    btd_interrupt_step("preflight", false);
    int status = btd_deploy_connect(d);
    if (status == BTD_EXIT_OK)
        status = btd_deploy_prepare(d);
    if (status != BTD_EXIT_OK && btd_interrupted)
        status = BTD_EXIT_INTERRUPTED;
    if (status == BTD_EXIT_INTERRUPTED && btd_interrupt_gave_up() && btd_interrupted < 2 &&
        d->board.dir[0]) {
        /* The upload's connection was cut to stop it at once; a new one
         * removes the folder, which holds nothing but the part sent. */
        btd_conn_close(&d->conn);
        if (btd_deploy_connect(d) != BTD_EXIT_OK)
            btd_conn_close(&d->conn);
    }
    return status;
}

bool btd_deploy_cleanup(struct btd_deploy *d, bool keep)
{
    if (!d->board.dir[0])
        return false;
    if (keep) {
        btd_note("kept %s on %s", d->board.dir, d->conn.where);
        return false;
    }
    char err[600];
    if (btd_board_remove_dir(&d->conn, d->board.dir, err, sizeof err) != 0) {
        btd_warn("cleanup: %s", err);
        return false;
    }
    btd_debug("removed %s", d->board.dir);
    return true;
}

bool btd_deploy_cleanup_lost(struct btd_deploy *d)
{
    if (!d->board.dir[0])
        return true;
    btd_note("the connection to %s was lost before anything started there; connecting again to "
             "remove the partial folder %s",
             d->conn.where, d->board.dir);
    btd_conn_close(&d->conn);
    char err[600];
    if (btd_deploy_connect(d) != BTD_EXIT_OK) {
        btd_warn("could not remove the partial folder %s on %s: it holds no trace (boardtrace "
                 "status lists it as stopped); remove it there with: rm -rf %s",
                 d->board.dir, d->conn.where, d->board.dir);
        return false;
    }
    if (btd_board_remove_dir(&d->conn, d->board.dir, err, sizeof err) != 0) {
        btd_warn("cleanup: %s", err);
        return false;
    }
    btd_note("removed the partial folder %s from %s", d->board.dir, d->conn.where);
    d->board.dir[0] = '\0';
    return true;
}
