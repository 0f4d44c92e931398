/* JSON text the collector writes by hand, for speed. */
#include "jsontext.h"

/* JSON string body; bytes that are not valid UTF-8 become \u00XX. */
void rs_json_escape(GString *o, const char *s, gsize len)
{
    const char *end = s + len;

    while (s < end) {
        const char *run = s;
        gunichar c;

        /* Plain printable ASCII, the bulk of any log, goes in one copy. */
        while (s < end && (guchar)*s >= 0x20 && (guchar)*s < 0x7f &&
               *s != '"' && *s != '\\') {
            s++;
        }
        g_string_append_len(o, run, s - run);
        if (s == end) {
            break;
        }
        c = g_utf8_get_char_validated(s, end - s);

        if (c == (gunichar)-1 || c == (gunichar)-2) {
            g_string_append_printf(o, "\\u%04x", (guint8)*s++);
            continue;
        }
        switch (c) {
        case '"':
            g_string_append(o, "\\\"");
            break;
        case '\\':
            g_string_append(o, "\\\\");
            break;
        case '\n':
            g_string_append(o, "\\n");
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                g_string_append_printf(o, "\\u%04x", c);
            } else {
                g_string_append_len(o, s, g_utf8_next_char(s) - s);
            }
        }
        s = g_utf8_next_char(s);
    }
}
