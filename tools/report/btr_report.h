/* Host reports over a .tracy file: zone statistics per source location (as
 * upstream tracy-csvexport computes them) and Chrome trace-event JSON. The
 * caller opens the output stream; these functions only format. */
#ifndef BTR_REPORT_H
#define BTR_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "btc_tracy.h"

struct btr_zone_stat {
    int16_t srcloc;
    const char *name; /* srcloc name, else its function */
    const char *file;
    uint32_t line;
    uint64_t count; /* zones that ended, with a positive duration */
    int64_t total_ns, min_ns, max_ns;
    double sum_sq;
};

/* What stats reports besides zones, gathered while the zones stream
 * (btr_stats_sections.c ties the parts together): memory per pool
 * (btr_stats_memory.c), lock contention (btr_stats_locks.c), messages
 * (btr_stats_messages.c), plots (btr_stats_plots.c) and frame times
 * (btr_stats_frames.c). */
#define BTR_FIRST_ERRORS 5
struct btr_pool_stat {
    uint64_t allocs, frees, leaks;
    uint64_t live, peak, leaked_bytes; /* bytes */
};
struct btr_leak_site { /* leaked allocations of a pool by callstack (0 none) */
    uint32_t pool, callstack;
    uint64_t count, bytes;
};
struct btr_pending_free {
    int64_t time;
    uint64_t size;
};
/* Frame times of a set: exact (every duration kept, sorted at the end) up
 * to BTR_FRAMES_EXACT frames, then a histogram of 1 %-wide buckets. */
#define BTR_FRAMES_EXACT  (1u << 20)
#define BTR_FRAME_BUCKETS 4400
struct btr_frame_stat {
    uint64_t frames, timed;
    int64_t total_ns, min_ns, max_ns;
    int64_t last_start; /* continuous sets: the frame still open, -1 none */
    int continuous;
    struct btc_vec durations; /* int64_t, while exact */
    uint64_t *buckets;        /* BTR_FRAME_BUCKETS counts, once over */
    int64_t p50_ns, p99_ns;   /* after btr_frames_finish */
};
struct btr_sections {
    struct btc_vec pools;      /* struct btr_pool_stat, per pool */
    struct btc_vec leak_sites; /* struct btr_leak_site */
    struct btc_map leak_index; /* pool << 32 | callstack -> site + 1 */
    struct btc_vec pending;    /* struct btr_pending_free: the pool being read */
    uint32_t pool;             /* the pool being read */
    struct btc_vec plot_sums;  /* double per plot */
    struct btc_vec frame_sets; /* struct btr_frame_stat, per frame set */
    uint64_t user_severity[6], tracy_severity[6];
    uint64_t errors_seen; /* error and fatal messages */
    int64_t error_time[BTR_FIRST_ERRORS];
    uint8_t error_severity[BTR_FIRST_ERRORS];
    char *error_text[BTR_FIRST_ERRORS];
};

struct btr_stats {
    struct btr_sections sections;
    struct btc_trace trace;
    struct btr_zone_stat *zones;
    size_t nzones;
};

/* Reads the file and aggregates every zone; rows sorted by total time. */
int btr_stats_compute(struct btr_stats *s, const char *path, char *err, size_t errlen);
void btr_stats_free(struct btr_stats *s);

/* tracy-csvexport's columns: name,src_file,src_line,total_ns,total_perc,
 * counts,mean_ns,min_ns,max_ns,std_ns. */
void btr_stats_print_csv(const struct btr_stats *s, FILE *out, const char *sep);
/* An aligned table for people. */
void btr_stats_print_table(const struct btr_stats *s, FILE *out);

void btr_sections_init(struct btr_sections *sec);
void btr_sections_free(struct btr_sections *sec);
/* Points the callbacks of more at the sections; the read's ctx must be the
 * struct btr_sections (or a struct starting with one). */
void btr_sections_callbacks(struct btc_read_more *more);
int btr_sections_message(void *ctx, const struct btc_trace *t, const struct btc_read_message *m);
/* After the read: what is known only at its end (the last frame's time). */
void btr_sections_finish(struct btr_sections *sec, const struct btc_trace *t);
/* The sections after the zone table, in this order. */
void btr_print_sections(const struct btr_sections *sec, const struct btc_trace *t, FILE *out);

/* The parts (each in its own file). */
int btr_memory_on_event(struct btr_sections *sec, const struct btc_trace *t,
                        const struct btc_read_mem *m);
void btr_memory_finish(struct btr_sections *sec);
/* The frees still to come, a min-heap by time (struct btr_pending_free):
 * memory in use sweeps the allocations in order and pops the frees before
 * each (the HTML curve sweeps them as stats' peak does). */
