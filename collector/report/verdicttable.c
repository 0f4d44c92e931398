/* Verdict names looked up in their tables; see verdicttable.h. */
#include "report/verdicttable.h"

#include <string.h>

void rs_verdict_count_records(const GArray *records,
                              const char *const *names, int n,
                              guint64 *counts)
{
    guint i;
    int k;

    for (i = 0; i < records->len; i++) {
        const RsRecordVerdict *rv = &g_array_index(records, RsRecordVerdict,
                                                   i);

        k = rs_name_index(names, n, rv->verdict);
        if (k >= 0) {
            counts[k] += rv->count;
        }
    }
}

void rs_verdict_print_rows(FILE *f, const char *const *names,
                           const guint64 *counts, const char *const *notes,
                           int n)
{
    int k;

    for (k = 0; k < n; k++) {
        fprintf(f, "  %-16s %10" G_GUINT64_FORMAT, names[k], counts[k]);
        if (counts[k] && notes[k][0]) {
            fprintf(f, "  %s", notes[k]);
        }
        fputc('\n', f);
    }
}

void rs_verdict_print_json_counts(FILE *f, const char *const *names,
                                  const guint64 *counts, int n)
{
    int k;

    fputc('{', f);
    for (k = 0; k < n; k++) {
        fprintf(f, "%s\"%s\":%" G_GUINT64_FORMAT, k ? "," : "", names[k],
                counts[k]);
    }
    fputc('}', f);
}
