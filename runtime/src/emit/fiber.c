/* Fibers, emitting side. Enter and leave go through the serial queue with
 * the thread's ring position; the worker sends the thread's ring up to that
 * position first, so the zones of a fiber that moves between threads reach
 * the capture in the order they happened (worker/drain.c). */
#define _GNU_SOURCE
#include "emit.h"

void bt_fiber_enter(const char *fiber, int32_t group_hint)
{
    if (!fiber)
        return;
    struct bt_serial_ev ev = {BT_SLOT_FIBER_ENTER, 0, (uint64_t)(uintptr_t)fiber,
                              (uint64_t)(uint32_t)group_hint, 0};
    bt_serial_emit(&ev, 0, 0);
}

void bt_fiber_leave(void)
{
    struct bt_serial_ev ev = {BT_SLOT_FIBER_LEAVE, 0, 0, 0, 0};
    bt_serial_emit(&ev, 0, 0);
}
