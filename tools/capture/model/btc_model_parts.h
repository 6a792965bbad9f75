/* The handlers btc_model_event (the hub, btc_model.c) hands each kind of
 * event to, for the units that have no header of their own; the helpers
 * they all use are in btc_model_base.h. Internal to the capture core. */
#ifndef BTC_MODEL_PARTS_H
#define BTC_MODEL_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "btc_model.h"
#include "btc_model_base.h"

/* The handlers for each kind of event (ev of that kind; err as btcm_fail). */
/* btc_zones.c: a zone's begin with its source location id (the callstack
 * pending on its thread taken when with_callstack), its end, its text,
 * name, colour or value, and SourceLocationPayload. */
int btc_zone_begin(struct btc_model *m, const struct btc_event *ev, int16_t srcloc,
                   int with_callstack, char *err, size_t errlen);
int btc_zone_end(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
int btc_zone_decorate(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
int btc_zone_payload_srcloc(struct btc_model *m, const struct btc_event *ev, char *err,
                            size_t errlen);
/* Closes the zones still open at the end of the capture (end -1). */
int btc_zones_close_open(struct btc_model *m);
/* btc_threads.c: FiberEnter, FiberLeave. */
int btc_threads_fiber(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
/* btc_names.c: the answers SourceLocation and StringData, ThreadName,
 * PlotName, FrameName, FiberName. */
int btc_names_source_location(struct btc_model *m, const struct btc_event *ev, char *err,
                              size_t errlen);
int btc_names_keyed_string(struct btc_model *m, const struct btc_event *ev, char *err,
                           size_t errlen);
/* btc_messages.c: every Message kind but AppInfo. */
int btc_message_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
/* btc_plots.c: PlotData*, PlotConfig, SysPowerReport, SysTimeReport. */
int btc_plot_data(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
int btc_plot_config(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
int btc_plot_sys_power(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
int btc_plot_sys_time(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
/* btc_frames.c: FrameMarkMsg, FrameMarkMsgStart, FrameMarkMsgEnd. */
int btc_frame_mark(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
/* btc_memory.c: MemAlloc*, MemFree*, MemDiscard*. */
int btc_memory_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);
/* btc_locks.c: the Lock* events. */
int btc_lock_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);

#endif
