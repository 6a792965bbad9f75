/* What the units of Tracy's C API by its own names (tracy_c.c,
 * tracy_c_gpu.c, tracy_c_lock.c) share: upstream's declarations and the
 * return address and source location casts. Not installed. */
#ifndef BT_TRACY_C_H
#define BT_TRACY_C_H

#ifndef TRACY_ENABLE
#define TRACY_ENABLE 1 /* the declarations, whatever the build's RUNTIME_TRACING */
#endif
#include "tracy/TracyC.h"

#include "emit.h"
#include "lifetime/start.h"

#define SRCLOC(s) ((const struct bt_srcloc *)(const void *)(s))

#endif
