/* boardtrace-report on a pulled trace (btd_report.c): finding the tool
 * beside boardtrace (installed, or in its build tree), and writing the
 * trace's HTML report. */
#ifndef BTD_REPORT_H
#define BTD_REPORT_H

#include <stdbool.h>
#include <stddef.h>

/* The path of boardtrace-report into out: beside boardtrace's own
 * executable, else, for boardtrace run from its build tree, that tree's.
 * false when neither is there. */
bool btd_report_find(char *out, size_t outlen);

/* Writes TRACE's HTML report to html (boardtrace-report html -o HTML
 * TRACE, which replaces html only once complete). Returns 0, or -1 after a
 * warning: the trace is never touched either way. */
int btd_report_html(const char *trace, const char *html);

#endif
