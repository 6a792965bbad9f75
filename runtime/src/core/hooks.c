/* The program's callbacks for capture queries (hooks.h): registered from any
 * thread, called from the worker; a mutex keeps a callback and its data
 * together. */
#include "hooks.h"

#include <pthread.h>
#include <stdlib.h>

#include "boardtrace/trace.h"
#include "boardtrace/wire.h"

static pthread_mutex_t hooks_mutex = PTHREAD_MUTEX_INITIALIZER;
static bt_param_callback param_callback;
static void *param_data;
static bt_source_callback source_callback;
static void *source_data;

void bt_param_register(bt_param_callback callback, void *data)
{
    pthread_mutex_lock(&hooks_mutex);
    param_callback = callback;
    param_data = data;
    pthread_mutex_unlock(&hooks_mutex);
}

void bt_source_callback_register(bt_source_callback callback, void *data)
{
    pthread_mutex_lock(&hooks_mutex);
    source_callback = callback;
    source_data = data;
    pthread_mutex_unlock(&hooks_mutex);
}

void bt_hooks_param_changed(uint32_t idx, int32_t value)
{
    pthread_mutex_lock(&hooks_mutex);
    bt_param_callback cb = param_callback;
    void *data = param_data;
    pthread_mutex_unlock(&hooks_mutex);
    if (cb)
        cb(data, idx, value);
}

char *bt_hooks_source(const char *filename, size_t *len)
{
    pthread_mutex_lock(&hooks_mutex);
    bt_source_callback cb = source_callback;
    void *data = source_data;
    pthread_mutex_unlock(&hooks_mutex);
    if (!cb)
        return NULL;
    size_t size = 0;
    char *text = cb(data, filename, &size);
    /* as upstream: an answer must fit in one frame */
    if (text && size >= BT_WIRE_FRAME_SIZE - 16) {
        free(text);
        text = NULL;
    }
    *len = size;
    return text;
}
