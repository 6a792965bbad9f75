/* Encoding of what the system tracer reports (systrace/systrace.c): CPU samples with
 * their callstacks, context switches and wakeups (all on the CTX time
 * chain), hardware counter samples, the CPU topology and thread-to-process
 * mappings. */
#include "boardtrace/wire.h"
#include "encoder.h"

static int64_t ctx_delta(struct bt_encoder *e, int64_t time)
{
    int64_t d = time - e->ref_ctx;
    e->ref_ctx = time;
    return d;
}

void bt_enc_sample(struct bt_encoder *e, int ctx_switch, uint32_t thread, int64_t time,
                   const uint64_t *frames, size_t n)
{
    uint8_t *p = bt_encoder_reserve(e, 11 + 8 * n);
    p[0] = BT_EV_CALLSTACK_PAYLOAD;
    bt_wire_put_u64(p + 1, 0);
    bt_wire_put_u16(p + 9, (uint16_t)(8 * n));
    for (size_t i = 0; i < n; i++)
        bt_wire_put_u64(p + 11 + 8 * i, frames[i]);
    /* As zones (protocol notes 4.3.2), but the thread comes before the time. */
    uint8_t wide = ctx_switch ? BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH : BT_EV_CALLSTACK_SAMPLE;
    uint8_t *lead;
    bt_enc_compact_lead(e, wide, 4, ctx_delta(e, time), 0, &lead);
    bt_wire_put_u32(lead, thread);
}

void bt_enc_context_switch(struct bt_encoder *e, int64_t time, uint32_t old_thread,
                           uint32_t new_thread, uint8_t cpu, uint8_t reason, uint8_t state,
                           int8_t new_prio, int8_t old_prio)
{
    uint8_t *p = bt_encoder_reserve(e, 23);
    p[0] = BT_EV_CONTEXT_SWITCH;
    bt_wire_put_u64(p + 1, (uint64_t)ctx_delta(e, time));
    bt_wire_put_u32(p + 9, old_thread);
    bt_wire_put_u32(p + 13, new_thread);
    p[17] = cpu;
    p[18] = reason;
    p[19] = state;
    p[20] = 0; /* the CPU's previous C-state: not known on Linux */
    p[21] = (uint8_t)new_prio;
    p[22] = (uint8_t)old_prio;
}

void bt_enc_thread_wakeup(struct bt_encoder *e, int64_t time, uint32_t thread, uint8_t cpu)
{
    uint8_t *p = bt_encoder_reserve(e, 16);
    p[0] = BT_EV_THREAD_WAKEUP;
    bt_wire_put_u64(p + 1, (uint64_t)ctx_delta(e, time));
    bt_wire_put_u32(p + 9, thread);
    p[13] = cpu;
    p[14] = (uint8_t)-1; /* adjust reason: Linux has none */
    p[15] = 0;
}

void bt_enc_hw_sample(struct bt_encoder *e, uint8_t type, uint64_t ip, int64_t time)
{
    uint8_t *p = bt_encoder_reserve(e, 17);
    p[0] = type;
    bt_wire_put_u64(p + 1, ip);
    bt_wire_put_u64(p + 9, (uint64_t)time);
}

void bt_enc_cpu_topology(struct bt_encoder *e, uint32_t package, uint32_t die, uint32_t core,
                         uint32_t thread)
{
    uint8_t *p = bt_encoder_reserve(e, 17);
    p[0] = BT_EV_CPU_TOPOLOGY;
    bt_wire_put_u32(p + 1, package);
    bt_wire_put_u32(p + 5, die);
    bt_wire_put_u32(p + 9, core);
    bt_wire_put_u32(p + 13, thread);
}

void bt_enc_tid_to_pid(struct bt_encoder *e, uint64_t tid, uint64_t pid)
{
    uint8_t *p = bt_encoder_reserve(e, 17);
    p[0] = BT_EV_TID_TO_PID;
    bt_wire_put_u64(p + 1, tid);
    bt_wire_put_u64(p + 9, pid);
}

void bt_enc_thread_group_hint(struct bt_encoder *e, uint32_t tid, int32_t group_hint)
{
    uint8_t *p = bt_encoder_reserve(e, 9);
    p[0] = BT_EV_THREAD_GROUP_HINT;
    bt_wire_put_u32(p + 1, tid);
    bt_wire_put_u32(p + 5, (uint32_t)group_hint);
}
