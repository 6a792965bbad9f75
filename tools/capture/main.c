/* boardtrace-capture: connect to a traced program, capture its Tracy stream
 * and write a .tracy file. Command line compatible with upstream
 * tracy-capture (same flags, same exit codes for the same failures). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boardtrace/config.h>

#include "btc_capture.h"
#include "btc_file_versions.h"
#include "btc_format.h"
#include "btc_journal.h"
#include "btc_tracy.h"

#ifdef BTC_NUMERIC_HOSTS_ONLY
#define ADDR_NOTE \
    "; a numeric address\n                 or localhost (this build is statically linked)"
#else
#define ADDR_NOTE ""
#endif

/* Exit codes: 1-5 are upstream tracy-capture's, 6-8 are boardtrace's own. */
enum exit_code {
    EXIT_OK = 0,
    EXIT_USAGE_OR_MISMATCH = 1, /* bad arguments; or the client speaks another protocol */
    EXIT_NOT_AVAILABLE = 2,     /* the client already served another capture */
    EXIT_DROPPED = 3,           /* the connection dropped during the handshake */
    EXIT_OUTPUT_EXISTS = 4,     /* output exists and -f was not given */
    EXIT_OUTPUT_UNWRITABLE = 5, /* output cannot be opened for writing */
    EXIT_NO_CLIENT = 6,         /* no client before --connect-timeout, or a network error */
    EXIT_STREAM_ERROR = 7,      /* malformed input stopped the capture (file still written) */
    EXIT_WRITE_FAILED = 8,      /* the trace file could not be written */
};

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static void usage(FILE *to)
{
    fprintf(to,
            "boardtrace-capture %s: capture a Tracy profiling session into a .tracy file\n"
            "\n"
            "Usage: boardtrace-capture -o output.tracy [-a address] [-p port] [-f] [-s seconds]\n"
            "                          [-m percent] [--connect-timeout seconds]\n"
            "                          [--file-version V] [--compression zstd|lz4]\n"
            "                          [--protocol N]\n"
            "                          [--spool-dir dir] [--no-journal]\n"
            "       boardtrace-capture --recover output.tracy.journal -o output.tracy [-f]\n"
            "\n"
            "  -o FILE        trace file to write (required)\n"
            "  -a ADDR        address of the traced program (default localhost: 127.0.0.1\n"
            "                 and [::1], where upstream's clients listen under\n"
            "                 TRACY_ONLY_LOCALHOST)" ADDR_NOTE "\n"
            "  -p PORT        its port (default 8086)\n"
            "  -f             overwrite FILE if it exists\n"
            "  -s SECONDS     stop capturing after SECONDS and write what was received\n"
            "  -m PERCENT     stop capturing when this process uses more than PERCENT of\n"
            "                 physical memory (1..999, as upstream tracy-capture)\n"
            "  --connect-timeout SECONDS\n"
            "                 give up when no program accepts the connection within\n"
            "                 SECONDS, naming what listens on the port (default: keep\n"
            "                 trying until interrupted)\n"
            "  --file-version V\n"
            "                 the .tracy version to write: 0.14.0, 0.13.1, 0.13.0, 0.12.2,\n"
            "                 0.12.1, 0.12.0, 0.11.2, 0.11.1, 0.11.0 or 0.10.0 (a GUI opens\n"
            "                 its own version and older); default: $BOARDTRACE_FILE_VERSION\n"
            "                 when set (a user's GUI release, set once), else the client's\n"
            "                 own release's (0.11.2 for a protocol-72 client, 0.10.0 for 64\n"
            "                 or the tt fork)\n"
            "  --compression zstd|lz4\n"
            "                 how FILE is compressed: zstd (default, as upstream's\n"
            "                 tracy-capture) or LZ4 (upstream's \"fast\" files: about twice\n"
            "                 as fast to write, some 2.5 times larger); every Tracy reads both\n"
            "  --protocol N   offer only Tracy protocol N (default: 82, 76, 74, 72, 69, 66\n"
            "                 and 64 in turn, newest first, until the client accepts one);\n"
            "                 66-tt is tenstorrent's 0.10 fork (tt-metal), which cannot be\n"
            "                 told from upstream 0.11.0 on the wire\n"
            "  --spool-dir DIR\n"
            "                 where the temporary spool files go (default: the output's\n"
            "                 folder, so a board's RAM-backed /tmp is not used; the current\n"
            "                 folder when the output is a FIFO or a device); it must exist\n"
            "  --no-journal   do not keep FILE.journal while capturing\n"
            "  --recover JOURNAL\n"
            "                 rebuild the trace from the journal a capture left behind when\n"
            "                 it was killed before writing FILE\n"
            "  -h, --help     this text;  --version  the version\n"
            "\n"
            "SIGINT, SIGTERM or -s stop the capture cleanly (also during the handshake);\n"
            "the file is still written. On a terminal a status line shows progress;\n"
            "otherwise one summary line is printed at the end. While capturing,\n"
            "FILE.journal holds the frames received (compressed, as sent; in the spool\n"
            "folder for a FIFO or device output); it is deleted once FILE is written. A\n"
            "journal an earlier capture left is never overwritten: the capture refuses\n"
            "(exit 4), or with -f renames it to FILE.journal.N and says so.\n"
            "\n"
            "Exit status:\n"
            "  0  trace written (also when stopped by a signal, -s, -m, or a client that\n"
            "     went away: everything received is in the file)\n"
            "  1  bad arguments (a --spool-dir that is no writable folder, --recover of a\n"
            "     file that is no journal), or the client\n"
            "     uses an incompatible protocol version\n"
            "  2  the client already served another capture\n"
            "  3  the client dropped the connection, or stopped answering, during the\n"
            "     handshake\n"
            "  4  output file exists, or an earlier capture's FILE.journal (use -f)\n"
            "  5  output file cannot be opened for writing\n"
            "  6  no client accepted the connection (--connect-timeout) or network error\n"
            "  7  malformed data (or a malformed welcome) stopped the capture; what came\n"
            "     before it was written\n"
            "  8  the trace file could not be written\n",
            BT_VERSION_STRING);
}

