/* The profiling hook of Python 3.12 and later: sys.monitoring (PEP 669).
 * C callables (METH_FASTCALL builtins, which the interpreter calls without
 * making a tuple) are registered for a tool id of ours and begin or end the
 * zones of the thread's stack (py_zones.h), as the profile function does
 * before 3.12. The events are the whole process's: every thread is covered. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "py_zones.h"

#if PY_VERSION_HEX >= 0x030C0000

static PyObject *monitoring; /* sys.monitoring */
static PyObject *active;     /* threading._active: ident -> Thread, NULL if none */
static int tool = -1;
static long function_events, line_events;
static int events_on;

/* The thread's name, once threading has registered it: a new thread's first
 * events (threading's bootstrap) come before that, when current_thread()
 * would make a dummy Thread in its place. A thread threading does not know
 * stays unnamed. Reading the name runs Python code (Thread.name), where the
 * main thread takes signals: what a handler raised there (KeyboardInterrupt)
 * is left set, and -1 returned, for the program to get it. */
static int name_if_known(struct stack *s)
{
    if (!active) {
        name_thread(s);
        return 0;
    }
    PyObject *key = PyLong_FromUnsignedLong(PyThread_get_thread_ident());
    PyObject *t = key ? PyDict_GetItemWithError(active, key) : NULL;
    Py_XDECREF(key);
    if (t) {
        Py_INCREF(t);
        PyObject *name = PyObject_GetAttrString(t, "name");
        if (name && PyUnicode_Check(name))
            bt_thread_set_name(PyUnicode_AsUTF8(name));
        Py_XDECREF(name);
        Py_DECREF(t);
        s->named = 1;
    }
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    PyErr_Clear();
    return 0;
}

/* The calling thread's stack; NULL when the thread is not profiled, or with
 * an exception set that the callback returns to the program. */
static inline struct stack *event_stack(void)
{
    struct stack *s = stack();
    if (s && __builtin_expect(!s->named, 0) && name_if_known(s) < 0)
        return NULL;
    return s;
}

/* A callback's result: None, or NULL with the exception event_stack left. */
static inline PyObject *done(void)
{
    return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
}

static int is_c_function(PyObject *f)
{
    return PyCFunction_Check(f) || Py_IS_TYPE(f, &PyMethodDescr_Type);
}

/* PY_START, PY_RESUME, PY_THROW (code, offset[, exception]): a frame begins
 * or a generator or coroutine resumes. */
static PyObject *on_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    struct stack *s = event_stack();
    if (!s)
        return done();
    if (nargs >= 1)
        push(s, function_loc((PyCodeObject *)args[0]), ZONE_CALL);
    Py_RETURN_NONE;
}

/* PY_RETURN, PY_YIELD, PY_UNWIND (code, offset, value or exception). */
static PyObject *on_end(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    (void)args;
    (void)nargs;
    struct stack *s = event_stack();
    if (!s)
        return done();
    end_line(s);
    pop(s);
    Py_RETURN_NONE;
}

/* CALL (code, offset, callable, arg0): every call; a zone for a C function,
 * nothing for anything else (a Python function has its PY_START). The call
 * site is never turned off (DISABLE) after a Python call, cheap as that
 * would make it: the same site may call a C function next (a callback, a
 * duck-typed method), whose zone would then be lost. */
static PyObject *on_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs < 3 || !is_c_function(args[2]))
        Py_RETURN_NONE;
    struct stack *s = event_stack();
    if (!s)
        return done();
    push(s, cfunc_loc(args[2]), ZONE_C);
    Py_RETURN_NONE;
}

/* C_RETURN, C_RAISE (code, offset, callable, arg0): the C function's zone
 * ends. They come for any callable that is not a Python function (a class,
 * a bound method's wrapper too: those opened no zone). */
