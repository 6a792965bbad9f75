/* The protocols of Tracy 0.10 ... 0.14.0 as tables over the canonical
 * (0.14.0) event set, and the conversion of one event between the two forms
 * (see boardtrace/wire_proto.h; facts from tools/tracy-versions.md §2-§3).
 *
 * Every older protocol numbers its events as 0.14.0's list minus the types
 * it lacks, in the same order, so the maps are built from "what it lacks"
 * instead of being written out seven times. */
#include "boardtrace/wire_proto.h"

#include <pthread.h>
#include <string.h>

struct proto_def {
    uint32_t number;
    const char *name;
    const char *releases;
    uint32_t features;
    uint8_t max_gpu_context_type;
};

#define F_66 (BT_PROTO_GPU_TIME_SYNC | BT_PROTO_EXTNAME_PRIORITY)
#define F_69 (F_66 | BT_PROTO_GROUP_HINT)
#define F_72 (F_69 | BT_PROTO_MEM_DISCARD)
#define F_74 (F_72 | BT_PROTO_WAKEUP_DETAIL)
#define F_76 (F_74 | BT_PROTO_GPU_ANNOTATIONS)
#define F_82                                                                        \
    (F_76 | BT_PROTO_COMPACT_TIMES | BT_PROTO_STRING8 | BT_PROTO_MESSAGE_METADATA | \
     BT_PROTO_SECTIONS | BT_PROTO_PARAM_TRIGGER)
#define WITH_DELAY BT_PROTO_WELCOME_DELAY

/* GpuContextType: 5 Direct3D11 is the last every version knows; 6 Metal and
 * 7 Custom from 72, 8 CUDA from 74, 9 Rocprof from 76, 10 WebGPU in 82. */
static const struct proto_def defs[] = {
    {82, "82", "0.14.0", F_82, 10},
    {76, "76", "0.13.0, 0.13.1", F_76, 9},
    {74, "74", "0.12.0 ... 0.12.2", F_74 | WITH_DELAY, 8},
    {72, "72", "0.11.2 at commit 5479a42, as IREE pins it", F_72 | WITH_DELAY, 7},
    {69, "69", "0.11.1", F_69 | WITH_DELAY, 5},
    {66, "66", "0.11.0", F_66 | WITH_DELAY, 5},
    {64, "64", "0.10.0", WITH_DELAY, 5},
    /* tenstorrent's fork: upstream 66 plus u16 GPU contexts; GpuContextType
     * 6 is its tt_device. */
    {66, "66-tt", "tenstorrent's 0.10 fork, as tt-metal pins it",
     F_66 | WITH_DELAY | BT_PROTO_GPU_CONTEXT_U16, 6},
};
#define PROTO_COUNT (sizeof defs / sizeof defs[0])

const uint32_t bt_proto_numbers[BT_PROTO_UPSTREAM_COUNT] = {82, 76, 74, 72, 69, 66, 64};

static struct bt_proto protos[PROTO_COUNT];
static pthread_once_t protos_once = PTHREAD_ONCE_INIT;

/* Whether a protocol with these features has the canonical type. */
static int has_type(uint32_t f, unsigned t)
{
    switch (t) {
    case BT_EV_CALLSTACK_SAMPLE32:
    case BT_EV_CALLSTACK_SAMPLE16:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH32:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16:
    case BT_EV_ZONE_BEGIN32:
    case BT_EV_ZONE_BEGIN16:
    case BT_EV_ZONE_BEGIN_CALLSTACK32:
    case BT_EV_ZONE_BEGIN_CALLSTACK16:
    case BT_EV_ZONE_END32:
    case BT_EV_ZONE_END16:
        return (f & BT_PROTO_COMPACT_TIMES) != 0;
    case BT_EV_SECTION_ENTER:
    case BT_EV_SECTION_LEAVE:
    case BT_EV_SECTION_SETUP:
        return (f & BT_PROTO_SECTIONS) != 0;
    case BT_EV_SINGLE_STRING_DATA8:
    case BT_EV_SECOND_STRING_DATA8:
        return (f & BT_PROTO_STRING8) != 0;
    case BT_EV_GPU_ANNOTATION_NAME:
    case BT_EV_GPU_ZONE_ANNOTATION:
        return (f & BT_PROTO_GPU_ANNOTATIONS) != 0;
    case BT_EV_MEM_DISCARD:
    case BT_EV_MEM_DISCARD_CALLSTACK:
        return (f & BT_PROTO_MEM_DISCARD) != 0;
    case BT_EV_THREAD_GROUP_HINT:
        return (f & BT_PROTO_GROUP_HINT) != 0;
    case BT_EV_GPU_TIME_SYNC:
        return (f & BT_PROTO_GPU_TIME_SYNC) != 0;
    default:
        return 1;
    }
}

