/* The .tracy writer's shared parts: the writer state every unit of the
 * writer writes through (over the block stream of btc_tracy_file.h), the
 * helpers below them all (btc_tracy_write_base.c), and the sections the hub
 * (btc_tracy_write.c) hands to units of their own (btc_tracy_write_*.c).
 * Internal to the capture core. */
#ifndef BTC_TRACY_WRITE_PARTS_H
#define BTC_TRACY_WRITE_PARTS_H

#include <stdint.h>

#include "btc_format.h"
#include "btc_model.h"
#include "btc_tracy_file.h"

static inline int64_t welcome_ns(const struct btc_welcome *wl, int64_t ticks)
{
    return btc_ticks_to_ns(wl->timer_mul, wl->init_begin, ticks);
}

struct writer {
    struct btc_model *m;
    struct fw w;
    uint32_t version;
    int64_t unknown;     /* string index of "???" */
    int64_t frame_name;  /* string index of "Frame" */
    uint64_t texts_base; /* string index of the first spooled text */
    /* The head start (btc_tracy_prewrite.h): the thread whose timeline's
     * blocks are ready and how many (0: none, every timeline is encoded
     * here), and the spool of what goes between the string table's filler
     * and that timeline. */
    struct btc_prewrite *pre;
    uint32_t pre_thread;
    uint64_t pre_blocks;
    struct btc_spool detour;
    uint64_t filler_key; /* the filler string's key */
    uint8_t *home_blk;   /* the block being filled before the detour, and its length */
    size_t home_len;
    char *err;
    size_t errlen;
};

/* The helpers, btc_tracy_write_base.c. String index for a wire key, "???"
 * when the client never answered. */
int64_t btcw_key_string(struct writer *wr, uint64_t key);
/* A source location record (35 bytes) of the file. */
void btcw_put_srcloc(struct writer *wr, const struct btc_srcloc *s, int is_payload);
/* Names a spool that could not be read back; returns BTC_ERR_IO. */
int btcw_io_fail(struct writer *wr, const char *what);

/* The thread records (section 23), btc_tracy_write_threads.c; with a head
 * start, what follows the string table is first written aside
 * (btcw_detour_begin) and spliced in by the ready thread's record. */
struct btc_msg_rec;
int btcw_detour_begin(struct writer *wr);
int btcw_threads(struct writer *wr, const struct btc_msg_rec *msgs);

/* A thread's context-switch samples and samples (end of its section 23
 * record), btc_tracy_write_samples.c. */
int btcw_thread_samples(struct writer *wr, uint32_t thread);

/* Context switches, btc_tracy_write_ctxswitch.c: external names (section
 * 11), the external thread table (13), the regions of threads and CPUs (31,
 * 32) and the per-thread CPU figures (34). */
void btcw_external_names(struct writer *wr);
void btcw_external_threads(struct writer *wr);
int btcw_ctxswitch(struct writer *wr);
void btcw_cpu_threads(struct writer *wr);

/* Frame images, btc_tracy_write_images.c: the image of the default set's
 * frame (its index there), -1 none; and section 30. */
int32_t btcw_frame_image(struct writer *wr, uint64_t frame);
int btcw_frame_images(struct writer *wr);

/* Callstacks, btc_tracy_write_callstacks.c: the callstack and frame tables
 * (section 28) and the symbol table with the code-address map (35, 37),
 * the symbol code between them. */
int btcw_callstacks(struct writer *wr);
int btcw_symbols(struct writer *wr);

/* Transferred code, btc_tracy_write_code.c: symbol code (section 36) and
 * the source file cache (39). */
int btcw_symbol_code(struct writer *wr);
int btcw_source_files(struct writer *wr);

/* Hardware samples (section 38), btc_tracy_write_hw.c. */
int btcw_hw_samples(struct writer *wr);

/* Sections (section 7, 0.14.0 only), btc_tracy_write_sections.c. */
int btcw_sections(struct writer *wr);

/* The GPU section (24) and its zone-count hints (18), btc_tracy_write_gpu.c. */
void btcw_gpu_hints(struct writer *wr);
int btcw_gpu(struct writer *wr);

/* Sections written by their own units. */
struct btc_msg_rec;
int btcw_load_messages(struct writer *wr,
                       struct btc_msg_rec **out); /* btc_tracy_write_messages.c */
int btcw_messages(struct writer *wr, const struct btc_msg_rec *v);
int btcw_thread_messages(struct writer *wr, const struct btc_msg_rec *v, uint32_t thread);
int btcw_plots(struct writer *wr); /* btc_tracy_write_plots.c */
int btcw_memory(struct writer *wr);

#endif
