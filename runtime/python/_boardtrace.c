/* boardtrace._boardtrace: the runtime for Python programs. A profiling hook
 * turns every Python call (and call into a C function) into a zone, with
 * one source location per code object or C function, made on its first
 * call and kept for the process's life (the capture asks for its strings by
 * address at any time); with line profiling, a zone per executed line too.
 * The hook is the C-level profile (and trace) function before Python 3.12,
 * here, and sys.monitoring from 3.12 on (py_monitoring.c). Besides:
 * signposts, and the primitives of upstream Tracy's Python bindings, which
 * tracy_client/ wraps under upstream's names. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <boardtrace/trace.h>

#include "py_zones.h"
#include "lifetime/start.h"

/* ---- source locations made at run time, kept forever -------------------- */

/* A location with its strings in one allocation. */
struct pyloc {
    struct bt_srcloc loc;
    char text[];
};

static const struct bt_srcloc *make_loc(const char *function, const char *file, uint32_t line)
{
    size_t f = strlen(function) + 1, p = strlen(file) + 1;
    struct pyloc *l = malloc(sizeof *l + f + p);
    if (!l)
        return NULL;
    memcpy(l->text, function, f);
    memcpy(l->text + f, file, p);
    l->loc = (struct bt_srcloc){NULL, l->text, l->text + f, line, 0};
    return &l->loc;
}

/* Locations by a two-word key: (code object, 0) for a function, (code
 * object, line) for a line, (method definition, 0) for a C function.
 * Open addressing; the GIL serialises every access. */
struct slot {
    const void *a;
    uintptr_t b;
    const struct bt_srcloc *loc;
};
static struct slot *table;
static size_t table_cap, table_len;

static size_t slot_of(const void *a, uintptr_t b)
{
    uintptr_t h = ((uintptr_t)a >> 4) * 0x9E3779B97F4A7C15ull ^ b * 0xC2B2AE3D27D4EB4Full;
    size_t i = (size_t)(h ^ (h >> 29)) & (table_cap - 1);
    while (table[i].a && !(table[i].a == a && table[i].b == b))
        i = (i + 1) & (table_cap - 1);
    return i;
}

static const struct bt_srcloc *find_loc(const void *a, uintptr_t b)
{
    if (!table_cap)
        return NULL;
    struct slot *s = &table[slot_of(a, b)];
    return s->a ? s->loc : NULL;
}

static void keep_loc(const void *a, uintptr_t b, const struct bt_srcloc *loc)
{
    if ((table_len + 1) * 2 > table_cap) {
        size_t old_cap = table_cap;
        struct slot *old = table;
        size_t cap = old_cap ? old_cap * 2 : 1024;
        struct slot *t = calloc(cap, sizeof *t);
        if (!t)
            return; /* not kept: made again next time, still correct */
        table = t;
        table_cap = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].a)
                table[slot_of(old[i].a, old[i].b)] = old[i];
        free(old);
    }
    struct slot *s = &table[slot_of(a, b)];
    if (!s->a)
        table_len++;
    *s = (struct slot){a, b, loc};
}

/* The code objects' extra slot of ours (-1: none was given): a function's
 * location hangs there, found in a few loads instead of a hash lookup. The
 * location outlives the code object, so the slot frees nothing. */
Py_ssize_t extra_index = -1;

/* A code object's location: its qualified name, file and first line (line
 * 0), or that line. The code object stays alive as the key: a reference is
 * kept. */
const struct bt_srcloc *code_loc(PyCodeObject *co, int line)
{
    const struct bt_srcloc *loc = find_loc(co, (uintptr_t)line);
    if (loc)
        return loc;
    PyObject *name = PyObject_GetAttrString((PyObject *)co, "co_qualname");
    if (!name) {
        PyErr_Clear();
        name = PyObject_GetAttrString((PyObject *)co, "co_name");
    }
    const char *n = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    const char *f = PyUnicode_Check(co->co_filename) ? PyUnicode_AsUTF8(co->co_filename) : NULL;
    PyErr_Clear();
    loc = make_loc(n ? n : "?", f ? f : "?", line ? (uint32_t)line : (uint32_t)co->co_firstlineno);
    Py_XDECREF(name);
    if (loc) {
        Py_INCREF(co);
        keep_loc(co, (uintptr_t)line, loc);
        if (!line && extra_index >= 0 && code_set_extra((PyObject *)co, extra_index, (void *)loc))
            PyErr_Clear();
    }
    return loc;
}

