/* The deploy's step for dynamically linked programs (btd_deploy_libs.c):
 * the board's glibc checked before the upload, the loader and libraries
 * the board lacks brought after it. */
#ifndef BTD_DEPLOY_LIBS_H
#define BTD_DEPLOY_LIBS_H

#include "btd_deploy_state.h"

/* Before the upload: a dynamically linked program that needs a newer glibc
 * than the board has (from the probe) is refused, naming both versions,
 * unless a new enough glibc can be brought from the sysroot. */
int btd_deploy_libc_check(struct btd_deploy *d);

/* For a dynamically linked program already uploaded: asks the board's loader
 * what it lacks and brings the loader and libraries from the sysroot (or,
 * with --no-bring-libs, refuses naming each missing piece). Called by
 * btd_deploy_prepare. */
int btd_deploy_libs(struct btd_deploy *d);

#endif
