/* The Tracy wire protocols boardtrace speaks besides 0.14.0's: 64 (0.10),
 * 66 (0.11.0), 69 (0.11.1), 72 (0.11.2 at commit 5479a42, the Tracy IREE
 * pins), 74 (0.12.x), 76 (0.13.x) and 82 (0.14.0), plus "66-tt", the
 * tenstorrent fork of 0.10 tt-metal ships (protocol 66 with 16-bit GPU
 * contexts; its handshake is upstream 66's, so it is chosen by name).
 *
 * Everything in boardtrace works in one form, 0.14.0's (wire.h, called
 * "canonical" here). A protocol is a table that says how its events are
 * numbered and sized, and two conversions of one event's fixed part: up
 * (the protocol's form to the canonical one, for the capture) and down (the
 * canonical form to the protocol's, for the runtime). The facts are those
 * of tools/tracy-versions.md. */
#ifndef BOARDTRACE_WIRE_PROTO_H
#define BOARDTRACE_WIRE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "boardtrace/wire.h"

/* What a protocol has that older ones lack; each bit holds from the
 * protocol named on up (except GPU_CONTEXT_U16, the tt fork's alone). */
enum bt_proto_feature {
    BT_PROTO_GPU_TIME_SYNC = 1u << 0,    /* 66: GpuTimeSync */
    BT_PROTO_EXTNAME_PRIORITY = 1u << 1, /* 66: query ExternalName = 8, Disconnect = 9 */
    BT_PROTO_GROUP_HINT = 1u << 2,       /* 69: ThreadGroupHint, FiberEnter's hint, dies */
    BT_PROTO_MEM_DISCARD = 1u << 3,      /* 72: MemDiscard, MemDiscardCallstack */
    BT_PROTO_WAKEUP_DETAIL = 1u << 4,    /* 74: ContextSwitch 23 and ThreadWakeup 16 bytes */
    BT_PROTO_WELCOME_DELAY = 1u << 5,    /* up to 74: the welcome's u64 delay (1178 bytes) */
    BT_PROTO_GPU_ANNOTATIONS = 1u << 6,  /* 76: GpuAnnotationName, GpuZoneAnnotation */
    BT_PROTO_COMPACT_TIMES = 1u << 7,    /* 82: 32/16-bit zone and sample forms */
    BT_PROTO_STRING8 = 1u << 8,          /* 82: 8-bit staged strings, u16 lengths - 256 */
    BT_PROTO_MESSAGE_METADATA = 1u << 9, /* 82: message source/severity, tagged literals */
    BT_PROTO_SECTIONS = 1u << 10,        /* 82: SectionEnter, SectionLeave, SectionSetup */
    BT_PROTO_PARAM_TRIGGER = 1u << 11,   /* 82: ParamSetup type 2 (Trigger) */
    BT_PROTO_GPU_CONTEXT_U16 = 1u << 12, /* 66-tt: GPU context ids are u16 */
};

#define BT_PROTO_NONE      0xffu /* in the type maps: no such type */
#define BT_PROTO_EVENT_MAX 48u   /* longest fixed part of any event, any protocol */

struct bt_proto {
    uint32_t number;      /* what the handshake carries: 64 ... 82 */
    const char *name;     /* "72", "66-tt" */
    const char *releases; /* "0.11.2 (commit 5479a42)" */
    uint32_t features;
    uint32_t welcome_size;           /* 1178 with the delay field, else 1170 */
    uint8_t max_gpu_context_type;    /* highest GpuContextType its server knows */
    uint8_t type_count;              /* wire types 0 ... type_count - 1 */
    uint8_t to_canon[256];           /* wire type -> canonical type */
    uint8_t from_canon[BT_EV_COUNT]; /* canonical type -> wire type */
    uint8_t size[256];               /* wire type -> fixed size with the type byte; 0: none */
    uint8_t query_to_canon[BT_QUERY_COUNT];
    uint8_t query_from_canon[BT_QUERY_COUNT];
};

/* The upstream protocols, newest first (the order a capture offers them). */
#define BT_PROTO_UPSTREAM_COUNT 7u
extern const uint32_t bt_proto_numbers[BT_PROTO_UPSTREAM_COUNT];

/* The upstream protocol with this number, or NULL. */
const struct bt_proto *bt_proto_get(uint32_t number);

