/* The runtime's environment variables: read strictly, so that a value that
 * is not what the variable takes is said once on stderr and replaced by the
 * default instead of being silently reinterpreted. */
#ifndef BT_ENV_H
#define BT_ENV_H

/* NAME's value as a decimal whole number in lo..hi; `fallback` when unset
 * or empty, and, after one stderr line saying so, when it is anything else
 * (a sign, trailing characters, out of range). That line names the kind of
 * value (`what`: "a port") and what is used instead (`instead`). */
unsigned long bt_env_number(const char *name, unsigned long lo, unsigned long hi,
                            unsigned long fallback, const char *what, const char *instead);

#endif
