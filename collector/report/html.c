/*
 * Escaping and axis steps for the HTML report.
 */
#include "report/html.h"

#include <string.h>

void rs_html_esc_len(GString *o, const char *s, gssize len)
{
    g_autofree char *copy = NULL, *valid = NULL;
    const char *p;
    gssize i;

    if (!s) {
        return;
    }
    if (len < 0) {
        len = strlen(s);
    }
    copy = g_malloc(len + 1);
    for (i = 0; i < len; i++) {
        guchar ch = s[i];

        copy[i] = ch < 0x20 || ch == 0x7f ? ' ' : ch;
    }
    copy[len] = '\0';
    valid = g_utf8_make_valid(copy, len);
    for (p = valid; *p; p++) {
        switch (*p) {
        case '&':
            g_string_append(o, "&amp;");
            break;
        case '<':
            g_string_append(o, "&lt;");
            break;
        case '>':
            g_string_append(o, "&gt;");
            break;
        case '"':
            g_string_append(o, "&quot;");
            break;
        case '\'':
            g_string_append(o, "&#39;");
            break;
        default:
            g_string_append_c(o, *p);
        }
    }
}

void rs_html_esc(GString *o, const char *s)
{
    rs_html_esc_len(o, s, -1);
}

double rs_html_nice_step(double span, int n)
{
    static const double m[] = { 1, 2, 5 };
    double p = 1e-6;
    int i;

    while (p < 1e15) {
        for (i = 0; i < 3; i++) {
            if (span / (p * m[i]) <= n) {
                return p * m[i];
            }
        }
        p *= 10;
    }
    return p;
}
