/* The host key check, made by boardtrace itself: the user's SSH config may
 * say `StrictHostKeyChecking no`, which makes libssh call every key known,
 * changed ones too; boardtrace's rules do not bend to it. */
#ifndef BTD_KNOWN_HOSTS_H
#define BTD_KNOWN_HOSTS_H

#include <libssh/libssh.h>

/* How the connected session's host key compares with its known_hosts
 * entries, whatever the parsed config says: SSH_KNOWN_HOSTS_OK only when an
 * entry for the host holds exactly the key the server offered. */
enum ssh_known_hosts_e btd_known_hosts_check(ssh_session s);

#endif
