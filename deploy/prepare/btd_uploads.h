/* Files uploaded beside the program: --upload's, and run --python's script
 * and package files (btd_uploads.c). */
#ifndef BTD_UPLOADS_H
#define BTD_UPLOADS_H

#include "btd_deploy_state.h"

/* --upload: checks each file here (regular, readable, a name of its own in
 * the folder), then uploads them beside the program. */
int btd_uploads_check(struct btd_deploy *d);
int btd_uploads_send(struct btd_deploy *d);

#endif
