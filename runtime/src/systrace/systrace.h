/* System tracing on Linux (systrace.c): CPU samples with user callstacks,
 * context switches and wakeups, and hardware counter samples, read from the
 * kernel's perf events by a thread of its own into a bounded queue the
 * worker drains; the CPU topology (the names of threads that are not ours:
 * sysinfo.h). What the kernel refuses is left out, said once on stderr and
 * once in the trace; the program runs on as before. */
#ifndef BT_SYSTRACE_H
#define BT_SYSTRACE_H

#include <stddef.h>
#include <stdint.h>

struct bt_encoder;

/* Opens what the environment asks for and the kernel allows, and starts the
 * reading thread. Call before the program starts its threads: sampling
 * follows the threads created after it. */
void bt_systrace_start(void);
/* Stops counting, reads what the kernel still holds into the queue and
 * ends the thread. Idempotent. */
void bt_systrace_stop(void);

/* The sampling period for the welcome message: 0 when not sampling. */
uint64_t bt_systrace_sampling_period_ns(void);

/* Worker, at the start of a session: the CPU topology, and a message on
 * thread `thread` naming what system tracing could not do, if anything. */
void bt_systrace_session_begin(struct bt_encoder *e, uint32_t thread, int64_t time);
/* Worker: encodes (or with discard drops) what the queue holds; the bytes
 * taken from it. */
size_t bt_systrace_drain(struct bt_encoder *e, int discard);

#endif
