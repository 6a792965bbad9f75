/* The mending of the kernel's context switch stream (runtime/src/systrace/switch_mend.c):
 * a whole stream passes as it is; a switch the kernel left out is put back
 * at the earliest time it can have happened; and whatever is lost from a
 * real schedule, what is sent keeps the rules Tracy's server asserts (a
 * thread ends only a run it started, on the CPU it runs on, and never
 * starts one while another is open). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "boardtrace/wire.h"
#include "systrace/switch_mend.h"

static struct bt_switch sw(int64_t time, uint8_t cpu, uint32_t old, uint32_t new)
{
    return (struct bt_switch){time, old, new, cpu, BT_THREAD_STATE_SLEEPING};
}

static unsigned feed(struct bt_switch_mend *m, struct bt_switch s, struct bt_switch *out)
{
    return bt_switch_mend(m, &s, out);
}

static void a_whole_stream_passes_as_it_is(void **state)
{
    (void)state;
    struct bt_switch_mend m;
    assert_int_equal(bt_switch_mend_init(&m), 0);
    struct bt_switch out[BT_MEND_MAX];
    const struct bt_switch in[] = {sw(10, 0, 0, 7), sw(12, 1, 0, 8), sw(20, 0, 7, 0),
                                   sw(25, 1, 8, 7), sw(30, 0, 0, 8), sw(40, 1, 7, 9),
                                   sw(41, 0, 8, 0), sw(50, 1, 9, 0), sw(60, 0, 0, 9)};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        assert_int_equal(bt_switch_mend(&m, &in[i], out), 0);
    assert_int_equal(m.mended, 0);
    bt_switch_mend_free(&m);
}

static void a_switch_left_out_from_idle_is_put_in_at_the_wakeup(void **state)
{
    (void)state;
    struct bt_switch_mend m;
    assert_int_equal(bt_switch_mend_init(&m), 0);
    struct bt_switch out[BT_MEND_MAX];
    assert_int_equal(feed(&m, sw(10, 1, 0, 7), out), 0);
    assert_int_equal(feed(&m, sw(20, 1, 7, 0), out), 0);
    bt_switch_mend_wakeup(&m, 7, 33);
    /* the kernel said nothing of 0 -> 7 */
    assert_int_equal(feed(&m, sw(40, 1, 7, 5), out), 1);
    assert_int_equal(out[0].cpu, 1);
    assert_int_equal(out[0].old_thread, 0);
    assert_int_equal(out[0].new_thread, 7);
    assert_int_equal(out[0].time, 33);
    /* and without a wakeup, as soon as the CPU went idle */
    assert_int_equal(feed(&m, sw(50, 1, 5, 0), out), 0);
    assert_int_equal(feed(&m, sw(70, 1, 5, 0), out), 1);
    assert_int_equal(out[0].old_thread, 0);
    assert_int_equal(out[0].new_thread, 5);
    assert_int_equal(out[0].time, 50);
    assert_int_equal(m.mended, 2);
    bt_switch_mend_free(&m);
}

static void a_thread_seen_starting_on_another_cpu_is_stopped_where_it_was(void **state)
{
    (void)state;
    struct bt_switch_mend m;
    assert_int_equal(bt_switch_mend_init(&m), 0);
    struct bt_switch out[BT_MEND_MAX];
    assert_int_equal(feed(&m, sw(10, 0, 0, 7), out), 0);
    assert_int_equal(feed(&m, sw(15, 1, 0, 8), out), 0);
    /* 7 starts on CPU 1 while CPU 0 still runs it, and CPU 1 ran 8 */
    assert_int_equal(feed(&m, sw(30, 1, 9, 7), out), 2);
    assert_int_equal(out[0].cpu, 1); /* 8 -> 9: 9 must run before it stops */
    assert_int_equal(out[0].old_thread, 8);
    assert_int_equal(out[0].new_thread, 9);
    assert_int_equal(out[0].time, 15);
    assert_int_equal(out[0].state, BT_THREAD_STATE_RUNNING); /* not known */
    assert_int_equal(out[1].cpu, 0);                         /* 7 stops on CPU 0 */
    assert_int_equal(out[1].old_thread, 7);
    assert_int_equal(out[1].new_thread, 0);
    assert_int_equal(out[1].time, 10);
    bt_switch_mend_free(&m);
}

static void a_thread_first_seen_stopping_is_left_alone(void **state)
{
    (void)state;
    struct bt_switch_mend m;
    assert_int_equal(bt_switch_mend_init(&m), 0);
    struct bt_switch out[BT_MEND_MAX];
    /* the stream starts in the middle: 7 was already running */
    assert_int_equal(feed(&m, sw(10, 0, 7, 8), out), 0);
    bt_switch_mend_wakeup(&m, 9, 11); /* a wakeup is not a run */
    assert_int_equal(feed(&m, sw(12, 1, 9, 0), out), 0);
    assert_int_equal(m.mended, 0);
    bt_switch_mend_free(&m);
}

/* ---- a real schedule, with records lost ----------------------------------- */

#define CPUS    4
#define THREADS 40

/* What Tracy's server keeps of each thread and CPU, and asserts. */
struct server {
    int64_t start[THREADS + 1], end[THREADS + 1]; /* end -1: running */
    int seen[THREADS + 1];
    uint32_t cpu_thread[CPUS]; /* the CPU's last started thread */
    int64_t cpu_time[CPUS];
};