/* A C function's location, "module.qualname" (builtins.sorted,
 * list.append), keyed by its method definition: a bound method is a new
 * object at every call, its definition is not; a method descriptor (what
 * sys.monitoring's CALL gives for obj.method()) has the same one. */
const struct bt_srcloc *cfunc_loc(PyObject *f)
{
    const void *key = PyCFunction_Check(f) ? (const void *)((PyCFunctionObject *)f)->m_ml
                      : Py_IS_TYPE(f, &PyMethodDescr_Type)
                          ? (const void *)((PyMethodDescrObject *)f)->d_method
                          : (const void *)f;
    const struct bt_srcloc *loc = find_loc(key, 0);
    if (loc)
        return loc;
    PyObject *qual = PyObject_GetAttrString(f, "__qualname__");
    PyObject *mod = PyObject_GetAttrString(f, "__module__");
    PyErr_Clear();
    const char *q = qual && PyUnicode_Check(qual) ? PyUnicode_AsUTF8(qual) : "?";
    const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
    char buf[512];
    snprintf(buf, sizeof buf, "%s%s%s", m ? m : "", m ? "." : "", q ? q : "?");
    loc = make_loc(buf, "<built-in>", 0);
    Py_XDECREF(qual);
    Py_XDECREF(mod);
    if (loc) {
        if (!PyCFunction_Check(f) && !Py_IS_TYPE(f, &PyMethodDescr_Type))
            Py_INCREF(f);
        keep_loc(key, 0, loc);
    }
    return loc;
}

/* ---- each thread's open zones -------------------------------------------- */

_Thread_local struct stack *tls __attribute__((tls_model("initial-exec")));
volatile int forked;

void close_all(struct stack *s)
{
    while (s->n)
        bt_zone_end(s->z[--s->n]);
    s->over = 0;
}

/* The thread's name, from threading, once per thread. */
void name_thread(struct stack *s)
{
    s->named = 1;
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *t = threading ? PyObject_CallMethod(threading, "current_thread", NULL) : NULL;
    PyObject *name = t ? PyObject_GetAttrString(t, "name") : NULL;
    if (name && PyUnicode_Check(name))
        bt_thread_set_name(PyUnicode_AsUTF8(name));
    Py_XDECREF(name);
    Py_XDECREF(t);
    Py_XDECREF(threading);
    PyErr_Clear();
}

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

static void pause_thread(struct stack *s, const char *who)
{
    static int said;
    if (s->paused)
        return;
    close_all(s);
    s->paused = 1;
    char text[256];
    int n = snprintf(text, sizeof text,
                     "boardtrace: profiling paused: %s took the profile function", who);
    bt_message(text, (size_t)n, BT_SEVERITY_WARNING, 0);
    if (!said) {
        said = 1;
        PySys_WriteStderr("boardtrace: %s took Python's profile function (Python 3.11 has one per "
                          "thread): this thread's calls are not recorded until it lets go of it, "
                          "and the trace marks the gap\n",
                          who);
    }
}

static void resume_thread(struct stack *s)
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
static PyObject *py_share_lsprof(PyObject *self, PyObject *args)
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
static PyObject *thread_start(PyObject *self, PyObject *args)
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

static PyObject *py_enable(PyObject *self, PyObject *args)
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
static PyObject *py_disable(PyObject *self, PyObject *args)
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
static void unhook_forked(void)
{
    PyEval_SetProfile(NULL, NULL);
    if (lines_on)
        PyEval_SetTrace(NULL, NULL);
}
#else
/* From 3.12: sys.monitoring, whose events are the whole process's (every
 * thread's), turned on and off here. */
