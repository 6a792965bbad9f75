/* Host key check independent of the SSH config (see btd_known_hosts.h). */
#include "btd_known_hosts.h"

#include <stddef.h>

enum ssh_known_hosts_e btd_known_hosts_check(ssh_session s)
{
    /* ssh_options_parse_config may have turned the check off; libssh then
     * answers OK for any key. Turned back on, it compares for real. */
    int strict = 1;
    if (ssh_options_set(s, SSH_OPTIONS_STRICTHOSTKEYCHECK, &strict) != SSH_OK)
        return SSH_KNOWN_HOSTS_ERROR;
    struct ssh_knownhosts_entry *entry = NULL;
    enum ssh_known_hosts_e state = ssh_session_get_known_hosts_entry(s, &entry);
    if (state != SSH_KNOWN_HOSTS_OK) {
        SSH_KNOWNHOSTS_ENTRY_FREE(entry);
        return state;
    }
    /* OK is trusted only with the entry in hand and its key the server's. */
    ssh_key key = NULL;
    if (ssh_get_server_publickey(s, &key) != SSH_OK) {
        SSH_KNOWNHOSTS_ENTRY_FREE(entry);
        return SSH_KNOWN_HOSTS_ERROR;
    }
    if (!entry || !entry->publickey || ssh_key_cmp(entry->publickey, key, SSH_KEY_CMP_PUBLIC) != 0)
        state = entry ? SSH_KNOWN_HOSTS_CHANGED : SSH_KNOWN_HOSTS_UNKNOWN;
    ssh_key_free(key);
    SSH_KNOWNHOSTS_ENTRY_FREE(entry);
    return state;
}
