/* The program's callbacks for what the capture asks of it: a parameter the
 * GUI changed (bt_param_register) and a source file the runtime cannot
 * read itself (bt_source_callback_register). Called on the worker thread. */
#ifndef BT_HOOKS_H
#define BT_HOOKS_H

#include <stddef.h>
#include <stdint.h>

/* Calls the parameter callback, if one is registered. */
void bt_hooks_param_changed(uint32_t idx, int32_t value);
/* The source callback's answer for filename (malloc'ed, *len set), or NULL
 * when there is no callback, it has no answer, or the answer is too big
 * for a frame. */
char *bt_hooks_source(const char *filename, size_t *len);

#endif