static PyObject *on_c_end(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs < 3 || !is_c_function(args[2]))
        Py_RETURN_NONE;
    struct stack *s = event_stack();
    if (!s)
        return done();
    pop(s);
    if (__builtin_expect(s->pending != NULL, 0) && is_setprofile_call(args[2]) &&
        set_pending_profile(s) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* LINE (code, line): the line before ends, this one begins. */
static PyObject *on_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    struct stack *s = event_stack();
    if (!s)
        return done();
    if (nargs < 2)
        Py_RETURN_NONE;
    long line = PyLong_AsLong(args[1]);
    if (line < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    end_line(s);
    push(s, code_loc((PyCodeObject *)args[0], (int)line), ZONE_LINE);
    Py_RETURN_NONE;
}

static PyMethodDef callback_defs[] = {
    {"_on_start", (PyCFunction)(void (*)(void))on_start, METH_FASTCALL, NULL},
    {"_on_end", (PyCFunction)(void (*)(void))on_end, METH_FASTCALL, NULL},
    {"_on_call", (PyCFunction)(void (*)(void))on_call, METH_FASTCALL, NULL},
    {"_on_c_end", (PyCFunction)(void (*)(void))on_c_end, METH_FASTCALL, NULL},
    {"_on_line", (PyCFunction)(void (*)(void))on_line, METH_FASTCALL, NULL},
};

/* Each event of sys.monitoring.events we take, its callback in
 * callback_defs, and whether it is -l's. */
static const struct {
    const char *event;
    int callback;
    int line;
} events[] = {
    {"PY_START", 0, 0}, {"PY_RESUME", 0, 0}, {"PY_THROW", 0, 0}, {"PY_RETURN", 1, 0},
    {"PY_YIELD", 1, 0}, {"PY_UNWIND", 1, 0}, {"CALL", 2, 0},     {"C_RETURN", 3, 0},
    {"C_RAISE", 3, 0},  {"LINE", 4, 1},
};

/* The tool ids, those no standard tool claims first (3, 4), then
 * OPTIMIZER_ID, and DEBUGGER_ID, COVERAGE_ID and PROFILER_ID (cProfile's)
 * last: a program's own profiler, debugger or coverage tool takes its id
 * while we profile. */
static const int tool_ids[] = {3, 4, 5, 0, 1, 2};

/* Takes the first free tool id; -1 with an exception naming the ids' users
 * when none is. */
static int take_tool_id(void)
{
    PyObject *users = PyList_New(0);
    if (!users)
        return -1;
    for (size_t i = 0; i < sizeof tool_ids / sizeof *tool_ids; i++) {
        PyObject *user = PyObject_CallMethod(monitoring, "get_tool", "i", tool_ids[i]);
        if (!user) {
            Py_DECREF(users);
            return -1;
        }
        if (user == Py_None) {
            Py_DECREF(user);
            Py_DECREF(users);
            PyObject *r =
                PyObject_CallMethod(monitoring, "use_tool_id", "is", tool_ids[i], "boardtrace");
            if (!r)
                return -1;
            Py_DECREF(r);
            return tool_ids[i];
        }
        PyObject *entry = Py_BuildValue("(iO)", tool_ids[i], user);
        Py_DECREF(user);
        if (!entry || PyList_Append(users, entry) < 0) {
            Py_XDECREF(entry);
            Py_DECREF(users);
            return -1;
        }
        Py_DECREF(entry);
    }
    PyErr_Format(PyExc_RuntimeError,
                 "boardtrace: sys.monitoring has no free tool id to profile with: "
                 "every one is taken (id, tool): %R; free one with sys.monitoring.free_tool_id",
                 users);
    Py_DECREF(users);
    return -1;
}

/* The tool id, the callbacks registered and the events' bits, once. */
static int setup(void)
{
    PyObject *sys = PyImport_ImportModule("sys");
    monitoring = sys ? PyObject_GetAttrString(sys, "monitoring") : NULL;
    Py_XDECREF(sys);
    PyObject *bits = monitoring ? PyObject_GetAttrString(monitoring, "events") : NULL;
    if (!bits)
        goto fail;
    PyObject *threading = PyImport_ImportModule("threading");
    active = threading ? PyObject_GetAttrString(threading, "_active") : NULL;
    Py_XDECREF(threading);
    if (!active || !PyDict_Check(active))
        Py_CLEAR(active);
    PyErr_Clear();
    if ((tool = take_tool_id()) < 0)
        goto fail;
    PyObject *callbacks[sizeof callback_defs / sizeof *callback_defs] = {NULL};
    int ok = 1;
    for (size_t i = 0; ok && i < sizeof callback_defs / sizeof *callback_defs; i++)
        ok = (callbacks[i] = PyCFunction_New(&callback_defs[i], NULL)) != NULL;
    for (size_t i = 0; ok && i < sizeof events / sizeof *events; i++) {
        PyObject *bit = PyObject_GetAttrString(bits, events[i].event);
        long b = bit ? PyLong_AsLong(bit) : -1;
        Py_XDECREF(bit);
        PyObject *r = b < 0 ? NULL
                            : PyObject_CallMethod(monitoring, "register_callback", "ilO", tool, b,
                                                  callbacks[events[i].callback]);
        ok = r != NULL;
        Py_XDECREF(r);
        if (events[i].line)
            line_events |= b;
        else
            function_events |= b;
    }
    for (size_t i = 0; i < sizeof callback_defs / sizeof *callback_defs; i++)
        Py_XDECREF(callbacks[i]);
    if (!ok) {
        PyObject *exc = PyErr_GetRaisedException();
        PyObject *r = PyObject_CallMethod(monitoring, "free_tool_id", "i", tool);
        Py_XDECREF(r);
        PyErr_SetRaisedException(exc);
        tool = -1;
        goto fail;
    }
    Py_DECREF(bits);
    return 0;
fail:
    Py_XDECREF(bits);
    Py_CLEAR(monitoring);
    Py_CLEAR(active);
    function_events = line_events = 0;
    return -1;
}

int monitoring_enable(int lines)
{
    if (forked)
        return 0;
    if (tool < 0 && setup() < 0)
        return -1;
    PyObject *r = PyObject_CallMethod(monitoring, "set_events", "il", tool,
                                      function_events | (lines ? line_events : 0));
    Py_XDECREF(r);
    events_on = r != NULL;
    return r ? 0 : -1;
}

int monitoring_on(void)
{
    return events_on;
}

int monitoring_disable(void)
{
    if (tool < 0)
        return 0;
    PyObject *r = PyObject_CallMethod(monitoring, "set_events", "il", tool, 0L);
    Py_XDECREF(r);
    if (r)
        events_on = 0;
    return r ? 0 : -1;
}

#else
/* Before 3.12 the hook is the profile function, in py_profile.c. */
typedef int bt_py_monitoring_unused;
#endif
