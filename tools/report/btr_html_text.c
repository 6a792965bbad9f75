/* Text from the trace inside the HTML page: made printable as the text
 * reports make it (btr_text_put), then escaped for HTML, or as a JSON
 * string that cannot close the <script> element holding it. */
#define _GNU_SOURCE /* open_memstream */
#include <stdlib.h>

#include "btr_html.h"

void btr_html_escaped(FILE *out, const char *p)
{
    for (; *p; p++) {
        switch (*p) {
        case '&':
            fputs("&amp;", out);
            break;
        case '<':
            fputs("&lt;", out);
            break;
        case '>':
            fputs("&gt;", out);
            break;
        case '"':
            fputs("&quot;", out);
            break;
        default:
            fputc(*p, out);
        }
    }
}

void btr_html_text(FILE *out, const char *s)
{
    char *safe = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&safe, &len);
    if (!m)
        return;
    btr_text_put(m, s);
    fclose(m);
    btr_html_escaped(out, safe);
    free(safe);
}

void btr_html_script_string(FILE *out, const char *s)
{
    char *copy = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&copy, &len);
    if (!m)
        return;
    btr_json_string(m, s);
    fclose(m);
    for (size_t i = 0; i < len; i++) {
        if (copy[i] == '<')
            fputs("\\u003c", out);
        else
            fputc(copy[i], out);
    }
    free(copy);
}
