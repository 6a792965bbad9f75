/* DWARF line-number programs (DWARF 2-5, 32- and 64-bit) decoded into one
 * address-sorted table per module, read by the worker when the capture asks
 * about a callstack frame. Every read is bounds-checked: a malformed unit
 * stops the reading, it never reads past a section. */
#include "dwarf_line.h"

#include <stdlib.h>
#include <string.h>

enum {
    DW_LNS_copy = 1,
    DW_LNS_advance_pc = 2,
    DW_LNS_advance_line = 3,
    DW_LNS_set_file = 4,
    DW_LNS_const_add_pc = 8,
    DW_LNS_fixed_advance_pc = 9,
    DW_LNE_end_sequence = 1,
    DW_LNE_set_address = 2,
    DW_LNCT_path = 1,
    DW_LNCT_directory_index = 2,
    DW_FORM_block = 0x09,
    DW_FORM_data1 = 0x0b,
    DW_FORM_data2 = 0x05,
    DW_FORM_data4 = 0x06,
    DW_FORM_data8 = 0x07,
    DW_FORM_data16 = 0x1e,
    DW_FORM_string = 0x08,
    DW_FORM_strp = 0x0e,
    DW_FORM_udata = 0x0f,
    DW_FORM_line_strp = 0x1f,
};

struct reader {
    const uint8_t *p;
    const uint8_t *end;
    int bad;
};

