/*
 * Escaping and axis steps for the HTML report: what the page and the
 * timeline it draws both need.
 */
#ifndef RINGSIDE_HTML_H
#define RINGSIDE_HTML_H

#include <glib.h>

/*
 * Append @len bytes of @s (all of it if @len < 0; nothing if @s is NULL)
 * escaped for HTML text and attribute values.  Control bytes become spaces
 * and invalid UTF-8 U+FFFD, so console bytes are safe too.
 */
void rs_html_esc_len(GString *o, const char *s, gssize len);
void rs_html_esc(GString *o, const char *s);

/* A round step (1, 2 or 5 times a power of ten) for at most @n ticks. */
double rs_html_nice_step(double span, int n);

#endif
