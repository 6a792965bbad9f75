/* The worker's answers to the capture's queries, in arrival order: names
 * of strings, threads, plots and frames, source locations, callstack
 * frames and symbols, code transfer, parameters, and the end of the
 * session. Only what this session sent is dereferenced (keys.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "boardtrace/wire.h"
#include "boardtrace/wire_proto.h"
#include "core/hooks.h"
#include "core/runtime.h"
#include "hostinfo.h"
#include "session.h"
#include "symbols/callstack.h"
#include "symbols/code.h"
#include "systrace/sysinfo.h"

/* The name of one of our threads, and its group hint if it was named with one
 * (group_hint may be NULL). */
static void thread_name(uint32_t tid, char *buf, size_t size, int32_t *group_hint)
{
    int found = 0;
    if (group_hint)
        *group_hint = 0;
    pthread_mutex_lock(&bt_rt.mutex);
    for (struct bt_thread_name *n = bt_rt.names; n; n = n->next)
        if (n->tid == tid) {
            snprintf(buf, size, "%s", n->name);
            if (group_hint)
                *group_hint = n->group_hint;
            found = 1;
            break;
        }
    pthread_mutex_unlock(&bt_rt.mutex);
    if (found)
        return;
    if (tid == bt_rt.pid) {
        snprintf(buf, size, "Main thread");
        return;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(buf, (int)size, f)) {
            buf[strcspn(buf, "\n")] = 0;
            found = buf[0] != 0;
        }
        fclose(f);
    }
    if (!found)
        snprintf(buf, size, "%u", tid);
}

static void answer_string(struct session *s, uint8_t type, uint64_t key)
{
    static const char unknown[] = "?";
    const char *text = bt_key_set_has(&s->strings, key) ? (const char *)(uintptr_t)key : unknown;
    bt_enc_keyed(&s->enc, type, key, text, strlen(text));
}

/* A thread that context switches named: ours by the names we know, any
 * other by /proc, with its process. */
static void answer_external_name(struct session *s, uint32_t tid)
{
    char name[256], process[256];
    uint32_t pid;
    bt_sysinfo_external_name(tid, name, sizeof name, process, sizeof process, &pid);
    if (pid == bt_rt.pid) {
        thread_name(tid, name, sizeof name, NULL);
        bt_host_program_name(process, sizeof process);
    }
    if (pid)
        bt_enc_tid_to_pid(&s->enc, tid, pid);
    bt_enc_keyed(&s->enc, BT_EV_EXTERNAL_THREAD_NAME, tid, name, strlen(name));
    bt_enc_keyed(&s->enc, BT_EV_EXTERNAL_NAME, tid, process, strlen(process));
}