static PyObject *py_enable(PyObject *self, PyObject *args)
{
    (void)self;
    int lines = 0;
    if (!PyArg_ParseTuple(args, "|p", &lines))
        return NULL;
    struct stack *s = stack();
    if (s && !s->named)
        name_thread(s);
    if (monitoring_enable(lines) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Stops profiling (every thread), closing what the calling thread has
 * open. */
static PyObject *py_disable(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    int rc = monitoring_disable();
    struct stack *s = stack();
    if (s)
        close_all(s);
    if (rc < 0)
        return NULL;
    Py_RETURN_NONE;
}

static void unhook_forked(void)
{
    if (monitoring_disable() < 0)
        PyErr_Clear();
}

/* ---- os.fork without the runtime's threads counted, 3.12 and later --------
 * os.fork warns (DeprecationWarning) when the process has more than one
 * thread, counting the kernel's; the runtime's worker is one, which plain
 * python would not have. The runtime's own threads, counted when the
 * program began, are left out: with no thread of the program's besides the
 * caller, the fork is os.fork's without the warning; otherwise os.fork's
 * own, warning as it would. */
static PyObject *real_fork;
static long own_threads = -1;

/* The process's threads, from /proc/self/stat (field 20); -1 unknown. */
static long process_threads(void)
{
    char buf[1024];
    FILE *f = fopen("/proc/self/stat", "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the command's name may hold anything */
    long threads = -1;
    /* after ") ": state, then fields 4..19, then num_threads (20) */
    if (p &&
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %ld",
               &threads) != 1)
        threads = -1;
    return threads;
}

static PyObject *py_fork(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    long n = process_threads();
    if (forked || own_threads < 0 || n < 0 || n - own_threads > 1)
        return PyObject_CallNoArgs(real_fork);
    if (PySys_Audit("os.fork", NULL) < 0)
        return NULL;
    PyOS_BeforeFork();
    pid_t pid = fork();
    int err = errno;
    if (pid == 0)
        PyOS_AfterFork_Child();
    else
        PyOS_AfterFork_Parent();
    if (pid < 0) {
        errno = err;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    return PyLong_FromLong((long)pid);
}

static PyMethodDef fork_def = {"fork", py_fork, METH_NOARGS,
                               "os.fork, the runtime's threads not counted as the program's."};

/* _own_fork(os.fork): counts the runtime's threads (the program has none
 * yet) and returns the os.fork to put in its place. */
static PyObject *py_own_fork(PyObject *self, PyObject *fork_function)
{
    (void)self;
    long n = process_threads();
    own_threads = n > 0 ? n - 1 : -1;
    Py_XSETREF(real_fork, Py_NewRef(fork_function));
    return PyCFunction_New(&fork_def, NULL);
}
#endif

/* ---- sys.setprofile, shared with the program ------------------------------ */

static PyObject *real_setprofile;

static PyObject *setprofile(PyObject *self, PyObject *function);
static PyMethodDef setprofile_def = {"setprofile", setprofile, METH_O,
                                     "sys.setprofile, shared with boardtrace."};

int is_setprofile_call(PyObject *callable)
{
    return PyCFunction_Check(callable) && ((PyCFunctionObject *)callable)->m_ml == &setprofile_def;
}

int set_pending_profile(struct stack *s)
{
    PyObject *f = s->pending;
    s->pending = NULL;
#if PY_VERSION_HEX < 0x030C0000
    pause_thread(s, "sys.setprofile()");
#endif
    PyObject *r = PyObject_CallOneArg(real_setprofile, f);
    Py_DECREF(f);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject *setprofile(PyObject *self, PyObject *function)
{
    (void)self;
    struct stack *s = stack();
#if PY_VERSION_HEX < 0x030C0000
    /* Before 3.12 the program's function takes ours; None gives it back. */
    if (s && s->profiled && !forked && function == Py_None) {
        resume_thread(s);
        Py_RETURN_NONE;
    }
    int hooked = s && s->profiled && !s->paused && !forked;
#else
    /* From 3.12 both run: sys.setprofile is a sys.monitoring tool of its own. */
    int hooked = s && monitoring_on() && !forked;
#endif
    if (hooked && function != Py_None) {
        Py_XSETREF(s->pending, Py_NewRef(function));
        Py_RETURN_NONE;
    }
    return PyObject_CallOneArg(real_setprofile, function);
}

/* _share_setprofile(sys.setprofile): the sys.setprofile to put in its
 * place. */
static PyObject *py_share_setprofile(PyObject *self, PyObject *original)
{
    (void)self;
    Py_XSETREF(real_setprofile, Py_NewRef(original));
    return PyCFunction_New(&setprofile_def, NULL);
}

/* os.register_at_fork(after_in_child=...): a forked child runs untraced, so
 * it is not profiled either (its calls would cost and record nothing). */
static PyObject *py_after_fork_child(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    forked = 1;
    unhook_forked();
    struct stack *s = stack();
    if (s)
        close_all(s);
    Py_RETURN_NONE;
}

/* The interpreter's last step (Py_AtExit: after its finalization, every
 * Python code run, before exit and before a death by SIGINT after an
 * uncaught KeyboardInterrupt, which runs no atexit of C's): the runtime
 * sends what it holds and, with TRACY_NO_EXIT, waits for the capture. */
static void finish_at_exit(void)
{
    bt_runtime_stop();
}

static PyObject *py_connected(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return PyBool_FromLong(bt_is_connected());
}

/* ---- signposts and upstream's primitives ---------------------------------- */

/* A marker: a message "HEADER" or "HEADER: MESSAGE", and a frame of the
 * "signposts" set, so the GUI steps from one to the next. */
static PyObject *py_signpost(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *names[] = {"header", "message", NULL};
    const char *header, *message = NULL;
    Py_ssize_t hl, ml = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s#|z#", names, &header, &hl, &message, &ml))
        return NULL;
    PyObject *text = message ? PyUnicode_FromFormat("%s: %s", header, message)
                             : PyUnicode_FromStringAndSize(header, hl);
    if (!text)
        return NULL;
    Py_ssize_t n;
    const char *t = PyUnicode_AsUTF8AndSize(text, &n);
    if (t)
        bt_message(t, (size_t)n, BT_SEVERITY_INFO, 0);
    Py_DECREF(text);
    bt_frame_mark("signposts");
    Py_RETURN_NONE;
}

/* Names given to frame marks, plots and pools must outlive the program's
 * tracing: kept here for good, the same name once, and known by an id. */
static PyObject *names; /* str -> int id */
static const char **name_ptrs;
static size_t name_count;

static size_t name_id(PyObject *name)
{
    PyObject *id = PyDict_GetItemWithError(names, name);
    if (id)
        return PyLong_AsSize_t(id);
    if (PyErr_Occurred())
        return 0;
    const char *s = PyUnicode_AsUTF8(name);
    const char **grown = s ? realloc(name_ptrs, (name_count + 2) * sizeof *grown) : NULL;
    char *copy = s ? strdup(s) : NULL;
    if (!grown || !copy) {
        free(copy);
        PyErr_NoMemory();
        return 0;
    }
    name_ptrs = grown;
    name_ptrs[++name_count] = copy;
    PyObject *v = PyLong_FromSize_t(name_count);
    if (!v || PyDict_SetItem(names, name, v) < 0) {
        Py_XDECREF(v);
        return 0;
    }
    Py_DECREF(v);
    return name_count;
}

static const char *name_of(size_t id)
{
    return id >= 1 && id <= name_count ? name_ptrs[id] : NULL;
}

static PyObject *py_is_enabled(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    Py_RETURN_TRUE;
}

static PyObject *py_thread_name(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    bt_thread_set_name(name);
    struct stack *s = stack();
    if (s)
        s->named = 1;
    Py_RETURN_NONE;
}

static PyObject *py_program_name(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    if (!PyArg_ParseTuple(args, "s", &name))
        return NULL;
    bt_program_set_name(name);
    Py_RETURN_TRUE;
}

static PyObject *py_app_info(PyObject *self, PyObject *args)
{
    (void)self;
    const char *text;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "s#", &text, &n))
        return NULL;
    if (n >= 65535)
        Py_RETURN_FALSE;
    bt_app_info(text, (size_t)n);
    Py_RETURN_TRUE;
}

static PyObject *py_message(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwnames[] = {"message", "color", NULL};
    const char *text;
    Py_ssize_t n;
    PyObject *color = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s#|O", kwnames, &text, &n, &color))
        return NULL;
    if (n >= 65535)
        Py_RETURN_FALSE;
    if (color == Py_None) {
        bt_message(text, (size_t)n, BT_SEVERITY_INFO, 0);
    } else {
        unsigned long c = PyLong_AsUnsignedLongMask(color);
        if (PyErr_Occurred())
            return NULL;
        bt_message_color(text, (size_t)n, (uint32_t)c, BT_SEVERITY_INFO, 0);
    }
    Py_RETURN_TRUE;
}

static PyObject *py_frame_mark(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    bt_frame_mark(NULL);
    Py_RETURN_NONE;
}

static PyObject *py_frame_mark_start(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *name;
    if (!PyArg_ParseTuple(args, "U", &name))
        return NULL;
    size_t id = name_id(name);
    if (!id)
        return NULL;
    bt_frame_mark_start(name_of(id));
    return PyLong_FromSize_t(id);
}

static PyObject *py_frame_mark_end(PyObject *self, PyObject *args)
{
    (void)self;
    Py_ssize_t id;
    if (!PyArg_ParseTuple(args, "n", &id))
        return NULL;
    const char *name = name_of((size_t)id);
    if (!name)
        Py_RETURN_FALSE;
    bt_frame_mark_end(name);
    Py_RETURN_TRUE;
}

static PyObject *py_frame_image(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwnames[] = {"data", "width", "height", "offset", "flip", NULL};
    Py_buffer data;
    unsigned short w, h;
    unsigned char offset = 0;
    int flip = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*HH|bp", kwnames, &data, &w, &h, &offset, &flip))
        return NULL;
    int ok = w % 4 == 0 && h % 4 == 0 && data.len >= (Py_ssize_t)w * h * 4;
    if (ok)
        bt_frame_image(data.buf, w, h, offset, flip);
    PyBuffer_Release(&data);
    return PyBool_FromLong(ok);
}

static PyObject *py_plot_config(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *name;
    int type, step, fill;
    unsigned long color = 0;
    if (!PyArg_ParseTuple(args, "Uipp|k", &name, &type, &step, &fill, &color))
        return NULL;
    size_t id = name_id(name);
    if (!id)
        return NULL;
    bt_plot_config(name_of(id), (enum bt_plot_format)type, step, fill, (uint32_t)color);
    return PyLong_FromSize_t(id);
}

/* plot(id, value): an int plots as an integer, anything else as a double. */
static PyObject *py_plot(PyObject *self, PyObject *args)
{
    (void)self;
    Py_ssize_t id;
    PyObject *value;
    if (!PyArg_ParseTuple(args, "nO", &id, &value))
        return NULL;
    const char *name = name_of((size_t)id);
    if (!name)
        Py_RETURN_FALSE;
    if (PyLong_Check(value)) {
        long long v = PyLong_AsLongLong(value);
        if (PyErr_Occurred())
            return NULL;
        bt_plot_int(name, v);
    } else {
        double v = PyFloat_AsDouble(value);
        if (PyErr_Occurred())
            return NULL;
        bt_plot_double(name, v);
    }
    Py_RETURN_TRUE;
}

/* alloc(ptr or object, size, name=None, id=None, depth=None): an object
 * stands for its id(); a pool is named by name, or by an id from an earlier
 * call. Returns the pool's id (0: the default pool). */
static PyObject *py_alloc(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwnames[] = {"ptr", "size", "name", "id", "depth", NULL};
    PyObject *ptr, *name = Py_None, *id = Py_None, *depth = Py_None;
    Py_ssize_t size;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "On|OOO", kwnames, &ptr, &size, &name, &id, &depth))
        return NULL;
    void *p = PyLong_Check(ptr) ? PyLong_AsVoidPtr(ptr) : (void *)ptr;
    size_t pool = 0;
    if (name != Py_None && !(pool = name_id(name)))
        return NULL;
    if (id != Py_None)
        pool = PyLong_AsSize_t(id);
    int d = depth == Py_None ? 0 : (int)PyLong_AsLong(depth);
    if (PyErr_Occurred())
        return NULL;
    bt_mem_alloc(p, (size_t)size, name_of(pool), d);
    return PyLong_FromSize_t(pool);
}

