/* What the two profiling hooks of boardtrace._boardtrace share (py_zones.c):
 * each thread's stack of open zones, the source locations of code objects
 * and C functions, and the program's own profile function. The hooks: the C
 * profile function before Python 3.12 (py_profile.c), sys.monitoring from
 * 3.12 on (py_monitoring.c); the module (_boardtrace.c) turns them on and
 * off. */
#ifndef BT_PY_ZONES_H
#define BT_PY_ZONES_H

#include <Python.h>

#include <stdint.h>
#include <stdlib.h>

#include <boardtrace/trace.h>

/* ---- source locations, made once and kept for the process's life -------- */

/* A location with its strings in one allocation. */
struct pyloc {
    struct bt_srcloc loc;
    char text[];
};

/* A code object's location: its function (line 0) or that line. */
const struct bt_srcloc *code_loc(PyCodeObject *co, int line);
/* A C function's location, "module.qualname": a builtin function or method,
 * or a method descriptor (list.append as the class has it). */
const struct bt_srcloc *cfunc_loc(PyObject *f);

/* 3.12 renamed the extra slot's calls (the old names are deprecated). */
#if PY_VERSION_HEX >= 0x030C0000
#define code_extra_index PyUnstable_Eval_RequestCodeExtraIndex
#define code_get_extra   PyUnstable_Code_GetExtra
#define code_set_extra   PyUnstable_Code_SetExtra
#else
#define code_extra_index _PyEval_RequestCodeExtraIndex
#define code_get_extra   _PyCode_GetExtra
#define code_set_extra   _PyCode_SetExtra
#endif

/* The code objects' extra slot of ours (-1: none was given). */
extern Py_ssize_t extra_index;

/* A function's location, from the code object's extra slot once made. */
static inline const struct bt_srcloc *function_loc(PyCodeObject *co)
{
    void *loc = NULL;
    if (extra_index >= 0 && code_get_extra((PyObject *)co, extra_index, &loc) == 0 && loc)
        return loc;
    return code_loc(co, 0);
}

/* ---- each thread's open zones -------------------------------------------- */

#define MAX_DEPTH 2048

/* What a zone on the stack stands for. */
enum { ZONE_CALL = 0, ZONE_LINE = 1, ZONE_C = 2 };

struct stack {
    int n;             /* zones open */
    int over;          /* calls deeper than MAX_DEPTH, not recorded */
    uint8_t named;     /* the thread's name was sent */
    uint8_t profiled;  /* before 3.12: profiling was enabled on this thread */
    uint8_t paused;    /* before 3.12: the program's own profiler holds the profile function */
    PyObject *pending; /* a profile function the program gave, set at its call's return */
    bt_zone z[MAX_DEPTH];
    uint8_t kind[MAX_DEPTH]; /* ZONE_* */
};
/* Initial-exec: a load, not a call to __tls_get_addr, on every event. */
extern _Thread_local struct stack *tls __attribute__((tls_model("initial-exec")));

static inline struct stack *stack(void)
{
    if (__builtin_expect(!tls, 0))
        tls = calloc(1, sizeof *tls);
    return tls;
}

static inline void push(struct stack *s, const struct bt_srcloc *loc, int kind)
{
    if (!loc || s->n == MAX_DEPTH) {
        s->over++;
        return;
    }
    s->kind[s->n] = (uint8_t)kind;
    s->z[s->n++] = bt_zone_begin(loc, 0, 1);
}

static inline void pop(struct stack *s)
{
    if (s->over) {
        s->over--;
        return;
    }
    if (s->n) /* a return without its call (profiling began inside it) is none */
        bt_zone_end(s->z[--s->n]);
}

/* The line zone open on top, if any, ends. */
static inline void end_line(struct stack *s)
{
    if (!s->over && s->n && s->kind[s->n - 1] == ZONE_LINE)
        bt_zone_end(s->z[--s->n]);
}

/* Every zone of the stack ends. */
void close_all(struct stack *s);
/* The program's sys.setprofile, and the method definition of ours that
 * stands in for it (_boardtrace.c sets both when the package shares it). */
extern PyObject *real_setprofile;
extern const PyMethodDef *shared_setprofile_def;
/* sys.setprofile(f) while we profile (_boardtrace.c): f is set once that
 * call has returned, at its C return event, so the program's profiler does
 * not get that return, as it would not without us (the profile module
 * fails on it: "Bad return"). */
int is_setprofile_call(PyObject *callable);
/* Sets the pending function: 0, or -1 with an exception set. */
int set_pending_profile(struct stack *s);

/* Set in a child the program forked: it runs untraced (runtime/README.md,
 * fork), and the hooks are taken away from it. */
extern volatile int forked;
/* The calling thread's name, from threading. */
void name_thread(struct stack *s);

/* ---- the profile function hook (py_profile.c), before Python 3.12 --------- */

#if PY_VERSION_HEX < 0x030C0000
/* A program's profiler took the thread's profile function (who: what took
 * it): its open zones end, and the trace says so. */
void pause_thread(struct stack *s, const char *who);
/* The thread's profile function is ours again. */
void resume_thread(struct stack *s);
/* The module's methods _enable([lines]), _disable(), _thread_start (threading's
 * start hook) and _share_lsprof(enable, disable). */
PyObject *profile_enable(PyObject *self, PyObject *args);
PyObject *profile_disable(PyObject *self, PyObject *args);
PyObject *profile_thread_start(PyObject *self, PyObject *args);
PyObject *profile_share_lsprof(PyObject *self, PyObject *args);
/* In a forked child: this thread lets go of the hooks. */
void profile_unhook_forked(void);
#endif

/* ---- the sys.monitoring hook (py_monitoring.c), Python 3.12 and later ---- */

#if PY_VERSION_HEX >= 0x030C0000
/* Turns the events on (LINE too with lines), taking a tool id the first
 * time; -1 with an exception set when none is free. */
int monitoring_enable(int lines);
/* Turns the events off (-1 with an exception set on failure). */
int monitoring_disable(void);
/* Whether the events are on. */
int monitoring_on(void);
#endif

#endif