static uint64_t read_n(struct reader *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

static uint64_t read_uleb(struct reader *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; !r->bad; shift += 7) {
        if (r->p >= r->end) {
            r->bad = 1;
            break;
        }
        uint8_t b = *r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return v;
}

static int64_t read_sleb(struct reader *r)
{
    int64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    do {
        if (r->p >= r->end) {
            r->bad = 1;
            return 0;
        }
        b = *r->p++;
        if (shift < 64)
            v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= -(int64_t)((uint64_t)1 << shift);
    return v;
}

static const char *read_cstr(struct reader *r)
{
    const uint8_t *s = r->p;
    while (r->p < r->end && *r->p)
        r->p++;
    if (r->p >= r->end) {
        r->bad = 1;
        return NULL;
    }
    r->p++;
    return (const char *)s;
}

static const char *string_at(const uint8_t *sec, size_t size, uint64_t off)
{
    if (!sec || off >= size || !memchr(sec + off, 0, size - off))
        return NULL;
    return (const char *)sec + off;
}

/* One attribute of a DWARF 5 directory or file entry. */
static void read_form(struct reader *r, uint64_t form, int offset_size,
                      const struct bt_dwarf_sections *s, const char **str, uint64_t *num)
{
    *str = NULL;
    *num = 0;
    switch (form) {
    case DW_FORM_string:
        *str = read_cstr(r);
        break;
    case DW_FORM_line_strp:
        *str = string_at(s->line_str, s->line_str_size, read_n(r, (size_t)offset_size));
        break;
    case DW_FORM_strp:
        *str = string_at(s->str, s->str_size, read_n(r, (size_t)offset_size));
        break;
    case DW_FORM_udata:
        *num = read_uleb(r);
        break;
    case DW_FORM_data1:
        *num = read_n(r, 1);
        break;
    case DW_FORM_data2:
        *num = read_n(r, 2);
        break;
    case DW_FORM_data4:
        *num = read_n(r, 4);
        break;
    case DW_FORM_data8:
        *num = read_n(r, 8);
        break;
    case DW_FORM_data16:
        read_n(r, 8);
        read_n(r, 8);
        break;
    case DW_FORM_block: {
        uint64_t n = read_uleb(r);
        if (n > (uint64_t)(r->end - r->p))
            r->bad = 1;
        else
            r->p += n;
        break;
    }
    default: /* a form a line table does not use: cannot go on */
        r->bad = 1;
        break;
    }
}

static int push_row(struct bt_line_table *t, size_t *cap, uint64_t address, uint32_t line,
                    uint32_t file)
{
    if (t->count == *cap) {
        size_t n = *cap ? 2 * *cap : 1024;
        struct bt_line_row *grown = realloc(t->rows, n * sizeof(*grown));
        if (!grown)
            return -1;
        t->rows = grown;
        *cap = n;
    }
    t->rows[t->count++] = (struct bt_line_row){address, line, file};
    return 0;
}

static int push_file(struct bt_line_table *t, size_t *cap, const char *dir, const char *name)
{
    if (t->file_count == *cap) {
        size_t n = *cap ? 2 * *cap : 64;
        struct bt_line_file *grown = realloc(t->files, n * sizeof(*grown));
        if (!grown)
            return -1;
        t->files = grown;
        *cap = n;
    }
    if (name && name[0] == '/')
        dir = NULL;
    t->files[t->file_count++] = (struct bt_line_file){dir, name ? name : "[unknown]"};
    return 0;
}

struct unit {
    int version;
    int offset_size;
    int address_size;
    uint8_t min_inst;
    int8_t line_base;
    uint8_t line_range;
    uint8_t opcode_base;
    const uint8_t *opcode_lengths;
    uint32_t first_file; /* table index of the unit's file 0 (v5) or 1 (v2-4) */
};

#define MAX_DIRS 4096

/* Directory and file tables of a unit header, appended to t->files. */
static int read_file_tables(struct reader *r, struct unit *u, const struct bt_dwarf_sections *s,
                            struct bt_line_table *t, size_t *file_cap)
{
    const char *dirs[MAX_DIRS];
    size_t ndirs = 0;
    u->first_file = (uint32_t)t->file_count;
    if (u->version < 5) {
        dirs[ndirs++] = NULL; /* directory 0: the compilation directory */
        for (;;) {
            const char *d = read_cstr(r);
            if (r->bad || !*d)
                break;
            if (ndirs < MAX_DIRS)
                dirs[ndirs++] = d;
        }
        if (push_file(t, file_cap, NULL, NULL) != 0) /* file 0 does not exist before v5 */
            return -1;
        for (;;) {
            const char *name = read_cstr(r);
            if (r->bad || !*name)
                break;
            uint64_t dir = read_uleb(r);
            read_uleb(r); /* mtime */
            read_uleb(r); /* length */
            if (push_file(t, file_cap, dir < ndirs ? dirs[dir] : NULL, name) != 0)
                return -1;
        }
        return r->bad ? -1 : 0;
    }
    for (int table = 0; table < 2; table++) {
        uint8_t nformats = (uint8_t)read_n(r, 1);
        uint64_t formats[2 * 16];
        if (nformats > 16)
            return -1;
        for (unsigned i = 0; i < 2u * nformats; i++)
            formats[i] = read_uleb(r);
        uint64_t count = read_uleb(r);
        for (uint64_t e = 0; e < count && !r->bad; e++) {
            const char *path = NULL;
            uint64_t dir = 0;
            for (unsigned f = 0; f < nformats; f++) {
                const char *str;
                uint64_t num;
                read_form(r, formats[2 * f + 1], u->offset_size, s, &str, &num);
                if (formats[2 * f] == DW_LNCT_path)
                    path = str;
                else if (formats[2 * f] == DW_LNCT_directory_index)
                    dir = num;
            }
            if (table == 0) {
                if (ndirs < MAX_DIRS)
                    dirs[ndirs++] = path;
            } else if (push_file(t, file_cap, dir < ndirs ? dirs[dir] : NULL, path) != 0) {
                return -1;
            }
        }
    }
    return r->bad ? -1 : 0;
}

/* Runs one unit's line program, appending its rows. */
static int run_program(struct reader *r, const struct unit *u, struct bt_line_table *t,
                       size_t *row_cap)
{
    uint64_t address = 0;
    int64_t line = 1;
    uint64_t file = 1; /* the initial state in every version */
    uint32_t files_here = (uint32_t)(t->file_count - u->first_file);
    while (r->p < r->end && !r->bad) {
        uint8_t op = (uint8_t)read_n(r, 1);
        int emit = 0, end = 0;
        if (op >= u->opcode_base) {
            unsigned adj = op - u->opcode_base;
            address += (uint64_t)(adj / u->line_range) * u->min_inst;
            line += u->line_base + (int)(adj % u->line_range);
            emit = 1;
        } else if (op == 0) {
            uint64_t len = read_uleb(r);
            if (len == 0 || len > (uint64_t)(r->end - r->p))
                return -1;
            const uint8_t *next = r->p + len;
            uint8_t sub = (uint8_t)read_n(r, 1);
            if (sub == DW_LNE_end_sequence) {
                emit = end = 1;
            } else if (sub == DW_LNE_set_address) {
                address = read_n(r, (size_t)(len - 1 <= 8 ? len - 1 : 8));
            }
            r->p = next;
        } else if (op == DW_LNS_copy) {
            emit = 1;
        } else if (op == DW_LNS_advance_pc) {
            address += read_uleb(r) * u->min_inst;
        } else if (op == DW_LNS_advance_line) {
            line += read_sleb(r);
        } else if (op == DW_LNS_set_file) {
            file = read_uleb(r);
        } else if (op == DW_LNS_const_add_pc) {
            address += (uint64_t)((255u - u->opcode_base) / u->line_range) * u->min_inst;
        } else if (op == DW_LNS_fixed_advance_pc) {
            address += read_n(r, 2);
        } else {
            for (unsigned i = 0; i < u->opcode_lengths[op - 1]; i++)
                read_uleb(r);
        }
        if (emit) {
            uint32_t index = file < files_here ? u->first_file + (uint32_t)file : UINT32_MAX - 1;
            if (push_row(t, row_cap, address, line > 0 ? (uint32_t)line : 0,
                         end ? UINT32_MAX : index) != 0)
                return -1;
        }
        if (end) {
            address = 0;
            line = 1;
            file = 1;
        }
    }
    return r->bad ? -1 : 0;
}

static int row_order(const void *a, const void *b)
{
    const struct bt_line_row *x = a, *y = b;
    if (x->address != y->address)
        return x->address < y->address ? -1 : 1;
    /* at one address a sequence's end sorts before the next one's start */
    return (x->file != UINT32_MAX) - (y->file != UINT32_MAX);
}

int bt_line_table_build(struct bt_line_table *t, const struct bt_dwarf_sections *s)
{
    memset(t, 0, sizeof(*t));
    size_t row_cap = 0, file_cap = 0;
    struct reader sec = {s->line, s->line + s->line_size, 0};
    int rc = 0;
    while (sec.p < sec.end && rc == 0) {
        struct unit u;
        memset(&u, 0, sizeof(u));
        uint64_t length = read_n(&sec, 4);
        u.offset_size = 4;
        if (length == 0xffffffffu) {
            length = read_n(&sec, 8);
            u.offset_size = 8;
        }
        if (sec.bad || length > (uint64_t)(sec.end - sec.p))
            return -1;
        struct reader r = {sec.p, sec.p + length, 0};
        sec.p += length;
        u.version = (int)read_n(&r, 2);
        if (u.version < 2 || u.version > 5)
            return -1;
        u.address_size = 8;
        if (u.version >= 5) {
            u.address_size = (int)read_n(&r, 1);
            read_n(&r, 1); /* segment selector size */
        }
        uint64_t header_length = read_n(&r, (size_t)u.offset_size);
        if (header_length > (uint64_t)(r.end - r.p))
            return -1;
        const uint8_t *program = r.p + header_length;
        u.min_inst = (uint8_t)read_n(&r, 1);
        if (u.version >= 4)
            read_n(&r, 1); /* maximum operations per instruction (VLIW only) */
        read_n(&r, 1);     /* default is_stmt */
        u.line_base = (int8_t)read_n(&r, 1);
        u.line_range = (uint8_t)read_n(&r, 1);
        u.opcode_base = (uint8_t)read_n(&r, 1);
        if (r.bad || u.line_range == 0 || u.opcode_base == 0 ||
            (size_t)(r.end - r.p) < (size_t)u.opcode_base - 1)
            return -1;
        u.opcode_lengths = r.p;
        r.p += u.opcode_base - 1;
        if (read_file_tables(&r, &u, s, t, &file_cap) != 0)
            return -1;
        r.p = program;
        rc = run_program(&r, &u, t, &row_cap);
    }
    if (t->count)
        qsort(t->rows, t->count, sizeof(*t->rows), row_order);
    return rc;
}

void bt_line_table_free(struct bt_line_table *t)
{
    free(t->rows);
    free(t->files);
    memset(t, 0, sizeof(*t));
}

int bt_line_table_find(const struct bt_line_table *t, uint64_t address,
                       const struct bt_line_file **file, uint32_t *line)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->rows[mid].address <= address)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    const struct bt_line_row *row = &t->rows[lo - 1];
    if (row->file >= t->file_count) /* a sequence's end, or an unknown file */
        return 0;
    *file = &t->files[row->file];
    *line = row->line;
    return 1;
}
