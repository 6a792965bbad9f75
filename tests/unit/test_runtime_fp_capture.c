/* Callstack capture by frame pointers (BOARDTRACE_UNWIND=fp, runtime/src/
 * symbols/callstack.c): the walk is bounded by the mapping that holds the thread's
 * stack, read from /proc/self/maps, on the main thread (the "[stack]"
 * mapping) and on a thread of its own (an anonymous mapping), and returns
 * into each caller in order. Its own program: the unwind mode is read once. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "symbols/callstack.h"

static __attribute__((noipa)) int capture_leaf(uint64_t *frames)
{
    int n = bt_callstack_capture(frames, 4, 0);
    __asm__ volatile("" ::: "memory"); /* a call, not a tail jump */
    return n;
}

static __attribute__((noipa)) int capture_outer(uint64_t *frames)
{
    int n = capture_leaf(frames);
    __asm__ volatile("" ::: "memory");
    return n;
}

static int inside(uint64_t address, void *function)
{
    uint64_t start = (uint64_t)(uintptr_t)function;
    return address > start && address < start + 256;
}

static void check_chain(void)
{
    uint64_t frames[4];
    int n = capture_outer(frames);
    assert_true(n >= 2);
    assert_true(inside(frames[0], (void *)capture_leaf));
    assert_true(inside(frames[1], (void *)capture_outer));
}

static void the_main_thread_is_walked_through_its_callers(void **state)
{
    (void)state;
    check_chain();
}

static void *on_thread(void *arg)
{
    (void)arg;
    check_chain();
    return NULL;
}

static void a_thread_is_walked_inside_its_own_stack(void **state)
{
    (void)state;
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, on_thread, NULL), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

int main(void)
{
    setenv("BOARDTRACE_UNWIND", "fp", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_main_thread_is_walked_through_its_callers),
        cmocka_unit_test(a_thread_is_walked_inside_its_own_stack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
