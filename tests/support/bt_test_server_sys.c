/* The test server's rules for system tracing events (protocol notes 4.9):
 * CPU samples, context switches, wakeups, the CPU topology, hardware
 * counter samples and the external thread names the server asks for. Each
 * rule is one upstream's server asserts: a sample follows its callstack; a
 * switch stops a thread only while it runs, on the CPU that runs it, and
 * starts one only after its last run ended; every external name answers a
 * question once. */
#include <string.h>

#include "boardtrace/wire.h"
#include "bt_test_server.h"
#include "bt_test_server_sys.h"

/* A thread's run, in bt_ts_sys.run: the state in the top byte, the CPU
 * below it; the time of its start or end in bt_ts_sys.run_time. */
enum { RUN_UNSEEN = 0, RUN_RUNNING = 1, RUN_STOPPED = 2, RUN_WOKEN = 3 };

static uint64_t run_state(const struct bt_ts_sys *y, uint32_t tid)
{
    return bt_ts_map_value(&y->run, tid) >> 56;
}

static void set_run(struct bt_ts_sys *y, uint32_t tid, uint64_t state, uint8_t cpu, int64_t time)
{
    uint64_t *r = bt_ts_map_get(&y->run, tid, 1);
    uint64_t *t = bt_ts_map_get(&y->run_time, tid, 1);
    if (r && t) {
        *r = state << 56 | cpu;
        *t = (uint64_t)time;
    }
}

static void ask_external_name(struct bt_test_server *s, uint32_t tid)
{
    struct bt_ts_sys *y = &s->sys;
    if (bt_ts_map_get(&y->external, tid, 0))
        return;
    *bt_ts_map_get(&y->external, tid, 1) = 3; /* thread and process names due */
    y->pending_external += 2;
    bt_ts_query(s, BT_QUERY_EXTERNAL_NAME, tid);
}

static void external_answer(struct bt_test_server *s, const uint8_t *p, uint64_t bit)
{
    struct bt_ts_sys *y = &s->sys;
    uint64_t tid = bt_wire_get_u64(p + 1);
    uint64_t *due = bt_ts_map_get(&y->external, tid, 0);
    if (!due || !(*due & bit)) {
        bt_ts_fail(s, "%s for thread %llu, which was not asked (or twice)",
                   bt_wire_event_name(p[0]), (unsigned long long)tid);
        return;
    }
    *due &= ~bit;
    y->pending_external--;
    y->external_names++;
}

static void context_switch(struct bt_test_server *s, const uint8_t *p, int64_t time)
{
    struct bt_ts_sys *y = &s->sys;
    uint32_t old = bt_wire_get_u32(p + 9), new = bt_wire_get_u32(p + 13);
    uint8_t cpu = p[17];
    y->context_switches++;
    if (old) {
        uint64_t state = run_state(y, old);
        int64_t start = (int64_t)bt_ts_map_value(&y->run_time, old);
        if (state == RUN_STOPPED)
            bt_ts_fail(s, "ContextSwitch on CPU %u stops thread %u, whose run already ended", cpu,
                       old);
        else if (state != RUN_UNSEEN && start > time)
            bt_ts_fail(s, "ContextSwitch stops thread %u before its run started", old);
        if (y->cpu_seen[cpu] && y->cpu_thread[cpu] != old)
            bt_ts_fail(s, "ContextSwitch on CPU %u stops thread %u, but the CPU runs %u", cpu, old,
                       y->cpu_thread[cpu]);
        if (state != RUN_UNSEEN)
            set_run(y, old, RUN_STOPPED, cpu, time);
    }
    if (new) {
        uint64_t state = run_state(y, new);
        int64_t end = (int64_t)bt_ts_map_value(&y->run_time, new);
        if (state == RUN_RUNNING)
            bt_ts_fail(s, "ContextSwitch on CPU %u starts thread %u, which already runs", cpu, new);
        else if (state == RUN_STOPPED && end > time)
            bt_ts_fail(s, "ContextSwitch starts thread %u before its last run ended", new);
        set_run(y, new, RUN_RUNNING, cpu, time);
        y->cpu_thread[cpu] = new;
        y->cpu_seen[cpu] = 1;
        uint64_t *n = bt_ts_map_get(&y->thread_switches, new, 1);
        if (n)
            (*n)++;
        ask_external_name(s, new);
    }
}

