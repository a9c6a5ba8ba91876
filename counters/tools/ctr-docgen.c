/* ctr-docgen — print docs/counters.md, generated from counters/events.def,
 * groups.def and metrics.def (tests/e2e/t_counters_docs.sh fails when the
 * committed copy is stale). Usage: ctr-docgen > docs/counters.md */
#include <stdio.h>

#include "counters/ctr.h"

int main(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: ctr-docgen > docs/counters.md\n");
        return 2;
    }
    npu_buf b = {0};
    ctr_doc_markdown(&b);
    if (b.oom) {
        fprintf(stderr, "ctr-docgen: out of memory\n");
        npu_buf_free(&b);
        return 1;
    }
    int rc = fwrite(b.data, 1, b.len, stdout) == b.len ? 0 : 1;
    npu_buf_free(&b);
    return rc;
}