static PyObject *py_free(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwnames[] = {"ptr", "id", "depth", NULL};
    PyObject *ptr, *id = Py_None, *depth = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO", kwnames, &ptr, &id, &depth))
        return NULL;
    void *p = PyLong_Check(ptr) ? PyLong_AsVoidPtr(ptr) : (void *)ptr;
    size_t pool = id == Py_None ? 0 : PyLong_AsSize_t(id);
    int d = depth == Py_None ? 0 : (int)PyLong_AsLong(depth);
    if (PyErr_Occurred())
        return NULL;
    bt_mem_free(p, name_of(pool), d);
    Py_RETURN_TRUE;
}

/* ---- _ScopedZone: a zone entered and exited by hand ----------------------- */

typedef struct {
    PyObject_HEAD const struct bt_srcloc *loc;
    int depth, active;
    bt_zone zone;
    int entered;
} ScopedZone;

static int zone_init(ScopedZone *z, PyObject *args, PyObject *kw)
{
    static char *kwnames[] = {"name", "color", "depth", "active", "function", "file", "line", NULL};
    const char *name = NULL, *function, *file;
    unsigned long color = 0;
    PyObject *depth = Py_None;
    int active = 1;
    unsigned int line;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "zkOpssI", kwnames, &name, &color, &depth, &active,
                                     &function, &file, &line))
        return -1;
    /* One location per place and name, made once: a zone in a loop makes
     * no new one at each pass. */
    PyObject *key = Py_BuildValue("(zkssI)", name, color, function, file, line);
    if (!key)
        return -1;
    static PyObject *locs;
    if (!locs && !(locs = PyDict_New())) {
        Py_DECREF(key);
        return -1;
    }
    PyObject *cap = PyDict_GetItemWithError(locs, key);
    if (cap) {
        z->loc = PyCapsule_GetPointer(cap, NULL);
    } else if (!PyErr_Occurred()) {
        struct pyloc *l = malloc(sizeof *l + (name ? strlen(name) + 1 : 0) + strlen(function) + 1 +
                                 strlen(file) + 1);
        if (!l) {
            Py_DECREF(key);
            PyErr_NoMemory();
            return -1;
        }
        char *t = l->text;
        const char *n = NULL;
        if (name) {
            n = strcpy(t, name);
            t += strlen(name) + 1;
        }
        const char *fn = strcpy(t, function);
        t += strlen(function) + 1;
        const char *fl = strcpy(t, file);
        l->loc = (struct bt_srcloc){n, fn, fl, line, (uint32_t)color};
        z->loc = &l->loc;
        cap = PyCapsule_New(l, NULL, NULL);
        if (!cap || PyDict_SetItem(locs, key, cap) < 0) {
            Py_XDECREF(cap);
            Py_DECREF(key);
            return -1;
        }
        Py_DECREF(cap);
    }
    Py_DECREF(key);
    if (PyErr_Occurred())
        return -1;
    z->depth = depth == Py_None ? 0 : (int)PyLong_AsLong(depth);
    z->active = active;
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *zone_enter(ScopedZone *z, PyObject *args)
{
    (void)args;
    z->zone = bt_zone_begin(z->loc, z->depth, z->active);
    z->entered = 1;
    Py_RETURN_NONE;
}

