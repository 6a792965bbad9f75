/* A small JSON writer for the run record: objects, arrays, strings escaped
 * per RFC 8259, numbers; commas placed by the writer. */
#ifndef BTD_JSON_H
#define BTD_JSON_H

#include "btd_buf.h"

#include <stdbool.h>
#include <stdint.h>

struct btd_json {
    struct btd_buf out;
    int depth;
    bool need_comma[32];
};

void btd_json_begin_object(struct btd_json *j, const char *key);
void btd_json_end_object(struct btd_json *j);
void btd_json_begin_array(struct btd_json *j, const char *key);
void btd_json_end_array(struct btd_json *j);
/* key is NULL inside arrays and for the top level. */
void btd_json_string(struct btd_json *j, const char *key, const char *value);
void btd_json_int(struct btd_json *j, const char *key, int64_t value);
void btd_json_double(struct btd_json *j, const char *key, double value);
void btd_json_bool(struct btd_json *j, const char *key, bool value);
void btd_json_null(struct btd_json *j, const char *key);

/* Appends S as a quoted JSON string. */
void btd_json_escape(struct btd_buf *b, const char *s);

#endif
