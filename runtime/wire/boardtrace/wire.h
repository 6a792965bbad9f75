/* Tracy wire protocol v0.14.0 (protocol 82): the numbers and layouts both
 * the runtime (writer) and the capture (reader) use, declared once. Facts are
 * from ../shared/tracy-protocol.md; every multi-byte field is little-endian
 * and packed, so code serializes byte by byte instead of using structs. */
#ifndef BOARDTRACE_WIRE_H
#define BOARDTRACE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define BT_WIRE_PROTOCOL_VERSION  82u
#define BT_WIRE_BROADCAST_VERSION 3u
#define BT_WIRE_DEFAULT_PORT      8086u
#define BT_WIRE_PORT_ATTEMPTS     20u /* 8086, 8087, ... when busy */
#define BT_WIRE_SHIBBOLETH        "TracyPrf"
#define BT_WIRE_SHIBBOLETH_SIZE   8u

/* Handshake status byte sent by the client after the shibboleth and version. */
enum bt_wire_handshake {
    BT_HANDSHAKE_PENDING = 0,
    BT_HANDSHAKE_WELCOME = 1,
    BT_HANDSHAKE_PROTOCOL_MISMATCH = 2,
    BT_HANDSHAKE_NOT_AVAILABLE = 3,
    BT_HANDSHAKE_DROPPED = 4,
};

/* WelcomeMessage: 1170 bytes, sent raw right after the Welcome status. */
#define BT_WELCOME_SIZE              1170u
#define BT_WELCOME_OFF_TIMER_MUL     0u
#define BT_WELCOME_OFF_INIT_BEGIN    8u
#define BT_WELCOME_OFF_INIT_END      16u
#define BT_WELCOME_OFF_RESOLUTION    24u
#define BT_WELCOME_OFF_EPOCH         32u
#define BT_WELCOME_OFF_EXEC_TIME     40u
#define BT_WELCOME_OFF_PID           48u
#define BT_WELCOME_OFF_SAMPLING      56u
#define BT_WELCOME_OFF_FLAGS         64u
#define BT_WELCOME_OFF_CPU_ARCH      65u
#define BT_WELCOME_OFF_CPU_VENDOR    66u
#define BT_WELCOME_OFF_CPU_ID        78u
#define BT_WELCOME_OFF_PROGRAM_NAME  82u
#define BT_WELCOME_OFF_HOST_INFO     146u
#define BT_WELCOME_CPU_VENDOR_SIZE   12u
#define BT_WELCOME_PROGRAM_NAME_SIZE 64u
#define BT_WELCOME_HOST_INFO_SIZE    1024u

enum bt_wire_welcome_flag {
    BT_WELCOME_FLAG_ON_DEMAND = 0x01,
    BT_WELCOME_FLAG_IGNORE_MEM_FAULTS = 0x02,
    BT_WELCOME_FLAG_CODE_TRANSFER = 0x04,
    BT_WELCOME_FLAG_COMBINE_SAMPLES = 0x08,
    BT_WELCOME_FLAG_IDENTIFY_SAMPLES = 0x10,
};

enum bt_wire_cpu_arch {
    BT_CPU_ARCH_UNKNOWN = 0, /* also RISC-V: the protocol has no value for it */
    BT_CPU_ARCH_X86 = 1,
    BT_CPU_ARCH_X64 = 2,
    BT_CPU_ARCH_ARM32 = 3,
    BT_CPU_ARCH_ARM64 = 4,
};

/* OnDemandPayloadMessage, only when BT_WELCOME_FLAG_ON_DEMAND is set. */
#define BT_ON_DEMAND_SIZE 16u

/* UDP discovery broadcast (version 3): only 20 + strlen(name) + 1 bytes are sent. */
#define BT_BROADCAST_SIZE            84u
#define BT_BROADCAST_OFF_VERSION     0u
#define BT_BROADCAST_OFF_PORT        2u
#define BT_BROADCAST_OFF_PROTOCOL    4u
#define BT_BROADCAST_OFF_PID         8u
#define BT_BROADCAST_OFF_ACTIVE_TIME 16u
#define BT_BROADCAST_OFF_NAME        20u
#define BT_BROADCAST_NAME_SIZE       64u

/* Client-to-server framing: u32 compressed size, then one LZ4 block of at most
 * BT_WIRE_FRAME_SIZE decompressed bytes. Events never straddle frames. */
#define BT_WIRE_FRAME_SIZE  262144u
#define BT_WIRE_LZ4_BOUND   (BT_WIRE_FRAME_SIZE + BT_WIRE_FRAME_SIZE / 255u + 16u)
#define BT_WIRE_DICTIONARY  65536u /* how far back an LZ4 match may reach */
#define BT_WIRE_RING_FRAMES 3u     /* decoder ring: 3 frames, wraps past 2 */