/* Where the GPU context id sits in a canonical event (with the type byte),
 * or 0 for an event without one. GpuAnnotationName and GpuZoneAnnotation
 * keep a u8 context in every fork, so they are not listed. */
static unsigned gpu_context_at(unsigned t)
{
    switch (t) {
    case BT_EV_GPU_ZONE_BEGIN:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL:
    case BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL:
    case BT_EV_GPU_ZONE_END:
    case BT_EV_GPU_ZONE_END_SERIAL:
        return 15;
    case BT_EV_GPU_TIME:
        return 11;
    case BT_EV_GPU_CONTEXT_NAME:
        return 1;
    case BT_EV_GPU_CALIBRATION:
        return 25;
    case BT_EV_GPU_TIME_SYNC:
        return 17;
    case BT_EV_GPU_NEW_CONTEXT:
        return 25;
    default:
        return 0;
    }
}

/* The fixed size of a canonical type in a protocol with these features. */
static uint8_t size_in(uint32_t f, unsigned t)
{
    uint8_t size = bt_wire_event_size[t];
    switch (t) {
    case BT_EV_MESSAGE:
    case BT_EV_MESSAGE_CALLSTACK:
    case BT_EV_MESSAGE_COLOR:
    case BT_EV_MESSAGE_COLOR_CALLSTACK:
        return (f & BT_PROTO_MESSAGE_METADATA) ? size : (uint8_t)(size - 1);
    case BT_EV_CONTEXT_SWITCH:
    case BT_EV_THREAD_WAKEUP:
        return (f & BT_PROTO_WAKEUP_DETAIL) ? size : (uint8_t)(size - 3);
    case BT_EV_FIBER_ENTER:
    case BT_EV_CPU_TOPOLOGY:
        return (f & BT_PROTO_GROUP_HINT) ? size : (uint8_t)(size - 4);
    default:
        if ((f & BT_PROTO_GPU_CONTEXT_U16) && gpu_context_at(t))
            return (uint8_t)(size + 1);
        return size;
    }
}

static void build(struct bt_proto *p, const struct proto_def *d)
{
    memset(p, 0, sizeof *p);
    p->number = d->number;
    p->name = d->name;
    p->releases = d->releases;
    p->features = d->features;
    p->welcome_size =
        (d->features & BT_PROTO_WELCOME_DELAY) ? BT_WELCOME_SIZE + 8u : BT_WELCOME_SIZE;
    p->max_gpu_context_type = d->max_gpu_context_type;
    memset(p->to_canon, BT_PROTO_NONE, sizeof p->to_canon);
    memset(p->from_canon, BT_PROTO_NONE, sizeof p->from_canon);
    unsigned wire = 0;
    for (unsigned t = 0; t < BT_EV_COUNT; t++) {
        if (!has_type(d->features, t))
            continue;
        p->to_canon[wire] = (uint8_t)t;
        p->from_canon[t] = (uint8_t)wire;
        p->size[wire] = size_in(d->features, t);
        wire++;
    }
    p->type_count = (uint8_t)wire;
    for (unsigned q = 0; q < BT_QUERY_COUNT; q++)
        p->query_to_canon[q] = p->query_from_canon[q] = (uint8_t)q;
    if (!(d->features & BT_PROTO_EXTNAME_PRIORITY)) {
        /* 0.10: Disconnect 8, CallstackFrame 9, ExternalName 10. */
        static const uint8_t old_of[3][2] = {
            {BT_QUERY_DISCONNECT, 8}, {BT_QUERY_CALLSTACK_FRAME, 9}, {BT_QUERY_EXTERNAL_NAME, 10}};
        for (unsigned i = 0; i < 3; i++) {
            p->query_from_canon[old_of[i][0]] = old_of[i][1];
            p->query_to_canon[old_of[i][1]] = old_of[i][0];
        }
    }
}

