/* Transfer progress: a one-line bar redrawn on a terminal, nothing otherwise;
 * a one-line summary with the rate at the end either way. */
#ifndef BTD_PROGRESS_H
#define BTD_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

struct btd_progress {
    char label[96];
    uint64_t total;
    uint64_t done;
    uint64_t first; /* bytes already there when a resumed transfer started */
    double start;
    double last_draw;
    bool tty;
};

void btd_progress_start(struct btd_progress *p, const char *label, uint64_t total,
                        uint64_t already);
void btd_progress_update(struct btd_progress *p, uint64_t done);
/* Clears the bar and prints "LABEL: SIZE in T s (RATE)". */
void btd_progress_finish(struct btd_progress *p, bool ok);

#endif
