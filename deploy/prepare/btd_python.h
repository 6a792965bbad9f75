/* `run --python SCRIPT` (btd_python.c): the board's python3 and the
 * extension built for it, and the package files that travel beside it. */
#ifndef BTD_PYTHON_H
#define BTD_PYTHON_H

#include "btd_deploy_state.h"

#include <stddef.h>

/* The package files under the Python folder, uploaded as BTD_PYTHON_PREFIX
 * + the path with '/' as '-', and where they are laid out on the board. */
enum { BTD_PYTHON_FILES = 8 };
#define BTD_PYTHON_PREFIX "bt-python-"
#define BTD_PYTHON_DIR    "bt-python"
extern const char *const btd_python_files[BTD_PYTHON_FILES];
void btd_python_board_name(const char *file, char *out, size_t outlen);

/* The script: a regular file here. */
int btd_python_check_script(const char *script);
/* After the board probe: the board's python3 there and of the version the
 * extension for its architecture is built for; that extension loaded as the
 * program. Errors say what the board has and what is needed. */
int btd_python_prepare(struct btd_deploy *d);

#endif