static void wakeup(struct bt_test_server *s, const uint8_t *p, int64_t time)
{
    struct bt_ts_sys *y = &s->sys;
    uint32_t tid = bt_wire_get_u32(p + 9);
    y->wakeups++;
    /* a wakeup of a running thread waits for its switch; otherwise it
     * opens a run that its switch in takes over */
    if (run_state(y, tid) != RUN_RUNNING)
        set_run(y, tid, RUN_WOKEN, p[13], time);
}

static void sample(struct bt_test_server *s, const uint8_t *p, int switch_sample)
{
    struct bt_ts_sys *y = &s->sys;
    if (!y->payload_waiting) {
        bt_ts_fail(s, "%s without a CallstackPayload before it", bt_wire_event_name(p[0]));
        return;
    }
    y->payload_waiting = 0;
    if (switch_sample) {
        y->switch_samples++;
        return;
    }
    y->samples++;
    uint64_t *n = bt_ts_map_get(&y->thread_samples, bt_wire_get_u32(p + 1), 1);
    uint64_t *top = bt_ts_map_get(&y->top_samples, y->payload_top, 1);
    if (n && top) {
        (*n)++;
        (*top)++;
    }
}

int bt_ts_sys_event(struct bt_test_server *s, const uint8_t *p, size_t size, int64_t time)
{
    struct bt_ts_sys *y = &s->sys;
    switch (p[0]) {
    case BT_EV_CALLSTACK_PAYLOAD:
        y->payload_waiting = 1;
        y->payload_top = bt_wire_get_u16(p + 9) >= 8 && size >= 19 ? bt_wire_get_u64(p + 11) : 0;
        return 0; /* the frames are the main server's */
    case BT_EV_CALLSTACK:
    case BT_EV_CALLSTACK_SERIAL:
        y->payload_waiting = 0;
        return 0;
    case BT_EV_CALLSTACK_SAMPLE:
    case BT_EV_CALLSTACK_SAMPLE32:
    case BT_EV_CALLSTACK_SAMPLE16:
        sample(s, p, 0);
        return 1;
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH32:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16:
        sample(s, p, 1);
        return 1;
    case BT_EV_CONTEXT_SWITCH:
        context_switch(s, p, time);
        return 1;
    case BT_EV_THREAD_WAKEUP:
        wakeup(s, p, time);
        return 1;
    case BT_EV_CPU_TOPOLOGY:
        y->topology++;
        return 1;
    case BT_EV_TID_TO_PID:
        y->tid_to_pid++;
        return 1;
    case BT_EV_HW_SAMPLE_CPU_CYCLE:
    case BT_EV_HW_SAMPLE_INSTRUCTION_RETIRED:
    case BT_EV_HW_SAMPLE_CACHE_REFERENCE:
    case BT_EV_HW_SAMPLE_CACHE_MISS:
    case BT_EV_HW_SAMPLE_BRANCH_RETIRED:
    case BT_EV_HW_SAMPLE_BRANCH_MISS:
        y->hw_samples++;
        return 1;
    case BT_EV_EXTERNAL_THREAD_NAME:
        external_answer(s, p, 1);
        return 1;
    case BT_EV_EXTERNAL_NAME:
        external_answer(s, p, 2);
        return 1;
    default:
        return 0;
    }
}

uint64_t bt_ts_thread_switches(const struct bt_test_server *s, uint32_t tid)
{
    return bt_ts_map_value(&s->sys.thread_switches, tid);
}

uint64_t bt_ts_thread_samples(const struct bt_test_server *s, uint32_t tid)
{
    return bt_ts_map_value(&s->sys.thread_samples, tid);
}

void bt_ts_sys_free(struct bt_ts_sys *y)
{
    struct bt_ts_map *maps[] = {&y->top_samples, &y->thread_samples, &y->thread_switches,
                                &y->run,         &y->run_time,       &y->external};
    for (size_t i = 0; i < sizeof maps / sizeof maps[0]; i++)
        bt_ts_map_free(maps[i]);
}

int bt_ts_sys_answered(const struct bt_test_server *s)
{
    return s->sys.pending_external == 0;
}
