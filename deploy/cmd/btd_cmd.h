/* The commands of the CLI (btd_cmd_*.c), each run by main() with the
 * parsed options. Each returns an exit status from btd_msg.h. */
#ifndef BTD_CMD_H
#define BTD_CMD_H

#include "btd_options.h"

int btd_cmd_run(const struct btd_options *o);
int btd_cmd_live(const struct btd_options *o);
int btd_cmd_fetch(const struct btd_options *o);
int btd_cmd_check(const struct btd_options *o);
int btd_cmd_status(const struct btd_options *o);

#endif
