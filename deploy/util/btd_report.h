/* boardtrace-report on a pulled trace (btd_report.c): finding the tool
 * beside boardtrace (installed, or in its build tree), writing a trace's
 * HTML report, and comparing a farm's boards. */
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

/* Prints the spread across the boards of DIR's traces, the top zones by
 * total time (boardtrace-report boards --top TOP DIR), to stdout. Returns
 * 0, or -1 after a warning. */
int btd_report_boards(const char *dir, int top);

#endif
