/* Sections of a capture (Tracy 0.13's named time spans by category, entered
 * and left by id on any thread): each span with its text, per category,
 * and the categories' descriptions. Spans go to a spool; only the open ones
 * (and ones left before they were entered) are held. */
#ifndef BTC_SECTIONS_H
#define BTC_SECTIONS_H

#include <stdint.h>

#include "btc_spool.h"
#include "btc_util.h"

struct btc_section_rec {
    int64_t start, end; /* ns; end -id while open, as upstream keeps it */
    uint32_t text;      /* string index + 1, 0 none */
    uint16_t category;
    uint8_t pad[2];
};

struct btc_section_category {
    uint16_t category;
    uint64_t count;
    int64_t description; /* string index, -1 none */
};

struct btc_sections {
    struct btc_spool spool;
    struct btc_map open;       /* id -> spool record of the open span */
    struct btc_map left_early; /* id -> time it was left before it was entered */
    struct btc_vec categories; /* struct btc_section_category, in order of first sight */
};

int btc_sections_init(struct btc_sections *s, const char *spool_dir, char *err, size_t errlen);
void btc_sections_free(struct btc_sections *s);

struct btc_model;
struct btc_event;
/* Applies SectionEnter, SectionLeave and SectionSetup. */
int btc_sections_event(struct btc_model *m, const struct btc_event *ev, char *err, size_t errlen);

#endif
