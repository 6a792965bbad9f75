/* What the two profiling hooks share (py_zones.h): the source locations of
 * code objects and C functions, made once and kept for the process's life,
 * each thread's stack of open zones, and the hand-over of the profile
 * function to the program's own profiler. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <boardtrace/trace.h>

#include "py_zones.h"

/* ---- source locations made at run time, kept forever -------------------- */

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

/* ---- the program's own profile function ----------------------------------- */

PyObject *real_setprofile;
const PyMethodDef *shared_setprofile_def;

#if PY_VERSION_HEX < 0x030C0000
/* Before 3.12 a thread has one profile function (py_profile.c): the
 * program's profiler takes it from us. */
void pause_thread(struct stack *s, const char *who)
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
#endif

int is_setprofile_call(PyObject *callable)
{
    return PyCFunction_Check(callable) &&
           ((PyCFunctionObject *)callable)->m_ml == shared_setprofile_def;
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
