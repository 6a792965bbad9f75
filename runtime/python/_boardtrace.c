/* boardtrace._boardtrace: the runtime for Python programs. A profiling hook
 * turns every Python call (and call into a C function) into a zone, with
 * one source location per code object or C function, made on its first
 * call and kept for the process's life (the capture asks for its strings by
 * address at any time); with line profiling, a zone per executed line too.
 * The hook is the C-level profile (and trace) function before Python 3.12
 * (py_profile.c) and sys.monitoring from 3.12 on (py_monitoring.c); the
 * locations and each thread's zones are py_zones.c's. Here: the module, and
 * signposts and the primitives of upstream Tracy's Python bindings, which
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

#if PY_VERSION_HEX >= 0x030C0000
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

static PyObject *setprofile(PyObject *self, PyObject *function);
static PyMethodDef setprofile_def = {"setprofile", setprofile, METH_O,
                                     "sys.setprofile, shared with boardtrace."};

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
    shared_setprofile_def = &setprofile_def;
    return PyCFunction_New(&setprofile_def, NULL);
}

/* os.register_at_fork(after_in_child=...): a forked child runs untraced, so
 * it is not profiled either (its calls would cost and record nothing). */
static PyObject *py_after_fork_child(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    forked = 1;
#if PY_VERSION_HEX < 0x030C0000
    profile_unhook_forked();
#else
    unhook_forked();
#endif
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
#if PY_VERSION_HEX < 0x030C0000
    {"_enable", profile_enable, METH_VARARGS, "Profiles (lines too with True)."},
    {"_disable", profile_disable, METH_NOARGS, "Stops profiling."},
    {"_thread_start", profile_thread_start, METH_VARARGS, "threading.setprofile hook."},
#else
    {"_enable", py_enable, METH_VARARGS, "Profiles (lines too with True)."},
    {"_disable", py_disable, METH_NOARGS, "Stops profiling."},
#endif
    {"_share_setprofile", py_share_setprofile, METH_O,
     "A sys.setprofile that lets the program's profiler run beside ours."},
    {"_after_fork_child", py_after_fork_child, METH_NOARGS,
     "os.register_at_fork's after_in_child: the child is not profiled."},
#if PY_VERSION_HEX < 0x030C0000
    {"_share_lsprof", profile_share_lsprof, METH_VARARGS,
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
