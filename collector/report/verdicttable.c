/* Verdict names looked up in their tables; see verdicttable.h. */
#include "report/verdicttable.h"

#include <string.h>

int rs_verdict_index(const char *const *names, int n, const char *v)
{
    int i;

    for (i = 0; i < n; i++) {
        if (!strcmp(names[i], v)) {
            return i;
        }
    }
    return -1;
}
