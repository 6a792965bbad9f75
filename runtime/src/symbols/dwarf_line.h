/* Source lines for callstack answers: a reader of DWARF .debug_line (versions
 * 2 to 5) that turns a module's line programs into a sorted address table.
 * Only what the answers need: address -> file and line. */
#ifndef BT_DWARF_LINE_H
#define BT_DWARF_LINE_H

#include <stddef.h>
#include <stdint.h>

struct bt_line_row {
    uint64_t address; /* module-relative (link-time) address */
    uint32_t line;
    uint32_t file; /* index into bt_line_table.files; UINT32_MAX ends a sequence */
};

struct bt_line_file {
    const char *dir; /* NULL when the name is enough */
    const char *name;
};

struct bt_line_table {
    struct bt_line_row *rows;
    size_t count;
    struct bt_line_file *files;
    size_t file_count;
};

/* The sections an ELF image holds (line_str and str may be absent). Strings
 * of the table point into these buffers, which must outlive it. */
struct bt_dwarf_sections {
    const uint8_t *line;
    size_t line_size;
    const uint8_t *line_str;
    size_t line_str_size;
    const uint8_t *str;
    size_t str_size;
};

/* Builds the table; returns 0, or -1 when the data is not DWARF it can read
 * (what was read before the problem is kept). */
int bt_line_table_build(struct bt_line_table *t, const struct bt_dwarf_sections *s);
void bt_line_table_free(struct bt_line_table *t);
/* File and line of the instruction at address, 0 if unknown. */
int bt_line_table_find(const struct bt_line_table *t, uint64_t address,
                       const struct bt_line_file **file, uint32_t *line);

#endif
