/*
 * Console lines as journal entries, in the Journal Export Format
 * (https://systemd.io/JOURNAL_EXPORT_FORMATS/), for
 * systemd-journal-remote or anything else that reads it.
 */
#ifndef RINGSIDE_JOURNAL_H
#define RINGSIDE_JOURNAL_H

#include "events/events.h"

#include <glib.h>
#include <stdio.h>

typedef struct {
    const char *domain;     /* RINGSIDE_DOMAIN */
    int boot;               /* RINGSIDE_BOOT */
    const char *ev;         /* RINGSIDE_EVENT: line or record */
    const char *verdict;    /* RINGSIDE_VERDICT, NULL: none */
    gint64 vt_ns;           /* RINGSIDE_VT_NS (guest virtual time), -1 */
    int cpu;                /* RINGSIDE_CPU, -1: none */
    gboolean has_seq;
    guint64 seq;            /* RINGSIDE_SEQ: the printk record's */
    int level;              /* the record's level, -1 unknown: PRIORITY */
    const char *console;    /* RINGSIDE_CONSOLE: ok, missed, ... or NULL */
    const char *text;       /* MESSAGE */
    gsize len;
} RsJournalEntry;

/*
 * PRIORITY for @e: the record's level when known, else 6 (info) for a
 * line judged ok or written by user space, 4 (warning) for a line the
 * device found a problem with, 3 (error) for a record that never reached
 * the console.
 */
int rs_journal_priority(const RsJournalEntry *e);

void rs_journal_write(FILE *out, const RsJournalEntry *e);

/*
 * Every judged line of a finished stream @s, and every record that never
 * reached the console, as entries of @name's boot @boot.  The text of a
 * stream without "tx" records is taken from @console, what the console
 * chardev got (each line's first..last bytes locate it there).
 */
void rs_journal_write_stream(FILE *out, const char *name, int boot,
                             RsEventStream *s, const char *console,
                             gsize console_len);

#endif
