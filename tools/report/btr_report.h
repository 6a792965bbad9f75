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

struct btr_stats {
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

/* After the zone table: GPU zone statistics per context and source
 * location (btr_gpu_samples.c), the top functions by CPU samples, and the
 * source files and symbol code the file holds. */
void btr_print_gpu(const struct btc_trace *t, FILE *out);
void btr_print_samples(const struct btc_trace *t, FILE *out, size_t top);
void btr_print_code(const struct btc_trace *t, FILE *out);
/* System tracing (btr_system.c): topology, context switches and samples per
 * thread. */
void btr_print_system(const struct btc_trace *t, FILE *out);

/* Writes the trace's zones as Chrome trace-event JSON (Perfetto opens it):
 * complete events per zone, thread and process names as metadata. */
int btr_chrome_export(const char *path, FILE *out, uint64_t *zones_written, char *err,
                      size_t errlen);

/* Writes s as a JSON string: quotes, backslashes and control bytes escaped,
 * bytes that are not well-formed UTF-8 replaced by U+FFFD. */
void btr_json_string(FILE *out, const char *s);

/* Text for a terminal: s with control characters (C0, DEL, C1) written as
 * \xNN (btr_text.c). btr_text_safe returns s when it has none, else its
 * escaped copy in buf, cut at size - 1 bytes. */
void btr_text_put(FILE *out, const char *s);
void btr_text_write(FILE *out, const char *s, size_t len);
const char *btr_text_safe(const char *s, char *buf, size_t size);

#endif
