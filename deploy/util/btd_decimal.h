/* Numbers as the user types them, checked the same way by the command line
 * (cmd/btd_args.c) and the SSH target's parsing (transport/btd_ssh.c). */
#ifndef BTD_DECIMAL_H
#define BTD_DECIMAL_H

/* A number given on the command line (an option's value, --host's PORT):
 * decimal digits only, the whole string, that fit a long; no sign, space,
 * hexadecimal, fraction, exponent, "nan" or "inf" (strtol and strtod take
 * some of those). 0, or -1 for anything else. */
int btd_parse_decimal(const char *s, long *out);

#endif
