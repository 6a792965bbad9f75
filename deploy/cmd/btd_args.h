/* Command line of the boardtrace CLI: subcommands, options, --help text. The
 * only place that knows option spellings; the operations get a filled-in
 * struct btd_options (btd_options.h). */
#ifndef BTD_ARGS_H
#define BTD_ARGS_H

#include "btd_options.h"

/* Parses argv. Returns 0 to go on, 1 after printing help or the version (exit
 * 0), or BTD_EXIT_USAGE after printing what is wrong. */
int btd_args_parse(int argc, char **argv, struct btd_options *o);
void btd_args_free(struct btd_options *o);

#endif