/* A number on the command line: decimal digits, with one fraction
 * ("2.5") where fraction allows it, the whole string, from lo to hi.
 * strtod alone would also take "nan" (which no range check refuses),
 * "inf", hexadecimal ("0x50" is 80), exponents, signs and leading spaces;
 * a port of "80.5" would be port 80. */
static int parse_number(const char *s, bool fraction, double lo, double hi, double *out)
{
    static const char digits[] = "0123456789";
    size_t n = strspn(s, digits);
    if (n && fraction && s[n] == '.') {
        size_t f = strspn(s + n + 1, digits);
        n = f ? n + 1 + f : 0;
    }
    if (!n || s[n])
        return -1;
    errno = 0;
    double v = strtod(s, NULL);
    if (errno || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

struct progress {
    int tty;
    double last_bytes, last_t;
};

static void human_bytes(double b, char *out, size_t n)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(out, n, "%.1f %s", b, unit[u]);
}

static void on_progress(void *ctx, const struct btc_capture_stats *s)
{
    struct progress *p = ctx;
    if (!p->tty)
        return;
    double dt = s->elapsed_s - p->last_t;
    double rate = dt > 0 ? ((double)s->wire_bytes - p->last_bytes) / dt : 0;
    if (dt >= 0.5 || p->last_t == 0) {
        p->last_bytes = (double)s->wire_bytes;
        p->last_t = s->elapsed_s;
    } else {
        return;
    }
    char r[32], mem[32], spool[32];
    human_bytes(rate, r, sizeof r);
    human_bytes((double)s->rss_bytes, mem, sizeof mem);
    human_bytes((double)s->spool_bytes, spool, sizeof spool);
    printf("\r\33[2K%s/s | events %llu | zones %llu | mem %s | spool %s | %.1f s", r,
           (unsigned long long)s->events, (unsigned long long)s->zones, mem, spool, s->elapsed_s);
    fflush(stdout);
}

static const char *end_text(enum btc_capture_end e)
{
    switch (e) {
    case BTC_END_COMPLETE:
        return "complete";
    case BTC_END_DISCONNECTED:
        return "client disconnected";
    case BTC_END_STOPPED:
        return "stopped by signal";
    case BTC_END_TIME_LIMIT:
        return "time limit reached";
    case BTC_END_MEMORY_LIMIT:
        return "memory limit reached";
    default:
        return "stream error";
    }
}

/* Frames of the default set as upstream counts them: with the two (three
 * for on-demand clients) added at connection. */
static uint64_t default_frames(const struct btc_model *m)
{
    uint64_t added = (m->welcome.flags & BT_WELCOME_FLAG_ON_DEMAND) ? 3 : 2;
    return ((struct btc_frameset *)btc_vec_at(&m->framesets, 0))->count + added;
}

/* One line for the strings the client sent unasked, which were dropped. */
static void report_unsolicited(const struct btc_model *m)
{
    if (!m->unsolicited_strings)
        return;
    char size[32];
    human_bytes((double)m->unsolicited_bytes, size, sizeof size);
    fprintf(stderr,
            "boardtrace-capture: dropped %llu strings (%s) the client sent without being asked "
            "for them\n",
            (unsigned long long)m->unsolicited_strings, size);
}

/* The folder that holds path ("." for a bare name, "/" for a file in /). */
static void parent_dir(const char *path, char *dir, size_t size)
{
    snprintf(dir, size, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = 0;
    else if (slash)
        *slash = 0;
    else
        snprintf(dir, size, ".");
}

/* Whether the trace can be written to output, without touching a file that
 * is there: the file itself must be writable and, for a regular file or none,
 * its folder too (the new file is made beside it and renamed). errno says
 * why not. */
static bool output_writable(const char *output)
{
    struct stat st;
    bool exists = stat(output, &st) == 0;
    if (exists && access(output, W_OK) != 0)
        return false;
    if (exists && !S_ISREG(st.st_mode))
        return true;
    char dir[4096];
    parent_dir(output, dir, sizeof dir);
    if (exists)
        return access(dir, W_OK | X_OK) == 0;
    /* Not there yet: make it (so a bad name or a full table shows now). */
    int fd = open(output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return false;
    close(fd);
    unlink(output);
    return true;
}

/* Renames path to the first free path.N (link + unlink: nothing that
 * appears meanwhile is replaced); 0, or -1 with errno. */
static int keep_aside(const char *path, char *aside, size_t size)
{
    for (int n = 1; n < 1000; n++) {
        snprintf(aside, size, "%s.%d", path, n);
        if (link(path, aside) == 0)
            return unlink(path);
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Why dir cannot take spool files, or NULL when it can. */
static const char *folder_problem(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return strerror(errno);
    if (!S_ISDIR(st.st_mode))
        return "not a folder";
    if (access(dir, W_OK | X_OK) != 0)
        return strerror(errno);
    return NULL;
}

/* --compression lz4: LZ4 blocks instead of zstd. */
static int file_lz4;

static int write_trace(struct btc_model *m, const char *output, uint32_t version, uint64_t *bytes)
{
    char err[512] = "";
    int rc = btc_model_finish(m);
    if (rc >= 0)
        rc = btc_tracy_write_compressed(m, output, version, file_lz4, bytes, err, sizeof err);
    if (rc < 0)
        fprintf(stderr, "boardtrace-capture: %s\n", err[0] ? err : btc_strerror(rc));
    return rc;
}

/* After the trace could not be written: where what was received is, as far
 * as it is anywhere. The journal may be complete, cut short by a write
 * that failed, or gone (--no-journal, or removed meanwhile). */
static void say_what_was_kept(const char *journal, const struct btc_journal *j, const char *output)
{
    struct stat st;
    if (!journal) {
        fprintf(stderr, "boardtrace-capture: what was received is lost: there was no journal "
                        "(--no-journal)\n");
    } else if (lstat(journal, &st) != 0) {
        fprintf(stderr,
                "boardtrace-capture: what was received is lost: the journal %s is gone "
                "(%s)\n",
                journal, strerror(errno));
    } else if (j->failed) {
        fprintf(stderr,
                "boardtrace-capture: only what was received before writing the journal failed "
                "is in %s; once the problem is fixed, boardtrace-capture --recover %s -o %s "
                "rebuilds that part\n",
                journal, journal, output);
    } else {
        fprintf(stderr,
                "boardtrace-capture: what was received is in %s; once the problem is fixed: "
                "boardtrace-capture --recover %s -o %s\n",
                journal, journal, output);
    }
}

/* --recover: rebuilds the trace from the journal a capture left behind. */
static int recover_journal(const char *journal, const char *output, const char *spool_dir,
                           uint32_t version)
{
    static struct btc_decoder dec;
    static struct btc_model model;
    char err[512] = "";
    uint64_t frames = 0, bytes = 0;
    int rc = btc_journal_replay(journal, spool_dir, &dec, &model, &frames, err, sizeof err);
    /* Malformed data, or a read error after some frames were replayed: what
     * was replayed is still written, and the exit status says it is partial. */
    int partial = rc == BTC_ERR_PROTOCOL || (rc == BTC_ERR_IO && frames > 0);
    if (rc < 0 && !partial) {
        fprintf(stderr, "boardtrace-capture: %s\n", err);
        if (dec.ring)
            btc_decoder_free(&dec);
        return rc == BTC_ERR_FORMAT ? EXIT_USAGE_OR_MISMATCH : EXIT_OUTPUT_UNWRITABLE;
    }
    if (partial)
        fprintf(stderr, "boardtrace-capture: %s\n", err);
    report_unsolicited(&model);
    int code = partial ? EXIT_STREAM_ERROR : EXIT_OK;
    if (!version)
        version =
            btc_file_version_for_protocol(dec.proto ? dec.proto->number : BT_WIRE_PROTOCOL_VERSION);
    btc_decoder_free(&dec); /* as after a live capture: room for the writer */
    if (write_trace(&model, output, version, &bytes) < 0)
        code = EXIT_WRITE_FAILED;
    else
        printf("%s: recovered from %s, %llu frames, %llu events, %llu zones\n", output, journal,
               (unsigned long long)frames, (unsigned long long)dec.events,
               (unsigned long long)model.zone_count);
    btc_model_free(&model);
    btc_decoder_free(&dec);
    return code;
}

int main(int argc, char **argv)
{
    const char *output = NULL, *address = "localhost", *spool_dir = NULL, *recover = NULL;
    int use_journal = 1;
    double port = BT_WIRE_DEFAULT_PORT, seconds = 0, mem_pct = 0, connect_timeout = 0;
    int overwrite = 0;
    uint32_t version = 0; /* 0: the client's own release's */
    const struct bt_proto *protocol = NULL;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int takes = 1;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return EXIT_OK;
        } else if (!strcmp(a, "--version")) {
            printf("boardtrace-capture %s (Tracy protocol %u, file %s)\n", BT_VERSION_STRING,
                   BT_WIRE_PROTOCOL_VERSION, "0.14.0");
            return EXIT_OK;
        } else if (!strcmp(a, "-f")) {
            overwrite = 1;
            takes = 0;
        } else if (!strcmp(a, "--no-journal")) {
            use_journal = 0;
            takes = 0;
        } else if (!val &&
                   (!strcmp(a, "-o") || !strcmp(a, "-a") || !strcmp(a, "-p") || !strcmp(a, "-s") ||
                    !strcmp(a, "-m") || !strcmp(a, "--connect-timeout") ||
                    !strcmp(a, "--file-version") || !strcmp(a, "--spool-dir") ||
                    !strcmp(a, "--protocol") || !strcmp(a, "--compression"))) {
            fprintf(stderr, "boardtrace-capture: option %s needs a value\n", a);
            return EXIT_USAGE_OR_MISMATCH;
        } else if (!strcmp(a, "-o")) {
            output = val;
        } else if (!strcmp(a, "-a")) {
            address = val;
        } else if (!strcmp(a, "--spool-dir")) {
            spool_dir = val;
        } else if (!strcmp(a, "--recover")) {
            recover = val;
        } else if (!strcmp(a, "-p")) {
            if (parse_number(val, false, 1, 65535, &port) < 0) {
                fprintf(stderr,
                        "boardtrace-capture: -p %s: expected a port number 1..65535 (decimal "
                        "digits)\n",
                        val);
                return EXIT_USAGE_OR_MISMATCH;
            }
        } else if (!strcmp(a, "-s")) {
            if (parse_number(val, true, 0, 1e9, &seconds) < 0) {
                fprintf(stderr,
                        "boardtrace-capture: -s %s: expected seconds, a decimal number such as "
                        "10 or 2.5 (0: no limit)\n",
                        val);
                return EXIT_USAGE_OR_MISMATCH;
            }
        } else if (!strcmp(a, "-m")) {
            if (parse_number(val, false, 1, 999, &mem_pct) < 0) {
                fprintf(stderr,
                        "boardtrace-capture: -m %s: expected a percentage of physical memory, "
                        "a whole number 1..999\n",
                        val);
                return EXIT_USAGE_OR_MISMATCH;
            }
        } else if (!strcmp(a, "--connect-timeout")) {
            if (parse_number(val, true, 0, 1e9, &connect_timeout) < 0) {
                fprintf(stderr,
                        "boardtrace-capture: --connect-timeout %s: expected seconds, a decimal "
                        "number such as 20 or 0.5 (0: no limit)\n",
                        val);
                return EXIT_USAGE_OR_MISMATCH;
            }
        } else if (!strcmp(a, "--protocol")) {
            protocol = bt_proto_by_name(val);
            if (!protocol) {
                fprintf(stderr, "boardtrace-capture: --protocol %s: expected one of %s\n", val,
                        bt_proto_supported());
                return EXIT_USAGE_OR_MISMATCH;
            }
        } else if (!strcmp(a, "--compression")) {
            if (strcmp(val, "zstd") != 0 && strcmp(val, "lz4") != 0) {
                fprintf(stderr, "boardtrace-capture: --compression %s: expected zstd or lz4\n",
                        val);
                return EXIT_USAGE_OR_MISMATCH;
            }
            file_lz4 = !strcmp(val, "lz4");
        } else if (!strcmp(a, "--file-version")) {
            const struct btc_file_release *rel = btc_file_release_named(val);
            if (!rel) {
                fprintf(stderr, "boardtrace-capture: --file-version %s: expected one of %s\n", val,
                        btc_file_releases_text());
                return EXIT_USAGE_OR_MISMATCH;
            }
            version = rel->version;
        } else {
            fprintf(stderr, "boardtrace-capture: unknown argument '%s' (see --help)\n", a);
            return EXIT_USAGE_OR_MISMATCH;
        }
        i += takes;
    }
    if (!output) {
        fprintf(stderr, "boardtrace-capture: -o FILE is required (see --help)\n");
        return EXIT_USAGE_OR_MISMATCH;
    }
    /* The user's GUI release, set once in the environment, when the command
     * line names none. */
    const char *env_version = getenv("BOARDTRACE_FILE_VERSION");
    if (!version && env_version && env_version[0]) {
        const struct btc_file_release *rel = btc_file_release_named(env_version);
        if (!rel) {
            fprintf(stderr, "boardtrace-capture: BOARDTRACE_FILE_VERSION=%s: expected one of %s\n",
                    env_version, btc_file_releases_text());
            return EXIT_USAGE_OR_MISMATCH;
        }
        version = rel->version;
    }

    struct stat st;
    if (stat(output, &st) == 0 && !overwrite) {
        fprintf(stderr, "Output file %s already exists! Use -f to force overwrite.\n", output);
        return EXIT_OUTPUT_EXISTS;
    }
    /* Checked now, before a session is lost to an unwritable file; an
     * existing file (-f) is kept until the new one is complete. */
    if (!output_writable(output)) {
        fprintf(stderr, "Cannot open output file %s for writing: %s\n", output, strerror(errno));
        return EXIT_OUTPUT_UNWRITABLE;
    }

    /* Spool beside a regular output unless told otherwise; a FIFO or a
     * device's folder (/dev) is no place for it: the current folder is. */
    bool regular_output = stat(output, &st) != 0 || S_ISREG(st.st_mode);
    char dir[4096];
    if (!spool_dir) {
        if (regular_output)
            parent_dir(output, dir, sizeof dir);
        else
            snprintf(dir, sizeof dir, ".");
        spool_dir = dir;
    } else {
        const char *why = folder_problem(spool_dir);
        if (why) {
            fprintf(stderr, "boardtrace-capture: --spool-dir %s: %s\n", spool_dir, why);
            return EXIT_USAGE_OR_MISMATCH;
        }
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (recover)
        return recover_journal(recover, output, spool_dir, version);

    /* The journal lets a capture killed before it wrote the file be rebuilt
     * (--recover); it is removed once the file is written. One left by an
     * earlier capture may be the only copy of that session: never lose it. */
    char journal[4200];
    if (regular_output)
        snprintf(journal, sizeof journal, "%s.journal", output);
    else
        snprintf(journal, sizeof journal, "%s/boardtrace-capture.%ld.journal", spool_dir,
                 (long)getpid());
    if (use_journal && lstat(journal, &st) == 0) {
        if (!overwrite) {
            fprintf(stderr,
                    "boardtrace-capture: %s exists: a capture that did not finish left it, and "
                    "it may be the only copy of that session. Rebuild its trace with "
                    "--recover %s -o OTHER.tracy, move it away, or use -f to keep it aside "
                    "and capture anew.\n",
                    journal, journal);
            return EXIT_OUTPUT_EXISTS;
        }
        char aside[4300];
        if (keep_aside(journal, aside, sizeof aside) != 0) {
            fprintf(stderr, "boardtrace-capture: cannot move the earlier journal %s aside: %s\n",
                    journal, strerror(errno));
            return EXIT_OUTPUT_UNWRITABLE;
        }
        fprintf(stderr, "boardtrace-capture: kept the earlier journal %s as %s\n", journal, aside);
    }

    struct progress prog = {.tty = isatty(STDOUT_FILENO)};
    struct btc_capture_opts opts = {
        .host = address,
        .port = (unsigned)port,
        .connect_timeout_s = connect_timeout,
        .stop_after_s = seconds,
        .memory_limit =
            mem_pct > 0 ? (uint64_t)(mem_pct / 100.0 * (double)btc_physical_memory()) : 0,
        .spool_dir = spool_dir,
        .journal = use_journal ? journal : NULL,
        .stop = &stop_flag,
        .progress = on_progress,
        .progress_ctx = &prog,
        .protocol = protocol,
        .prewrite = 1,
        .prewrite_lz4 = file_lz4,
        .prewrite_version = version,
    };
    if (prog.tty) {
        printf("Connecting to %s:%u...", address, (unsigned)port);
        fflush(stdout);
    }
    static struct btc_capture cap;
    int rc = btc_capture_run(&cap, &opts);
    if (prog.tty)
        printf("\n");
    if (rc < 0 && !(cap.have_model && rc != BTC_ERR_NOMEM)) {
        fprintf(stderr, "boardtrace-capture: %s\n", cap.err[0] ? cap.err : btc_strerror(rc));
        btc_capture_free(&cap);
        if (rc == BTC_ERR_HANDSHAKE)
            return cap.handshake == BT_HANDSHAKE_PROTOCOL_MISMATCH ? EXIT_USAGE_OR_MISMATCH
                   : cap.handshake == BT_HANDSHAKE_NOT_AVAILABLE   ? EXIT_NOT_AVAILABLE
                                                                   : EXIT_DROPPED;
        if (rc == BTC_ERR_STOPPED)
            return EXIT_OK;
        if (rc == BTC_ERR_IO)
            return EXIT_OUTPUT_UNWRITABLE;
        if (rc == BTC_ERR_PROTOCOL)
            return EXIT_STREAM_ERROR;
        return EXIT_NO_CLIENT;
    }
    if (cap.end == BTC_END_STREAM_ERROR || (cap.end == BTC_END_DISCONNECTED && cap.err[0]))
        fprintf(stderr, "boardtrace-capture: %s\n", cap.err);
    if (cap.journal.failed)
        fprintf(stderr,
                "boardtrace-capture: writing the journal %s failed (%s); it was stopped, and "
                "holds only what came before\n",
                journal, strerror(cap.journal.error));
    report_unsolicited(&cap.model);
    if (cap.model.callstacks.frames_unresolved)
        fprintf(stderr,
                "boardtrace-capture: %llu callstack frames came from the client unresolved (no "
                "symbols where it runs): kept by address; boardtrace-report symbolize names "
                "them from the unstripped program\n",
                (unsigned long long)cap.model.callstacks.frames_unresolved);
    if (cap.model.callstacks.frames_retagged)
        fprintf(stderr,
                "boardtrace-capture: %llu callstack frame addresses had top bits that are not a "
                "sign extension (a pointer-authentication code, a tag, or an unwinder's garbage): "
                "filed with bits 56 to 63 copied from bit 55, as every Tracy loader reads them\n",
                (unsigned long long)cap.model.callstacks.frames_retagged);
    if (cap.model.mem_sizes_unknown)
        fprintf(stderr,
                "boardtrace-capture: %llu allocations had a size of 128 TiB or more (a negative "
                "size, or garbage), which Tracy's loaders refuse: kept, with size 0\n",
                (unsigned long long)cap.model.mem_sizes_unknown);

    /* The stream is over: its decoder's 768 KiB ring makes way for the
     * file writer's compressor (the decoder's counts stay readable). */
    btc_decoder_free(&cap.dec);
    uint64_t bytes = 0;
    if (!version)
        version = btc_file_version_for_protocol(cap.proto->number);
    int wrc = write_trace(&cap.model, output, version, &bytes);
    if (wrc < 0) {
        say_what_was_kept(use_journal ? journal : NULL, &cap.journal, output);
        btc_capture_free(&cap);
        return EXIT_WRITE_FAILED;
    }
    if (cap.drain_cut)
        fprintf(stderr,
                "boardtrace-capture: stopped: at least %llu frames that had come were not decoded "
                "within "
                "the bound and are not in %s%s%s\n",
                (unsigned long long)cap.undecoded_frames, output,
                use_journal ? "; the journal keeps all of it: boardtrace-capture --recover " : "",
                use_journal ? journal : "");
    else if (use_journal)
        unlink(journal);
    const struct btc_capture_stats *s = &cap.stats;
    char in[32], out[32], mem[32];
    human_bytes((double)s->wire_bytes, in, sizeof in);
    human_bytes((double)bytes, out, sizeof out);
    human_bytes((double)s->rss_bytes, mem, sizeof mem);
    /* The span is the trace's own (what the GUI's timeline shows); the
     * capture's time includes waiting for the program and the drain. */
    /* The file's version last: what a GUI must be to open it. */
    const struct btc_file_release *rel = btc_file_release_of(version);
    printf("%s: %s, %llu events, %llu zones, %llu frames, span %.2f s, captured in %.2f s, "
           "received %s, wrote %s, memory %s, client Tracy protocol %s (%s), file %s\n",
           output, end_text(cap.end), (unsigned long long)s->events, (unsigned long long)s->zones,
           (unsigned long long)default_frames(&cap.model),
           (double)btc_tracy_last_time(&cap.model) / 1e9, s->elapsed_s, in, out, mem,
           cap.proto->name, cap.proto->releases, rel ? rel->name : "?");
    int code = cap.end == BTC_END_STREAM_ERROR ? EXIT_STREAM_ERROR : EXIT_OK;
    btc_capture_free(&cap);
    return code;
}