static void build_all(void)
{
    for (size_t i = 0; i < PROTO_COUNT; i++)
        build(&protos[i], &defs[i]);
}

const struct bt_proto *bt_proto_get(uint32_t number)
{
    pthread_once(&protos_once, build_all);
    for (size_t i = 0; i < BT_PROTO_UPSTREAM_COUNT; i++)
        if (protos[i].number == number)
            return &protos[i];
    return NULL;
}

const struct bt_proto *bt_proto_by_name(const char *name)
{
    pthread_once(&protos_once, build_all);
    for (size_t i = 0; i < PROTO_COUNT; i++)
        if (strcmp(protos[i].name, name) == 0)
            return &protos[i];
    return NULL;
}

const char *bt_proto_supported(void)
{
    return "82 (0.14.0), 76 (0.13.x), 74 (0.12.x), 72 (0.11.2, commit 5479a42), 69 (0.11.1), "
           "66 (0.11.0), 64 (0.10.0), 66-tt (tenstorrent's 0.10 fork)";
}

/* ---- one event, up and down ---- */

/* A zone or sample delta in the canonical compact form it fits (the
 * runtime's encoder chooses the same way): writes the time at out + at and
 * returns the type offset from the wide type (0 wide, 1 32-bit, 2 16-bit)
 * and the time's width through *width. */
static unsigned put_compact(uint8_t *out, size_t at, int64_t d, size_t *width)
{
    if (d >= 0 && d < BT_WIRE_OFF16) {
        bt_wire_put_u16(out + at, (uint16_t)d);
        *width = 2;
        return 2;
    }
    if (d >= BT_WIRE_OFF16 && d < BT_WIRE_OFF32) {
        bt_wire_put_u32(out + at, (uint32_t)(d - BT_WIRE_OFF16));
        *width = 4;
        return 1;
    }
    bt_wire_put_u64(out + at, (uint64_t)(d >= 0 ? d - BT_WIRE_OFF32 : d));
    *width = 8;
    return 0;
}

/* The plain delta of a canonical time in form step (0 wide, 1 32, 2 16). */
static int64_t get_compact(const uint8_t *p, unsigned step)
{
    if (step == 2)
        return bt_wire_get_u16(p);
    if (step == 1)
        return (int64_t)bt_wire_get_u32(p) + BT_WIRE_OFF16;
    int64_t v = (int64_t)bt_wire_get_u64(p);
    return v >= 0 ? (int64_t)((uint64_t)v + (uint64_t)BT_WIRE_OFF32) : v;
}

#define META_USER_INFO ((BT_MSG_SEVERITY_INFO << 4) | BT_MSG_SOURCE_USER)

