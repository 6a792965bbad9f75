/* Whole runs of events between a protocol's form and the canonical one
 * (see boardtrace/wire_proto.h): what a frame needs beyond converting each
 * event's fixed part, namely the string events, whose length forms differ,
 * and dropping what an older protocol cannot carry without leaving a
 * staged string behind that nothing consumes. */
#include <string.h>

#include "boardtrace/wire_proto.h"

static int is_staged(unsigned canon)
{
    return canon >= BT_EV_SINGLE_STRING_DATA && canon <= BT_EV_SECOND_STRING_DATA8;
}

size_t bt_proto_event_size(const struct bt_proto *p, const uint8_t *buf, size_t left)
{
    unsigned t = p->to_canon[buf[0]];
    if (t == BT_PROTO_NONE)
        return 0;
    size_t n;
    if (is_staged(t)) {
        if (t == BT_EV_SINGLE_STRING_DATA8 || t == BT_EV_SECOND_STRING_DATA8)
            n = left >= 2 ? 2 + (size_t)buf[1] : 0;
        else if (left < 3)
            n = 0;
        else
            n = 3 + (size_t)bt_wire_get_u16(buf + 1) +
                (bt_proto_has(p, BT_PROTO_STRING8) ? BT_WIRE_LONG_STRING_MIN : 0);
    } else if (bt_wire_event_is_keyed(t)) {
        size_t fixed = p->size[buf[0]], lsz = bt_wire_event_has_long_length(t) ? 4 : 2;
        if (left < fixed + lsz)
            return 0;
        n = fixed + lsz + (lsz == 4 ? bt_wire_get_u32(buf + fixed) : bt_wire_get_u16(buf + fixed));
    } else {
        n = p->size[buf[0]];
    }
    return n <= left ? n : 0;
}

size_t bt_proto_up_events(const struct bt_proto *p, const uint8_t *in, size_t n, uint8_t *out,
                          size_t cap, struct bt_proto_fault *fault)
{
    size_t pos = 0, o = 0;
    while (pos < n) {
        const uint8_t *e = in + pos;
        size_t size = bt_proto_event_size(p, e, n - pos);
        fault->offset = pos;
        fault->type = e[0];
        if (size == 0) {
            fault->what = p->to_canon[e[0]] == BT_PROTO_NONE ? "not an event of this protocol"
                                                             : "cut off at the frame's end";
            return (size_t)-1;
        }
        unsigned t = p->to_canon[e[0]];
        if (cap - o < size + BT_PROTO_EVENT_MAX) {
            fault->what = "too large to convert";
            return (size_t)-1;
        }
        if (is_staged(t) && !bt_proto_has(p, BT_PROTO_STRING8)) {
            /* A plain u16 length: 0.14's 8-bit form below 256 bytes, its
             * biased u16 form from there. */
            size_t len = size - 3;
            int single = t == BT_EV_SINGLE_STRING_DATA;
            if (len < BT_WIRE_LONG_STRING_MIN) {
                out[o] = single ? BT_EV_SINGLE_STRING_DATA8 : BT_EV_SECOND_STRING_DATA8;
                out[o + 1] = (uint8_t)len;
                memcpy(out + o + 2, e + 3, len);
                o += 2 + len;
            } else {
                out[o] = (uint8_t)t;
                bt_wire_put_u16(out + o + 1, (uint16_t)(len - BT_WIRE_LONG_STRING_MIN));
                memcpy(out + o + 3, e + 3, len);
                o += 3 + len;
            }
        } else if (is_staged(t) || bt_wire_event_is_keyed(t)) {
            memcpy(out + o, e, size);
            out[o] = (uint8_t)t;
            o += size;
        } else {
            int k = bt_proto_up(p, e, out + o);
            if (k <= 0) {
                fault->what = "holds a value 0.14.0's form cannot (a GPU context above 255)";
                return (size_t)-1;
            }
            o += (size_t)k;
        }
        pos += size;
    }
    return o;
}

/* What leads an event and belongs to it: the staged strings it consumes and
 * the callstack it takes (CallstackPayload, then Callstack or
 * CallstackSerial), sent right before it. */
static int is_lead(unsigned canon)
{
    return is_staged(canon) || canon == BT_EV_CALLSTACK || canon == BT_EV_CALLSTACK_SERIAL ||
           canon == BT_EV_CALLSTACK_ALLOC || canon == BT_EV_CALLSTACK_PAYLOAD ||
           canon == BT_EV_CALLSTACK_ALLOC_PAYLOAD;
}

size_t bt_proto_down_events(const struct bt_proto *p, const uint8_t *in, size_t n, uint8_t *out,
                            size_t cap, uint32_t *dropped)
{
    const struct bt_proto *canon = bt_proto_get(BT_WIRE_PROTOCOL_VERSION);
    size_t pos = 0, o = 0;
    /* Where the leads written since the last other event begin: an event
     * that is dropped takes them with it, or a server would find a staged
     * string or a callstack that nothing consumes. */
    size_t lead_at = (size_t)-1;
    while (pos < n) {
        const uint8_t *e = in + pos;
        size_t size = bt_proto_event_size(canon, e, n - pos);
        if (size == 0 || cap - o < 3 * size + BT_PROTO_EVENT_MAX)
            return (size_t)-1;
        unsigned t = e[0];
        size_t at = o;
        if (is_staged(t)) {
            int single = t == BT_EV_SINGLE_STRING_DATA || t == BT_EV_SINGLE_STRING_DATA8;
            size_t hdr = t <= BT_EV_SECOND_STRING_DATA ? 3 : 2, len = size - hdr;
            if (bt_proto_has(p, BT_PROTO_STRING8)) {
                memcpy(out + o, e, size);
            } else {
                unsigned plain = single ? BT_EV_SINGLE_STRING_DATA : BT_EV_SECOND_STRING_DATA;
                out[o] = p->from_canon[plain];
                bt_wire_put_u16(out + o + 1, (uint16_t)len);
                memcpy(out + o + 3, e + hdr, len);
            }
            o += bt_proto_event_size(p, out + o, cap - o);
        } else if (bt_wire_event_is_keyed(t)) {
            memcpy(out + o, e, size);
            out[o] = p->from_canon[t];
            o += size;
        } else {
            size_t k = bt_proto_down(p, e, out + o);
            if (k == 0) {
                if (dropped)
                    dropped[t]++;
                if (lead_at != (size_t)-1)
                    o = lead_at;
            } else {
                o += k;
            }
        }
        if (is_lead(t))
            lead_at = lead_at == (size_t)-1 ? at : lead_at;
        else
            lead_at = (size_t)-1;
        pos += size;
    }
    return o;
}
