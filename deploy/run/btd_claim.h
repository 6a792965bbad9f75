/* An exclusive claim on a trace's local names (OUT, OUT.part, OUT.json) for
 * the whole of one command: two runs (or fetches) given the same -o cannot
 * both write them. The claim is a lock (flock) on OUT.part, which the kernel
 * drops with the process, so a crashed run never blocks the next one. */
#ifndef BTD_CLAIM_H
#define BTD_CLAIM_H

#include <stdbool.h>

struct btd_claim {
    int fd;       /* -1: no claim */
    bool created; /* OUT.part was made by the claim (removed on release if still empty) */
    char part[4200];
};

/* Claims OUTPUT. What the user has is protected: OUT must not exist unless
 * replace (-f); with fresh (run) neither may OUT.part (unless empty) nor
 * OUT.json, while without fresh (fetch) an existing OUT.part is what it
 * resumes. None of them may be one of the inputs (NULL-terminated), even
 * with -f. Returns BTD_EXIT_OK, or the exit status after saying why. */
int btd_claim_output(struct btd_claim *c, const char *output, bool fresh, bool replace,
                     const char *const *inputs);

/* Drops the claim; an OUT.part the claim made and nothing wrote goes. */
void btd_claim_release(struct btd_claim *c);

#endif