/* A protocol by name: "64" ... "82", or "66-tt"; NULL when unknown. */
const struct bt_proto *bt_proto_by_name(const char *name);

/* "64 (0.10.0), 66 (0.11.0), ..., 66-tt (tenstorrent 0.10 fork)": for help
 * texts and errors. */
const char *bt_proto_supported(void);

static inline int bt_proto_has(const struct bt_proto *p, uint32_t feature)
{
    return (p->features & feature) != 0;
}

/* Converts the fixed part of one event from p's form (in[0] its wire type,
 * p->size[in[0]] bytes) to the canonical form at out (BT_PROTO_EVENT_MAX
 * bytes). Returns the canonical size; 0 for a type p does not have; -1 for
 * a value the canonical form cannot hold (a tt GPU context above 255).
 * Zone and sample times come out in the canonical compact form their delta
 * fits (protocol notes 4.3), messages as User/Info, literal addresses
 * tagged, a missing die, group hint or wakeup detail as 0. The variable
 * part that follows some events (string lengths and bytes) is the caller's:
 * before 82 staged strings carry a plain u16 length. */
int bt_proto_up(const struct bt_proto *p, const uint8_t *in, uint8_t *out);

/* Converts the fixed part of one canonical event (in[0] its type, the
 * canonical size, compact forms included) to p's form at out
 * (BT_PROTO_EVENT_MAX bytes). Returns the size written, or 0 when p cannot
 * carry the event at all (a section, a GPU annotation, a discard, a group
 * hint, a GPU time sync on 64): the caller drops it, and with it the staged
 * strings it would have consumed. */
size_t bt_proto_down(const struct bt_proto *p, const uint8_t *in, uint8_t *out);

/* The welcome message: p's form (p->welcome_size bytes) to the canonical
 * 1170 bytes, the delay field (client ticks) to *delay (0 without one); and
 * back, with delay as the field's value. */
void bt_proto_welcome_up(const struct bt_proto *p, const uint8_t *in, uint8_t *out,
                         uint64_t *delay);
void bt_proto_welcome_down(const struct bt_proto *p, const uint8_t *in, uint64_t delay,
                           uint8_t *out);

/* Query type numbers: BT_PROTO_NONE for a number the protocol lacks. */
static inline uint8_t bt_proto_query_up(const struct bt_proto *p, uint8_t wire)
{
    return wire < BT_QUERY_COUNT ? p->query_to_canon[wire] : BT_PROTO_NONE;
}
static inline uint8_t bt_proto_query_down(const struct bt_proto *p, uint8_t canon)
{
    return canon < BT_QUERY_COUNT ? p->query_from_canon[canon] : BT_PROTO_NONE;
}

/* ---- whole runs of events (a frame's worth; wire_proto_stream.c) ---- */

/* The size of the event at buf in p's form (staged and keyed strings with
 * their variable part), or 0 when it is not one of p's events or is cut
 * off before left bytes end. */
size_t bt_proto_event_size(const struct bt_proto *p, const uint8_t *buf, size_t left);

/* Where bt_proto_up_events stopped, for the caller's error message. */
struct bt_proto_fault {
    size_t offset; /* in the input */
    uint8_t type;  /* the wire type found there */
    const char *what;
};

/* Converts whole events in p's form to the canonical form: the fixed parts
 * with bt_proto_up, staged strings from plain u16 lengths to 0.14's two
 * forms, keyed strings renumbered. out needs room for n + n / 2 bytes
 * (cap). Returns the canonical size, or (size_t)-1 with *fault set. */
size_t bt_proto_up_events(const struct bt_proto *p, const uint8_t *in, size_t n, uint8_t *out,
                          size_t cap, struct bt_proto_fault *fault);

/* Converts whole canonical events to p's form: the fixed parts with
 * bt_proto_down, staged strings to plain u16 lengths. An event p cannot
 * carry is dropped together with the staged strings right before it that
 * it would have consumed, and counted in dropped[its canonical type] (may
 * be NULL). out needs room for 3 * n bytes (compact forms grow to wide
 * ones) (cap). Returns the size written, or (size_t)-1 for input that is
 * not whole canonical events or too little room. */
size_t bt_proto_down_events(const struct bt_proto *p, const uint8_t *in, size_t n, uint8_t *out,
                            size_t cap, uint32_t *dropped);

#endif
