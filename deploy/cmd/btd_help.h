/* Each command's own help text (btd_help.c). */
#ifndef BTD_HELP_H
#define BTD_HELP_H

#include "btd_options.h"

#include <stdio.h>

/* Usage, every option, an example and the exit statuses of cmd. */
void btd_help_print(enum btd_command cmd, FILE *out);

#endif