int btr_pending_push(struct btc_vec *heap, int64_t time, uint64_t size);
void btr_pending_pop(struct btc_vec *heap);
void btr_memory_print(const struct btr_sections *sec, const struct btc_trace *t, FILE *out);
/* A pool's name as stats prints it ("default" for the unnamed one). */
const char *btr_pool_name(const struct btc_trace *t, uint32_t pool);
void btr_locks_print(const struct btc_trace *t, FILE *out);
int btr_messages_on_message(struct btr_sections *sec, const struct btc_read_message *m);
void btr_messages_print(const struct btr_sections *sec, const struct btc_trace *t, FILE *out);
int btr_plots_on_point(struct btr_sections *sec, const struct btc_read_point *p);
void btr_plots_print(const struct btr_sections *sec, const struct btc_trace *t, FILE *out);
/* A plot's name as upstream's GUI and stats give it. */
const char *btr_plot_name(const struct btc_trace *t, const struct btc_read_plot *p);
int btr_frames_on_frame(struct btr_sections *sec, const struct btc_read_frame *f);
void btr_frames_finish(struct btr_sections *sec, const struct btc_trace *t);
void btr_frames_print(const struct btr_sections *sec, const struct btc_trace *t, FILE *out);
void btr_frames_free(struct btr_sections *sec);

/* boardtrace-report boards: the traces DIR/NAME.tracy (one per board)
 * compared per zone: each board's count, mean and p99, and their spread
 * (btr_boards.c); a table, or CSV when csv; only the top zones by total time
 * when top is not 0. Returns the number of boards, or < 0 with err saying
 * which file or folder and why. */
int btr_boards_print(const char *dir, int csv, size_t top, FILE *out, char *err, size_t errlen);

/* The name as people read it: a mangled C++ name demangled (btr_demangle.c),
 * any other as it is. The result lives until btr_demangle_free. */
const char *btr_demangle(const char *name);
void btr_demangle_free(void);

/* After the zone table: GPU zone statistics per context and source
 * location (btr_gpu_samples.c), the top functions by CPU samples, and the
 * source files and symbol code the file holds. */
void btr_print_gpu(const struct btc_trace *t, FILE *out);
void btr_print_samples(const struct btc_trace *t, FILE *out, size_t top);
void btr_print_code(const struct btc_trace *t, FILE *out);
/* System tracing (btr_system.c): topology, context switches and samples per
 * thread. */
void btr_print_system(const struct btc_trace *t, FILE *out);
/* The crash the trace records, if any: thread, time, text. */
void btr_print_crash(const struct btc_trace *t, FILE *out);

/* Writes the trace's zones as Chrome trace-event JSON (Perfetto opens it):
 * complete events per zone, thread and process names as metadata. */
int btr_chrome_export(const char *path, FILE *out, uint64_t *zones_written, char *err,
                      size_t errlen);

/* Writes the same in Perfetto's own protobuf trace format (btr_perfetto.c):
 * zones, messages, frames and plots, deflated in chunks. */
int btr_perfetto_export(const char *path, FILE *out, uint64_t *zones_written, char *err,
                        size_t errlen);

/* Flame-graph formats: the collapsed-stack text ("thread;outer;inner N",
 * N the path's self time in ns; btr_collapsed.c) and speedscope's JSON, an
 * evented profile per thread (btr_speedscope.c). *count receives the lines
 * or zones written. */
int btr_collapsed_export(const char *path, FILE *out, uint64_t *count, char *err, size_t errlen);
int btr_speedscope_export(const char *path, FILE *out, uint64_t *count, char *err, size_t errlen);

/* A self-contained HTML page of the trace (btr_html.c): top zones, a flame
 * graph per thread, a per-thread timeline, frame-time histograms, memory
 * pools and their use over time, plots; with base (NULL none) the diff
 * against it. *paths receives the call paths drawn. */
int btr_html_export(const char *path, const char *base, FILE *out, uint64_t *paths, char *err,
                    size_t errlen);

/* Lists the signposts (boardtrace.signpost) as CSV: time, header,
 * message, time since the previous one, and the zones that took the most
 * time until the next (btr_signposts.c). */
int btr_signposts_print(const char *path, FILE *out, char *err, size_t errlen);

/* Writes s as a JSON string: quotes, backslashes and control bytes escaped,
 * bytes that are not well-formed UTF-8 replaced by U+FFFD. */
void btr_json_string(FILE *out, const char *s);

/* Length of the character at p (n bytes left) as well-formed UTF-8 (1 to 4
 * bytes: no overlong form, surrogate or code point past U+10FFFF), its code
 * point in *cp; 0 for a byte that is not part of such a sequence. */
size_t btr_utf8_decode(const unsigned char *p, size_t n, uint32_t *cp);
/* Whether cp prints as text: not a C0 or C1 control, DEL, or a
 * bidirectional override or isolate (U+202A..U+202E, U+2066..U+2069). */
int btr_text_printable(uint32_t cp);

/* Text for a terminal: s with what is not printable text written as \xNN
 * byte by byte: controls (C0, DEL, C1, bidirectional overrides) and bytes
 * that are not part of well-formed UTF-8, such as a lone 0x9b, the 8-bit CSI
 * (btr_text.c). btr_text_safe returns s when it has none, else its escaped
 * copy in buf, cut at size - 1 bytes. */
void btr_text_put(FILE *out, const char *s);
void btr_text_write(FILE *out, const char *s, size_t len);
const char *btr_text_safe(const char *s, char *buf, size_t size);

#endif