static PyObject *zone_exit(ScopedZone *z, PyObject *args)
{
    (void)args;
    if (z->entered)
        bt_zone_end(z->zone);
    z->entered = 0;
    Py_RETURN_NONE;
}

static PyObject *zone_text(ScopedZone *z, PyObject *arg)
{
    PyObject *s = PyObject_Str(arg);
    if (!s)
        return NULL;
    Py_ssize_t n;
    const char *t = PyUnicode_AsUTF8AndSize(s, &n);
    if (t && z->entered)
        bt_zone_text(z->zone, t, (size_t)n);
    Py_DECREF(s);
    if (!t)
        return NULL;
    Py_RETURN_TRUE;
}

static PyObject *zone_name(ScopedZone *z, PyObject *arg)
{
    Py_ssize_t n;
    const char *t = PyUnicode_AsUTF8AndSize(arg, &n);
    if (!t)
        return NULL;
    if (z->entered)
        bt_zone_name(z->zone, t, (size_t)n);
    Py_RETURN_TRUE;
}

static PyObject *zone_color(ScopedZone *z, PyObject *arg)
{
    unsigned long c = PyLong_AsUnsignedLongMask(arg);
    if (PyErr_Occurred())
        return NULL;
    if (z->entered)
        bt_zone_color(z->zone, (uint32_t)c);
    Py_RETURN_NONE;
}