static void server_take(struct server *sv, const struct bt_switch *s)
{
    assert_true(s->cpu < CPUS);
    assert_true(s->time >= sv->cpu_time[s->cpu]);
    sv->cpu_time[s->cpu] = s->time;
    if (s->old_thread && sv->seen[s->old_thread]) {
        assert_int_equal(sv->end[s->old_thread], -1); /* it was running */
        assert_true(sv->start[s->old_thread] <= s->time);
        assert_int_equal(sv->cpu_thread[s->cpu], s->old_thread);
        sv->end[s->old_thread] = s->time;
    }
    if (s->new_thread) {
        uint32_t t = s->new_thread;
        if (sv->seen[t]) {
            assert_int_not_equal(sv->end[t], -1); /* not running elsewhere */
            assert_true(sv->end[t] <= s->time);
        }
        sv->seen[t] = 1;
        sv->start[t] = s->time;
        sv->end[t] = -1;
        sv->cpu_thread[s->cpu] = t;
    }
}

static void whatever_is_lost_what_is_sent_keeps_the_servers_rules(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 200; seed++) {
        srand(seed);
        struct bt_switch_mend m;
        assert_int_equal(bt_switch_mend_init(&m), 0);
        struct server sv;
        memset(&sv, 0, sizeof sv);
        uint32_t on_cpu[CPUS] = {0};
        int running[THREADS + 1] = {0};
        int64_t time = 0;
        int lost = 0;
        for (int step = 0; step < 3000; step++) {
            time += 1 + rand() % 50;
            uint8_t cpu = (uint8_t)(rand() % CPUS);
            /* the next thread: idle, or one that runs nowhere */
            uint32_t next = 0;
            if (rand() % 4) {
                uint32_t t = 1 + (uint32_t)(rand() % THREADS);
                if (!running[t])
                    next = t;
            }
            if (next == on_cpu[cpu])
                continue;
            if (rand() % 3 == 0 && next)
                bt_switch_mend_wakeup(&m, next, time - rand() % 5);
            struct bt_switch s = sw(time, cpu, on_cpu[cpu], next);
            running[on_cpu[cpu]] = 0;
            running[next] = next != 0;
            on_cpu[cpu] = next;
            /* the kernel loses some: switches away from idle most */
            if (rand() % 100 < (s.old_thread == 0 ? 40 : 5)) {
                lost++;
                continue;
            }
            struct bt_switch out[BT_MEND_MAX];
            unsigned n = bt_switch_mend(&m, &s, out);
            for (unsigned i = 0; i < n; i++) {
                assert_true(out[i].time <= s.time);
                server_take(&sv, &out[i]);
            }
            server_take(&sv, &s);
        }
        assert_true(lost > 0);
        assert_true(m.mended > 0);
        bt_switch_mend_free(&m);
    }
}

static void the_thread_table_grows_and_forgets_only_stopped_threads(void **state)
{
    (void)state;
    struct bt_switch_mend m;
    assert_int_equal(bt_switch_mend_init(&m), 0);
    struct bt_switch out[BT_MEND_MAX];
    /* 200,000 short-lived threads on CPU 0, while thread 1 runs on CPU 1 */
    assert_int_equal(feed(&m, sw(1, 1, 0, 1), out), 0);
    int64_t t = 2;
    for (uint32_t tid = 2; tid < 200000; tid++) {
        assert_int_equal(feed(&m, sw(t++, 0, 0, tid), out), 0);
        assert_int_equal(feed(&m, sw(t++, 0, tid, 0), out), 0);
    }
    assert_true(m.cap <= 65536);
    /* thread 1 is still known to run on CPU 1 */
    assert_int_equal(feed(&m, sw(t, 0, 0, 1), out), 1);
    assert_int_equal(out[0].cpu, 1);
    assert_int_equal(out[0].old_thread, 1);
    bt_switch_mend_free(&m);
}

static void switches_between_new_threads_survive_the_table_growing(void **state)
{
    (void)state;
    struct bt_switch_mend m;
    assert_int_equal(bt_switch_mend_init(&m), 0);
    struct bt_switch out[BT_MEND_MAX];
    /* CPU 0 goes from each new thread to the next: the table grows while
     * both threads of a switch are being recorded */
    int64_t t = 1;
    uint32_t last = 20000;
    for (uint32_t tid = 1; tid < last; tid++)
        assert_int_equal(feed(&m, sw(t++, 0, tid, tid + 1), out), 0);
    /* every one of them stopped: each runs on CPU 1 with nothing put in */
    for (uint32_t tid = 2; tid < last; tid++) {
        assert_int_equal(feed(&m, sw(t++, 1, 0, tid), out), 0);
        assert_int_equal(feed(&m, sw(t++, 1, tid, 0), out), 0);
    }
    assert_int_equal(m.mended, 0);
    bt_switch_mend_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_whole_stream_passes_as_it_is),
        cmocka_unit_test(a_switch_left_out_from_idle_is_put_in_at_the_wakeup),
        cmocka_unit_test(a_thread_seen_starting_on_another_cpu_is_stopped_where_it_was),
        cmocka_unit_test(a_thread_first_seen_stopping_is_left_alone),
        cmocka_unit_test(whatever_is_lost_what_is_sent_keeps_the_servers_rules),
        cmocka_unit_test(the_thread_table_grows_and_forgets_only_stopped_threads),
        cmocka_unit_test(switches_between_new_threads_survive_the_table_growing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