static void answer_query(struct session *s, const uint8_t *q)
{
    struct bt_encoder *e = &s->enc;
    uint64_t ptr = bt_wire_get_u64(q + BT_QUERY_OFF_PTR);
    char name[256];
    switch (bt_proto_query_up(s->proto, q[BT_QUERY_OFF_TYPE])) {
    case BT_QUERY_TERMINATE:
        s->stop = 1;
        break;
    case BT_QUERY_STRING:
        answer_string(s, BT_EV_STRING_DATA, ptr);
        break;
    case BT_QUERY_THREAD_STRING: {
        int32_t group_hint;
        thread_name((uint32_t)ptr, name, sizeof(name), &group_hint);
        bt_enc_keyed(e, BT_EV_THREAD_NAME, ptr, name, strlen(name));
        if (group_hint != 0)
            bt_enc_thread_group_hint(e, (uint32_t)ptr, group_hint);
        break;
    }
    case BT_QUERY_SOURCE_LOCATION: {
        /* keys are the addresses of static struct bt_srcloc objects; even an
         * unknown one gets an answer, as answers are matched in order */
        if (!bt_key_set_has(&s->srclocs, ptr)) {
            bt_enc_source_location(e, 0, 0, 0, 0, 0);
            break;
        }
        const struct bt_srcloc *loc = (const struct bt_srcloc *)(uintptr_t)ptr;
        bt_key_set_add(&s->strings, (uint64_t)(uintptr_t)loc->name);
        bt_key_set_add(&s->strings, (uint64_t)(uintptr_t)loc->function);
        bt_key_set_add(&s->strings, (uint64_t)(uintptr_t)loc->file);
        bt_code_offer_file(&s->code, loc->file);
        bt_enc_source_location(e, (uint64_t)(uintptr_t)loc->name,
                               (uint64_t)(uintptr_t)loc->function, (uint64_t)(uintptr_t)loc->file,
                               loc->line, loc->color);
        break;
    }
    case BT_QUERY_PLOT_NAME:
        answer_string(s, BT_EV_PLOT_NAME, ptr);
        break;
    case BT_QUERY_FRAME_NAME:
        answer_string(s, BT_EV_FRAME_NAME, ptr);
        break;
    case BT_QUERY_FIBER_NAME:
        answer_string(s, BT_EV_FIBER_NAME, ptr);
        break;
    case BT_QUERY_EXTERNAL_NAME:
        answer_external_name(s, (uint32_t)ptr);
        break;
    case BT_QUERY_DISCONNECT:
        s->disconnect = 1;
        break;
    case BT_QUERY_CALLSTACK_FRAME:
        bt_callstack_answer_frame(e, &s->code, ptr);
        break;
    case BT_QUERY_SYMBOL:
        bt_callstack_answer_symbol(e, &s->code, ptr);
        break;
    case BT_QUERY_SYMBOL_CODE:
        bt_code_symbol_code(&s->code, e, ptr, bt_wire_get_u32(q + BT_QUERY_OFF_EXTRA));
        break;
    case BT_QUERY_SOURCE_CODE:
        bt_code_source_code(&s->code, e, (uint32_t)ptr);
        break;
    case BT_QUERY_DATA_TRANSFER:
        bt_code_data_transfer(&s->code, e, ptr);
        break;
    case BT_QUERY_DATA_TRANSFER_PART:
        bt_code_data_part(&s->code, e, ptr, bt_wire_get_u32(q + BT_QUERY_OFF_EXTRA));
        break;
    case BT_QUERY_PARAMETER:
        bt_hooks_param_changed((uint32_t)(ptr >> 32), (int32_t)(uint32_t)ptr);
        bt_enc_simple(e, BT_EV_ACK_SERVER_QUERY_NOOP);
        break;
    default: /* anything newer: one counted no-op */
        bt_enc_simple(e, BT_EV_ACK_SERVER_QUERY_NOOP);
        break;
    }
}

/* Reads what queries have arrived (waiting up to timeout_ns, or until a
 * producer waiting for room rings the bell, or not at all if one waits
 * already and the last pass took something) and answers them in arrival
 * order, which keeps SourceLocation answers FIFO. */
void bt_session_queries(struct session *s, int64_t timeout_ns, int progress)
{
    struct pollfd p[2] = {{s->fd, POLLIN, 0}, {bt_rt.worker_bell, POLLIN, 0}};
    int ready;
    if (timeout_ns > 0 && bt_worker_nap_begin(progress)) {
        struct timespec ts = {(time_t)(timeout_ns / 1000000000), (long)(timeout_ns % 1000000000)};
        ready = ppoll(p, 2, &ts, NULL);
        bt_worker_nap_end(ready > 0 && (p[1].revents & POLLIN));
    } else {
        ready = poll(p, 1, 0);
    }
    if (ready <= 0 || !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    ssize_t got =
        recv(s->fd, s->queries + s->queries_len, sizeof(s->queries) - s->queries_len, MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        /* A capture that closes with our data still unread in its socket
         * makes the kernel reset the connection instead of ending it. */
        s->lost = got == 0 || errno == ECONNRESET ? -1 : errno;
        s->stop = 1;
        return;
    }
    if (got < 0)
        return;
    s->queries_len += (size_t)got;
    size_t done = 0;
    while (s->queries_len - done >= BT_QUERY_SIZE && !s->stop) {
        answer_query(s, s->queries + done);
        done += BT_QUERY_SIZE;
    }
    memmove(s->queries, s->queries + done, s->queries_len - done);
    s->queries_len -= done;
}
