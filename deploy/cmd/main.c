/* boardtrace, the host CLI: profile a program on an embedded Linux board
 * with Tracy over SSH. main() only dispatches; each command lives in its own
 * btd_cmd_*.c file, the arguments in btd_args.c. */
#include "btd_args.h"
#include "btd_cmd.h"
#include "btd_farm.h"
#include "btd_msg.h"

#include <libssh/libssh.h>
#include <string.h>

int main(int argc, char **argv)
{
    /* farm drives LAVA and runs `boardtrace run` per board: its own arguments. */
    if (argc >= 2 && strcmp(argv[1], "farm") == 0)
        return btd_farm_main(argc - 1, argv + 1);
    struct btd_options o;
    int rc = btd_args_parse(argc, argv, &o);
    if (rc != 0) {
        btd_args_free(&o);
        return rc == 1 ? BTD_EXIT_OK : rc;
    }
    ssh_init();
    switch (o.command) {
    case BTD_CMD_RUN:
    case BTD_CMD_LIVE:
        rc = o.command == BTD_CMD_RUN ? btd_cmd_run(&o) : btd_cmd_live(&o);
        /* Whichever step failed, the last line names it, before a
         * connection as after (the message above it says why). */
        if (rc != BTD_EXIT_OK)
            btd_note("failed at step: %s (exit status %d)", btd_exit_step(rc), rc);
        break;
    case BTD_CMD_FETCH:
        rc = btd_cmd_fetch(&o);
        break;
    case BTD_CMD_CHECK:
        rc = btd_cmd_check(&o);
        break;
    case BTD_CMD_STATUS:
        rc = btd_cmd_status(&o);
        break;
    }
    ssh_finalize();
    btd_args_free(&o);
    return rc;
}
