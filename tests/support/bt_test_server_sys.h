/* Between the test server's two parts: the system tracing rules
 * (bt_test_server_sys.c) and what they use of the main server. */
#ifndef BT_TEST_SERVER_SYS_H
#define BT_TEST_SERVER_SYS_H

#include <stddef.h>
#include <stdint.h>

struct bt_test_server;
struct bt_ts_sys;
struct bt_ts_map;

/* Takes a system tracing event: 1 when it was one (and is done with), 0
 * when the main server must handle it (it may still have looked). */
int bt_ts_sys_event(struct bt_test_server *s, const uint8_t *p, size_t size, int64_t time);
void bt_ts_sys_free(struct bt_ts_sys *y);
/* Whether every external name asked for has come. */
int bt_ts_sys_answered(const struct bt_test_server *s);

/* From bt_test_server.c. */
void bt_ts_fail(struct bt_test_server *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void bt_ts_query(struct bt_test_server *s, uint8_t type, uint64_t ptr);
void bt_ts_map_free(struct bt_ts_map *m);

#endif