int bt_proto_up(const struct bt_proto *p, const uint8_t *in, uint8_t *out)
{
    unsigned t = p->to_canon[in[0]];
    if (t == BT_PROTO_NONE)
        return 0;
    size_t n = p->size[in[0]], cn = bt_wire_event_size[t], w;
    uint32_t f = p->features;
    out[0] = (uint8_t)t;
    if (f & BT_PROTO_GPU_CONTEXT_U16) {
        unsigned at = gpu_context_at(t);
        if (at) {
            if (in[at + 1] != 0)
                return -1;
            memcpy(out + 1, in + 1, at - 1);
            out[at] = in[at];
            memcpy(out + at + 1, in + at + 2, n - at - 2);
            return (int)cn;
        }
    }
    if (f & BT_PROTO_COMPACT_TIMES) {
        memcpy(out + 1, in + 1, n - 1);
        return (int)n;
    }
    switch (t) {
    case BT_EV_ZONE_BEGIN:
    case BT_EV_ZONE_BEGIN_CALLSTACK: {
        unsigned step = put_compact(out, 1, (int64_t)bt_wire_get_u64(in + 1), &w);
        out[0] = (uint8_t)(t + step);
        memcpy(out + 1 + w, in + 9, 8);
        return (int)(9 + w);
    }
    case BT_EV_ZONE_END: {
        unsigned step = put_compact(out, 1, (int64_t)bt_wire_get_u64(in + 1), &w);
        out[0] = (uint8_t)(t + step);
        return (int)(1 + w);
    }
    case BT_EV_CALLSTACK_SAMPLE:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH: {
        /* Before 82: i64 time, u32 thread; canonical: thread first. */
        memcpy(out + 1, in + 9, 4);
        unsigned step = put_compact(out, 5, (int64_t)bt_wire_get_u64(in + 1), &w);
        out[0] = (uint8_t)(t + step);
        return (int)(5 + w);
    }
    case BT_EV_MESSAGE:
    case BT_EV_MESSAGE_CALLSTACK:
    case BT_EV_MESSAGE_COLOR:
    case BT_EV_MESSAGE_COLOR_CALLSTACK:
        memcpy(out + 1, in + 1, n - 1);
        out[n] = META_USER_INFO;
        return (int)cn;
    case BT_EV_MESSAGE_LITERAL:
    case BT_EV_MESSAGE_LITERAL_CALLSTACK:
    case BT_EV_MESSAGE_LITERAL_COLOR:
    case BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK: {
        memcpy(out + 1, in + 1, n - 9);
        uint64_t addr = bt_wire_get_u64(in + n - 8);
        bt_wire_put_u64(out + n - 8, (addr << 8) | META_USER_INFO);
        return (int)cn;
    }
    case BT_EV_CPU_TOPOLOGY:
        if (f & BT_PROTO_GROUP_HINT)
            break;
        memcpy(out + 1, in + 1, 4);  /* package */
        bt_wire_put_u32(out + 5, 0); /* die */
        memcpy(out + 9, in + 5, 8);  /* core, thread */
        return (int)cn;
    default:
        break;
    }
    /* The rest differ, if at all, by fields missing at the end. */
    memcpy(out + 1, in + 1, n - 1);
    if (n < cn)
        memset(out + n, 0, cn - n);
    return (int)cn;
}