/* Compact time forms of zone begin/end and samples (protocol notes 4.3.2). */
#define BT_WIRE_OFF16 65536ll
#define BT_WIRE_OFF32 4295032832ll

/* Event types (QueueType), the first byte of every event. */
enum bt_wire_event {
    BT_EV_ZONE_TEXT = 0,
    BT_EV_ZONE_NAME = 1,
    BT_EV_MESSAGE = 2,
    BT_EV_MESSAGE_COLOR = 3,
    BT_EV_MESSAGE_CALLSTACK = 4,
    BT_EV_MESSAGE_COLOR_CALLSTACK = 5,
    BT_EV_MESSAGE_APP_INFO = 6,
    BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC = 7,
    BT_EV_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK = 8,
    BT_EV_CALLSTACK_SERIAL = 9,
    BT_EV_CALLSTACK = 10,
    BT_EV_CALLSTACK_ALLOC = 11,
    BT_EV_CALLSTACK_SAMPLE = 12,
    BT_EV_CALLSTACK_SAMPLE32 = 13,
    BT_EV_CALLSTACK_SAMPLE16 = 14,
    BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH = 15,
    BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH32 = 16,
    BT_EV_CALLSTACK_SAMPLE_CONTEXT_SWITCH16 = 17,
    BT_EV_FRAME_IMAGE = 18,
    BT_EV_ZONE_BEGIN = 19,
    BT_EV_ZONE_BEGIN32 = 20,
    BT_EV_ZONE_BEGIN16 = 21,
    BT_EV_ZONE_BEGIN_CALLSTACK = 22,
    BT_EV_ZONE_BEGIN_CALLSTACK32 = 23,
    BT_EV_ZONE_BEGIN_CALLSTACK16 = 24,
    BT_EV_ZONE_END = 25,
    BT_EV_ZONE_END32 = 26,
    BT_EV_ZONE_END16 = 27,
    BT_EV_LOCK_WAIT = 28,
    BT_EV_LOCK_OBTAIN = 29,
    BT_EV_LOCK_RELEASE = 30,
    BT_EV_LOCK_SHARED_WAIT = 31,
    BT_EV_LOCK_SHARED_OBTAIN = 32,
    BT_EV_LOCK_SHARED_RELEASE = 33,
    BT_EV_LOCK_NAME = 34,
    BT_EV_MEM_ALLOC = 35,
    BT_EV_MEM_ALLOC_NAMED = 36,
    BT_EV_MEM_FREE = 37,
    BT_EV_MEM_FREE_NAMED = 38,
    BT_EV_MEM_ALLOC_CALLSTACK = 39,
    BT_EV_MEM_ALLOC_CALLSTACK_NAMED = 40,
    BT_EV_MEM_FREE_CALLSTACK = 41,
    BT_EV_MEM_FREE_CALLSTACK_NAMED = 42,
    BT_EV_MEM_DISCARD = 43,
    BT_EV_MEM_DISCARD_CALLSTACK = 44,
    BT_EV_GPU_ZONE_BEGIN = 45,
    BT_EV_GPU_ZONE_BEGIN_CALLSTACK = 46,
    BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC = 47,
    BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK = 48,
    BT_EV_GPU_ZONE_END = 49,
    BT_EV_GPU_ZONE_BEGIN_SERIAL = 50,
    BT_EV_GPU_ZONE_BEGIN_CALLSTACK_SERIAL = 51,
    BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_SERIAL = 52,
    BT_EV_GPU_ZONE_BEGIN_ALLOC_SRC_LOC_CALLSTACK_SERIAL = 53,
    BT_EV_GPU_ZONE_END_SERIAL = 54,
    BT_EV_PLOT_DATA_INT = 55,
    BT_EV_PLOT_DATA_FLOAT = 56,
    BT_EV_PLOT_DATA_DOUBLE = 57,
    BT_EV_CONTEXT_SWITCH = 58,
    BT_EV_THREAD_WAKEUP = 59,
    BT_EV_GPU_TIME = 60,
    BT_EV_GPU_CONTEXT_NAME = 61,
    BT_EV_GPU_ANNOTATION_NAME = 62,
    BT_EV_CALLSTACK_FRAME_SIZE = 63,
    BT_EV_SYMBOL_INFORMATION = 64,
    BT_EV_EXTERNAL_NAME_METADATA = 65,
    BT_EV_SYMBOL_CODE_METADATA = 66,
    BT_EV_SOURCE_CODE_METADATA = 67,
    BT_EV_FIBER_ENTER = 68,
    BT_EV_FIBER_LEAVE = 69,
    BT_EV_SECTION_ENTER = 70,
    BT_EV_SECTION_LEAVE = 71,
    BT_EV_SECTION_SETUP = 72,
    BT_EV_TERMINATE = 73,
    BT_EV_KEEP_ALIVE = 74,
    BT_EV_THREAD_CONTEXT = 75,
    BT_EV_GPU_CALIBRATION = 76,
    BT_EV_GPU_TIME_SYNC = 77,
    BT_EV_CRASH = 78,
    BT_EV_CRASH_REPORT = 79,
    BT_EV_ZONE_VALIDATION = 80,
    BT_EV_ZONE_COLOR = 81,
    BT_EV_ZONE_VALUE = 82,
    BT_EV_FRAME_MARK_MSG = 83,
    BT_EV_FRAME_MARK_MSG_START = 84,
    BT_EV_FRAME_MARK_MSG_END = 85,
    BT_EV_FRAME_VSYNC = 86,
    BT_EV_SOURCE_LOCATION = 87,
    BT_EV_LOCK_ANNOUNCE = 88,
    BT_EV_LOCK_TERMINATE = 89,
    BT_EV_LOCK_MARK = 90,
    BT_EV_MESSAGE_LITERAL = 91,
    BT_EV_MESSAGE_LITERAL_COLOR = 92,
    BT_EV_MESSAGE_LITERAL_CALLSTACK = 93,
    BT_EV_MESSAGE_LITERAL_COLOR_CALLSTACK = 94,
    BT_EV_GPU_NEW_CONTEXT = 95,
    BT_EV_CALLSTACK_FRAME = 96,
    BT_EV_SYS_TIME_REPORT = 97,
    BT_EV_SYS_POWER_REPORT = 98,
    BT_EV_TID_TO_PID = 99,
    BT_EV_HW_SAMPLE_CPU_CYCLE = 100,
    BT_EV_HW_SAMPLE_INSTRUCTION_RETIRED = 101,
    BT_EV_HW_SAMPLE_CACHE_REFERENCE = 102,
    BT_EV_HW_SAMPLE_CACHE_MISS = 103,
    BT_EV_HW_SAMPLE_BRANCH_RETIRED = 104,
    BT_EV_HW_SAMPLE_BRANCH_MISS = 105,
    BT_EV_PLOT_CONFIG = 106,
    BT_EV_PARAM_SETUP = 107,
    BT_EV_ACK_SERVER_QUERY_NOOP = 108,
    BT_EV_ACK_SOURCE_CODE_NOT_AVAILABLE = 109,
    BT_EV_ACK_SYMBOL_CODE_NOT_AVAILABLE = 110,
    BT_EV_CPU_TOPOLOGY = 111,
    BT_EV_SINGLE_STRING_DATA = 112,
    BT_EV_SECOND_STRING_DATA = 113,
    BT_EV_SINGLE_STRING_DATA8 = 114,
    BT_EV_SECOND_STRING_DATA8 = 115,
    BT_EV_MEM_NAME_PAYLOAD = 116,
    BT_EV_THREAD_GROUP_HINT = 117,
    BT_EV_GPU_ZONE_ANNOTATION = 118,
    BT_EV_STRING_DATA = 119,
    BT_EV_THREAD_NAME = 120,
    BT_EV_PLOT_NAME = 121,
    BT_EV_SOURCE_LOCATION_PAYLOAD = 122,
    BT_EV_CALLSTACK_PAYLOAD = 123,
    BT_EV_CALLSTACK_ALLOC_PAYLOAD = 124,
    BT_EV_FRAME_NAME = 125,
    BT_EV_FRAME_IMAGE_DATA = 126,
    BT_EV_EXTERNAL_NAME = 127,
    BT_EV_EXTERNAL_THREAD_NAME = 128,
    BT_EV_SYMBOL_CODE = 129,
    BT_EV_SOURCE_CODE = 130,
    BT_EV_FIBER_NAME = 131,
    BT_EV_COUNT = 132,
};

