/* Context switches as a viewer must receive them: on each CPU, every switch
 * starts from the thread the one before it switched to, and a thread runs on
 * one CPU at a time. Kernels do not always report every switch (some
 * virtual machines never trace a CPU's switches away from its idle task),
 * and a lost record would leave a thread running twice or ending twice,
 * which Tracy's server refuses. The mender follows each CPU and thread and
 * puts in the switches the kernel left out, each at the earliest time it can
 * have happened that keeps every thread's runs in order (the thread's last
 * wakeup, where one was seen). Switches must be given in time order. */
#ifndef BT_SWITCH_MEND_H
#define BT_SWITCH_MEND_H

#include <stddef.h>
#include <stdint.h>

#define BT_MEND_CPUS   256 /* the wire's CPU numbers are one byte */
#define BT_MEND_MAX    3   /* switches put in before one received */
#define BT_MEND_NO_CPU 0xFFFF

struct bt_switch {
    int64_t time;
    uint32_t old_thread; /* 0: the CPU's idle task */
    uint32_t new_thread;
    uint8_t cpu;
    uint8_t state; /* the old thread's state (enum bt_wire_thread_state) */
};

struct bt_mend_thread {
    uint32_t tid; /* 0: a free slot */
    uint16_t cpu; /* where it runs, or BT_MEND_NO_CPU */
    int64_t out;  /* when it last stopped running */
    int64_t woken;
};

struct bt_switch_mend {
    uint32_t running[BT_MEND_CPUS]; /* the thread each CPU last switched to */
    int64_t last[BT_MEND_CPUS];     /* and when */
    uint8_t known[BT_MEND_CPUS];    /* whether a switch was seen on it */
    struct bt_mend_thread *threads; /* open addressing by tid */
    size_t nthreads, cap;
    uint64_t mended; /* switches put in so far */
};

/* 0, or -1 when the thread table could not be allocated (then nothing is
 * mended and bt_switch_mend passes switches through). */
int bt_switch_mend_init(struct bt_switch_mend *m);
void bt_switch_mend_free(struct bt_switch_mend *m);

/* A wakeup of `tid` at `time`: where its next run may start. */
void bt_switch_mend_wakeup(struct bt_switch_mend *m, uint32_t tid, int64_t time);

/* Takes the next switch `s` and writes to `out` the switches to send before
 * it (at most BT_MEND_MAX, in order); returns their count. */
unsigned bt_switch_mend(struct bt_switch_mend *m, const struct bt_switch *s,
                        struct bt_switch out[BT_MEND_MAX]);

#endif
