/* JSON text the collector writes by hand, for speed. */
#ifndef RINGSIDE_JSONTEXT_H
#define RINGSIDE_JSONTEXT_H

#include <glib.h>

/* A JSON string's body; bytes that are not valid UTF-8 become \u00XX. */
void rs_json_escape(GString *o, const char *s, gsize len);

#endif