static PyObject *zone_is_active(ScopedZone *z, void *closure)
{
    (void)closure;
    return PyBool_FromLong(z->entered && z->zone.active);
}

static PyMethodDef zone_methods[] = {
    {"enter", (PyCFunction)zone_enter, METH_NOARGS, "Begins the zone."},
    {"exit", (PyCFunction)zone_exit, METH_NOARGS, "Ends the zone."},
    {"text", (PyCFunction)zone_text, METH_O, "Adds a text to the zone."},
    {"name", (PyCFunction)zone_name, METH_O, "Names the zone."},
    {"_color", (PyCFunction)zone_color, METH_O, "Colors the zone (0xRRGGBB)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef zone_getset[] = {
    {"is_active", (getter)zone_is_active, NULL, "Whether the zone is being recorded.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyTypeObject ScopedZoneType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "boardtrace._boardtrace._ScopedZone",
    .tp_basicsize = sizeof(ScopedZone),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)zone_init,
    .tp_methods = zone_methods,
    .tp_getset = zone_getset,
};

static PyMethodDef methods[] = {
    {"_enable", py_enable, METH_VARARGS, "Profiles (lines too with True)."},
    {"_disable", py_disable, METH_NOARGS, "Stops profiling."},
#if PY_VERSION_HEX < 0x030C0000
    {"_thread_start", thread_start, METH_VARARGS, "threading.setprofile hook."},
#endif
    {"_share_setprofile", py_share_setprofile, METH_O,
     "A sys.setprofile that lets the program's profiler run beside ours."},
    {"_after_fork_child", py_after_fork_child, METH_NOARGS,
     "os.register_at_fork's after_in_child: the child is not profiled."},
#if PY_VERSION_HEX < 0x030C0000
    {"_share_lsprof", py_share_lsprof, METH_VARARGS,
     "Wrappers of cProfile's enable/disable that give the profile function back."},
#else
    {"_own_fork", py_own_fork, METH_O, "An os.fork that does not count the runtime's threads."},
#endif
    {"_connected", py_connected, METH_NOARGS, "Whether a capture is connected."},
    {"signpost", (PyCFunction)(void (*)(void))py_signpost, METH_VARARGS | METH_KEYWORDS,
     "signpost(header, message=None): a marker message and a signposts frame."},
    {"is_enabled", py_is_enabled, METH_NOARGS, "True: tracing is built in."},
    {"thread_name", py_thread_name, METH_VARARGS, "Names the calling thread."},
    {"app_info", py_app_info, METH_VARARGS, "Adds a line to the trace's program information."},
    {"program_name", py_program_name, METH_VARARGS, "The name the broadcast announces."},
    {"message", (PyCFunction)(void (*)(void))py_message, METH_VARARGS | METH_KEYWORDS,
     "message(message, color=None)"},
    {"frame_mark", py_frame_mark, METH_NOARGS, "Marks the end of a frame."},
    {"frame_mark_start", py_frame_mark_start, METH_VARARGS, "Starts a named frame; its id."},
    {"frame_mark_end", py_frame_mark_end, METH_VARARGS, "Ends the named frame of that id."},
    {"frame_image", (PyCFunction)(void (*)(void))py_frame_image, METH_VARARGS | METH_KEYWORDS,
     "frame_image(data, width, height, offset=0, flip=False)"},
    {"_plot_config", py_plot_config, METH_VARARGS, "Configures a plot; its id."},
    {"plot", py_plot, METH_VARARGS, "plot(id, value)"},
    {"alloc", (PyCFunction)(void (*)(void))py_alloc, METH_VARARGS | METH_KEYWORDS,
     "alloc(ptr, size, name=None, id=None, depth=None)"},
    {"free", (PyCFunction)(void (*)(void))py_free, METH_VARARGS | METH_KEYWORDS,
     "free(ptr, id=None, depth=None)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_boardtrace",
                                    "boardtrace's runtime for Python programs", -1, methods};

PyMODINIT_FUNC PyInit__boardtrace(void);
PyMODINIT_FUNC PyInit__boardtrace(void)
{
    if (PyType_Ready(&ScopedZoneType) < 0)
        return NULL;
    names = PyDict_New();
    if (!names)
        return NULL;
    extra_index = code_extra_index(NULL);
    if (Py_AtExit(finish_at_exit) < 0)
        return PyErr_Format(PyExc_RuntimeError, "boardtrace: Py_AtExit has no room left");
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    /* 1: the hook covers every thread (sys.monitoring); 0: the calling
     * thread's, and threading's later ones through _thread_start. */
    if (PyModule_AddIntConstant(m, "_process_wide", PY_VERSION_HEX >= 0x030C0000) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(&ScopedZoneType);
    if (PyModule_AddObject(m, "_ScopedZone", (PyObject *)&ScopedZoneType) < 0) {
        Py_DECREF(&ScopedZoneType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
