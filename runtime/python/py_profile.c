/* The profiling hook before Python 3.12: the C profile function, set per
 * thread (threading's later threads through _thread_start), and the trace
 * function for lines; cProfile's enable and disable are wrapped so that the
 * program's profiler and ours take turns. From 3.12 the hook is
 * sys.monitoring (py_monitoring.c). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <boardtrace/trace.h>

#include "py_zones.h"

#if PY_VERSION_HEX < 0x030C0000
/* Before 3.12: the C profile function, per thread, and the trace function
 * for lines. */
static int lines_on;

static int profile_hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    struct stack *s = stack();
    if (!s)
        return 0;
    switch (what) {
    case PyTrace_CALL: {
        PyCodeObject *co = PyFrame_GetCode(frame);
        push(s, function_loc(co), ZONE_CALL);
        Py_DECREF(co);
        break;
    }
    case PyTrace_RETURN:
        end_line(s);
        pop(s);
        break;
    case PyTrace_C_CALL:
        push(s, cfunc_loc(arg), ZONE_C);
        break;
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION:
        pop(s);
        if (__builtin_expect(s->pending != NULL, 0) && is_setprofile_call(arg))
            return set_pending_profile(s);
        break;
    }
    return 0;
}

static int trace_hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)obj;
    (void)arg;
    if (what != PyTrace_LINE)
        return 0;
    struct stack *s = stack();
    if (!s)
        return 0;
    end_line(s);
    PyCodeObject *co = PyFrame_GetCode(frame);
    push(s, code_loc(co, PyFrame_GetLineNumber(frame)), ZONE_LINE);
    Py_DECREF(co);
    return 0;
}

static void hook_this_thread(void)
{
    struct stack *s = stack();
    if (forked)
        return;
    if (s && !s->named)
        name_thread(s);
    if (s) {
        s->profiled = 1;
        s->paused = 0;
    }
    PyEval_SetProfile(profile_hook, NULL);
    if (lines_on)
        PyEval_SetTrace(trace_hook, NULL);
}

/* ---- the program's own profiler, before 3.12 ------------------------------
 * A thread has one profile function: a program that sets its own (cProfile,
 * profile, sys.setprofile) takes it from us. The calls that set and release
 * it are wrapped (sys.setprofile below, for both hooks): taking it ends the
 * thread's open zones and marks the gap in the trace, releasing it gives it
 * back to us (what the program ran meanwhile is not recorded). Said once on
 * stderr. */
static PyObject *real_lsprof_enable, *real_lsprof_disable;

void resume_thread(struct stack *s)
{
    PyEval_SetProfile(profile_hook, NULL);
    if (s->paused) {
        s->paused = 0;
        bt_message_literal(
            "boardtrace: profiling resumed: the program let go of the profile function",
            BT_SEVERITY_WARNING, 0);
    }
}

/* The calling thread, if we profile it (and may take its profile function
 * back); NULL if not. */
static struct stack *taken_thread(void)
{
    struct stack *s = stack();
    return s && s->profiled && !forked ? s : NULL;
}

/* cProfile.Profile.enable(self, ...) and disable(self): _lsprof sets and
 * clears the profile function without sys.setprofile. */
static PyObject *lsprof_enable(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    struct stack *s = taken_thread();
    if (s)
        pause_thread(s, "cProfile");
    return PyObject_Call(real_lsprof_enable, args, kw);
}

static PyObject *lsprof_disable(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    PyObject *r = PyObject_Call(real_lsprof_disable, args, kw);
    struct stack *s = taken_thread();
    if (r && s)
        resume_thread(s);
    return r;
}

static PyMethodDef lsprof_defs[] = {
    {"enable", (PyCFunction)(void (*)(void))lsprof_enable, METH_VARARGS | METH_KEYWORDS,
     "cProfile.Profile.enable, shared with boardtrace."},
    {"disable", (PyCFunction)(void (*)(void))lsprof_disable, METH_VARARGS | METH_KEYWORDS,
     "cProfile.Profile.disable, shared with boardtrace."},
};

/* _share_lsprof(_lsprof.Profiler.enable, _lsprof.Profiler.disable): the
 * methods to put in cProfile.Profile's. */
PyObject *profile_share_lsprof(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *en, *dis;
    if (!PyArg_ParseTuple(args, "OO", &en, &dis))
        return NULL;
    Py_XSETREF(real_lsprof_enable, Py_NewRef(en));
    Py_XSETREF(real_lsprof_disable, Py_NewRef(dis));
    PyObject *f[2];
    for (int i = 0; i < 2; i++) {
        f[i] = PyCFunction_New(&lsprof_defs[i], NULL);
        if (f[i])
            Py_SETREF(f[i], PyInstanceMethod_New(f[i]));
        if (!f[i]) {
            if (i)
                Py_DECREF(f[0]);
            return NULL;
        }
    }
    return Py_BuildValue("(NN)", f[0], f[1]);
}

/* threading's start hook (threading.setprofile): in each new thread, called
 * once as a Python-level profiler, it puts the C hook in its place and takes
 * the call it was given. */
PyObject *profile_thread_start(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *frame, *event, *arg;
    if (!PyArg_ParseTuple(args, "OOO", &frame, &event, &arg))
        return NULL;
    if (forked) {
        PyEval_SetProfile(NULL, NULL);
        Py_RETURN_NONE;
    }
    hook_this_thread();
    if (PyFrame_Check(frame) && PyUnicode_Check(event) &&
        PyUnicode_CompareWithASCIIString(event, "call") == 0)
        profile_hook(NULL, (PyFrameObject *)frame, PyTrace_CALL, arg);
    Py_RETURN_NONE;
}

PyObject *profile_enable(PyObject *self, PyObject *args)
{
    (void)self;
    int lines = 0;
    if (!PyArg_ParseTuple(args, "|p", &lines))
        return NULL;
    lines_on = lines;
    hook_this_thread();
    Py_RETURN_NONE;
}

/* Stops profiling in the calling thread, closing what it has open. */
PyObject *profile_disable(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    PyEval_SetProfile(NULL, NULL);
    if (lines_on)
        PyEval_SetTrace(NULL, NULL);
    struct stack *s = stack();
    if (s) {
        close_all(s);
        s->profiled = 0;
        s->paused = 0;
    }
    Py_RETURN_NONE;
}

/* In a child the program forked: this thread (the only one) lets go of the
 * hooks. */
void profile_unhook_forked(void)
{
    PyEval_SetProfile(NULL, NULL);
    if (lines_on)
        PyEval_SetTrace(NULL, NULL);
}
#else
typedef int bt_py_profile_unused;
#endif