/* Total size of each event including its type byte; for the variable-length
 * types (112..131) the fixed part before the length field. */
extern const uint8_t bt_wire_event_size[BT_EV_COUNT];

/* The event's upstream name ("ZoneBegin"), or NULL for a byte >= BT_EV_COUNT. */
const char *bt_wire_event_name(unsigned type);

/* Staged strings: 112/113 carry u16 (len - 256), 114/115 carry u8 len. */
#define BT_WIRE_LONG_STRING_MIN 256u
#define BT_WIRE_LONG_STRING_MAX 65535u

/* Whether the event is a keyed string (u64 key, u16 or u32 length, bytes). */
static inline int bt_wire_event_is_keyed(unsigned type)
{
    return type >= BT_EV_STRING_DATA && type < BT_EV_COUNT;
}

/* Whether a keyed string event carries a u32 length instead of a u16. */
static inline int bt_wire_event_has_long_length(unsigned type)
{
    return type == BT_EV_FRAME_IMAGE_DATA || type == BT_EV_SYMBOL_CODE || type == BT_EV_SOURCE_CODE;
}

/* Message meta byte: low nibble source, high nibble severity. */
enum bt_wire_message_source {
    BT_MSG_SOURCE_USER = 0,
    BT_MSG_SOURCE_TRACY = 1,
};
enum bt_wire_message_severity {
    BT_MSG_SEVERITY_TRACE = 0,
    BT_MSG_SEVERITY_DEBUG = 1,
    BT_MSG_SEVERITY_INFO = 2,
    BT_MSG_SEVERITY_WARNING = 3,
    BT_MSG_SEVERITY_ERROR = 4,
    BT_MSG_SEVERITY_FATAL = 5,
};