size_t bt_proto_down(const struct bt_proto *p, const uint8_t *in, uint8_t *out)
{
    unsigned t = in[0];
    uint32_t f = p->features;
    size_t cn = bt_wire_event_size[t];
    unsigned base = t, step = 0;
    if (!(f & BT_PROTO_COMPACT_TIMES)) {
        /* The compact forms fold into their wide type. */
        if ((t >= BT_EV_ZONE_BEGIN && t <= BT_EV_ZONE_END16) ||
            (t >= BT_EV_CALLSTACK_SAMPLE && t <= BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16)) {
            unsigned first = t >= BT_EV_ZONE_END               ? BT_EV_ZONE_END
                             : t >= BT_EV_ZONE_BEGIN_CALLSTACK ? BT_EV_ZONE_BEGIN_CALLSTACK
                             : t >= BT_EV_ZONE_BEGIN           ? BT_EV_ZONE_BEGIN
                             : t >= BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH
                                 ? BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH
                                 : BT_EV_CALLSTACK_SAMPLE;
            base = first;
            step = t - first;
        }
    }
    uint8_t wire = p->from_canon[base];
    if (wire == BT_PROTO_NONE)
        return 0;
    size_t n = p->size[wire];
    out[0] = wire;
    if (f & BT_PROTO_GPU_CONTEXT_U16) {
        unsigned at = gpu_context_at(t);
        if (at) {
            memcpy(out + 1, in + 1, at - 1);
            out[at] = in[at];
            out[at + 1] = 0;
            memcpy(out + at + 2, in + at + 1, cn - at - 1);
            if (t == BT_EV_GPU_NEW_CONTEXT && out[at + 3] > p->max_gpu_context_type)
                out[at + 3] = 0;
            return n;
        }
    }
    if (f & BT_PROTO_COMPACT_TIMES) {
        memcpy(out + 1, in + 1, cn - 1);
        return n;
    }
    switch (base) {
    case BT_EV_ZONE_BEGIN:
    case BT_EV_ZONE_BEGIN_CALLSTACK: {
        size_t w = step == 2 ? 2 : step == 1 ? 4 : 8;
        bt_wire_put_u64(out + 1, (uint64_t)get_compact(in + 1, step));
        memcpy(out + 9, in + 1 + w, 8);
        return n;
    }
    case BT_EV_ZONE_END:
        bt_wire_put_u64(out + 1, (uint64_t)get_compact(in + 1, step));
        return n;
    case BT_EV_CALLSTACK_SAMPLE:
    case BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH:
        bt_wire_put_u64(out + 1, (uint64_t)get_compact(in + 5, step));
        memcpy(out + 9, in + 1, 4);
        return n;
    case BT_EV_MESSAGE_LITERAL:
    case BT_EV_MESSAGE_LITERAL_CALLSTACK:
    case BT_EV_MESSAGE_LITERAL_COLOR:
    case BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK:
        memcpy(out + 1, in + 1, n - 9);
        bt_wire_put_u64(out + n - 8, bt_wire_get_u64(in + cn - 8) >> 8);
        return n;
    case BT_EV_CPU_TOPOLOGY:
        if (f & BT_PROTO_GROUP_HINT)
            break;
        memcpy(out + 1, in + 1, 4);
        memcpy(out + 5, in + 9, 8);
        return n;
    case BT_EV_PARAM_SETUP:
        memcpy(out + 1, in + 1, n - 1);
        if (!(f & BT_PROTO_PARAM_TRIGGER) && out[13] > 1)
            out[13] = 1;
        return n;
    case BT_EV_GPU_NEW_CONTEXT:
        memcpy(out + 1, in + 1, n - 1);
        if (out[27] > p->max_gpu_context_type)
            out[27] = p->max_gpu_context_type >= 7 ? 7 : 0; /* Custom, else Invalid */
        return n;
    default:
        break;
    }
    /* The rest lose, if anything, fields at the end (message metadata,
     * wakeup detail, the fiber's group hint). */
    memcpy(out + 1, in + 1, n - 1);
    return n;
}

/* ---- the welcome message ---- */

void bt_proto_welcome_up(const struct bt_proto *p, const uint8_t *in, uint8_t *out, uint64_t *delay)
{
    if (!(p->features & BT_PROTO_WELCOME_DELAY)) {
        memcpy(out, in, BT_WELCOME_SIZE);
        *delay = 0;
        return;
    }
    memcpy(out, in, BT_WELCOME_OFF_RESOLUTION);
    *delay = bt_wire_get_u64(in + BT_WELCOME_OFF_RESOLUTION);
    memcpy(out + BT_WELCOME_OFF_RESOLUTION, in + BT_WELCOME_OFF_RESOLUTION + 8,
           BT_WELCOME_SIZE - BT_WELCOME_OFF_RESOLUTION);
}

void bt_proto_welcome_down(const struct bt_proto *p, const uint8_t *in, uint64_t delay,
                           uint8_t *out)
{
    if (!(p->features & BT_PROTO_WELCOME_DELAY)) {
        memcpy(out, in, BT_WELCOME_SIZE);
        return;
    }
    memcpy(out, in, BT_WELCOME_OFF_RESOLUTION);
    bt_wire_put_u64(out + BT_WELCOME_OFF_RESOLUTION, delay);
    memcpy(out + BT_WELCOME_OFF_RESOLUTION + 8, in + BT_WELCOME_OFF_RESOLUTION,
           BT_WELCOME_SIZE - BT_WELCOME_OFF_RESOLUTION);
}
