/* Messages and exit statuses of the boardtrace CLI: one place decides how
 * errors, notes and verbose output look, and which number names which step. */
#ifndef BTD_MSG_H
#define BTD_MSG_H

/* Exit statuses; each names the step that failed (documented in --help). */
enum btd_exit {
    BTD_EXIT_OK = 0,
    BTD_EXIT_USAGE = 2,    /* bad command line */
    BTD_EXIT_LOCAL = 3,    /* program/capture unreadable, not ELF, disagreeing, not found */
    BTD_EXIT_CONNECT = 4,  /* board unreachable or SSH failed */
    BTD_EXIT_HOSTKEY = 5,  /* host key unknown (not accepted) or changed */
    BTD_EXIT_AUTH = 6,     /* authentication refused */
    BTD_EXIT_BOARD = 7,    /* preflight on the board: architecture, space, directory */
    BTD_EXIT_UPLOAD = 8,   /* upload or its verification failed */
    BTD_EXIT_START = 9,    /* capture or program did not start or lost the board */
    BTD_EXIT_CAPTURE = 10, /* the capture failed or left no trace */
    BTD_EXIT_PULL = 11,    /* download or its verification failed */
    BTD_EXIT_OUTPUT = 12,  /* writing the local trace or record failed */
    BTD_EXIT_PROGRAM = 13, /* all steps worked, the program exited non-zero */
    BTD_EXIT_INTERRUPTED = 130,
};

/* Short name of the step an exit status stands for ("upload", ...). */
const char *btd_exit_step(int status);

/* -v raises, -q lowers: 0 quiet (errors only), 1 normal, 2 verbose, 3 debug. */
extern int btd_verbosity;

void btd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void btd_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void btd_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void btd_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "1.5 MiB" style sizes, written into out. */
void btd_format_size(double bytes, char *out, unsigned long outlen);

/* Seconds since an arbitrary start (CLOCK_MONOTONIC). */
double btd_now(void);

#endif