/* ContextSwitch (58): the switched-out thread's wait reason and state, in
 * the codes Tracy uses for Linux (one per task state letter). */
enum bt_wire_thread_state {
    BT_WAIT_REASON_NONE = 100,        /* Linux gives no reason */
    BT_THREAD_STATE_DISK_SLEEP = 101, /* D */
    BT_THREAD_STATE_IDLE = 102,       /* I */
    BT_THREAD_STATE_RUNNING = 103,    /* R: preempted */
    BT_THREAD_STATE_SLEEPING = 104,   /* S */
    BT_THREAD_STATE_STOPPED = 105,    /* T */
    BT_THREAD_STATE_TRACED = 106,     /* t */
    BT_THREAD_STATE_DEAD = 108,       /* X */
    BT_THREAD_STATE_ZOMBIE = 109,     /* Z */
    BT_THREAD_STATE_PARKED = 110,     /* P */
};

/* Server-to-client query packet: u8 type, u64 ptr, u32 extra (13 bytes). */
#define BT_QUERY_SIZE      13u
#define BT_QUERY_OFF_TYPE  0u
#define BT_QUERY_OFF_PTR   1u
#define BT_QUERY_OFF_EXTRA 9u

enum bt_wire_query {
    BT_QUERY_TERMINATE = 0,
    BT_QUERY_STRING = 1,
    BT_QUERY_THREAD_STRING = 2,
    BT_QUERY_SOURCE_LOCATION = 3,
    BT_QUERY_PLOT_NAME = 4,
    BT_QUERY_FRAME_NAME = 5,
    BT_QUERY_PARAMETER = 6,
    BT_QUERY_FIBER_NAME = 7,
    BT_QUERY_EXTERNAL_NAME = 8,
    BT_QUERY_DISCONNECT = 9,
    BT_QUERY_CALLSTACK_FRAME = 10,
    BT_QUERY_SYMBOL = 11,
    BT_QUERY_SYMBOL_CODE = 12,
    BT_QUERY_SOURCE_CODE = 13,
    BT_QUERY_DATA_TRANSFER = 14,
    BT_QUERY_DATA_TRANSFER_PART = 15,
    BT_QUERY_COUNT = 16,
};

/* Queries of a type below this one are "priority" queries. */
#define BT_QUERY_FIRST_NORMAL BT_QUERY_DISCONNECT

/* Plot formats (PlotConfig). */
enum bt_wire_plot_format {
    BT_PLOT_FORMAT_NUMBER = 0,
    BT_PLOT_FORMAT_MEMORY = 1,
    BT_PLOT_FORMAT_PERCENTAGE = 2,
    BT_PLOT_FORMAT_WATT = 3,
};

/* Lock types (LockAnnounce). */
enum bt_wire_lock_type {
    BT_LOCK_TYPE_LOCKABLE = 0,
    BT_LOCK_TYPE_SHARED_LOCKABLE = 1,
};

/* Payload source location (SourceLocationPayload): u32 color, u32 line,
 * function NUL, file NUL, optional name without NUL. */
#define BT_SRCLOC_PAYLOAD_MIN 10u

/* Little-endian field access at any alignment. */
static inline void bt_wire_put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static inline void bt_wire_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void bt_wire_put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint16_t bt_wire_get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}
static inline uint32_t bt_wire_get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t bt_wire_get_u64(const uint8_t *p)
{
    return (uint64_t)bt_wire_get_u32(p) | ((uint64_t)bt_wire_get_u32(p + 4) << 32);
}

#endif
