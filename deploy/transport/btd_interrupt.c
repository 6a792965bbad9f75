/* Signals for the CLI (see btd_interrupt.h). The handler does only what is
 * async-signal-safe: it counts, and it may call shutdown(2). */
#define _GNU_SOURCE
#include "btd_interrupt.h"

#include <sys/socket.h>

volatile sig_atomic_t btd_interrupted;

static volatile sig_atomic_t watched_fd = -1;
static volatile sig_atomic_t abort_now;
static volatile sig_atomic_t step_base; /* signals before the step began */
static volatile sig_atomic_t gave_up;
static volatile sig_atomic_t cut; /* the watched socket was shut down */
static const char *step_name = "preflight";

static void on_signal(int sig)
{
    (void)sig;
    if (btd_interrupted < 2)
        btd_interrupted++;
    if ((abort_now && btd_interrupted > step_base) || btd_interrupted >= 2) {
        gave_up = 1;
        if (watched_fd >= 0) {
            shutdown(watched_fd, SHUT_RDWR);
            cut = 1;
        }
    }
}

void btd_install_signals(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

void btd_interrupt_watch_fd(int fd)
{
    cut = 0;
    watched_fd = fd;
}

void btd_interrupt_step(const char *step, bool now)
{
    step_name = step;
    step_base = btd_interrupted;
    abort_now = now;
}

const char *btd_interrupt_step_name(void)
{
    return step_name;
}

bool btd_interrupt_gave_up(void)
{
    return gave_up != 0;
}

bool btd_interrupt_cut(void)
{
    return cut != 0;
}
