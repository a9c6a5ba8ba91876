/* npt-fuzz — the trace reader's fuzz target.
 *
 * Built as a normal tool it replays files: `npt-fuzz FILE...` runs the
 * target on each (a corpus or a crash reproducer). Built with clang's
 * libFuzzer it fuzzes:
 *   clang -std=c11 -D_GNU_SOURCE -I. -DNPT_LIBFUZZER -g -O1 \
 *     -fsanitize=fuzzer,address,undefined traces/tools/npt-fuzz.c traces/[a-z]*.c \
 *     isa/npu_util.c -lcjson -lz -lm -lpthread -o npt-fuzz
 *   ./npt-fuzz -max_len=65536 corpus/      (seed corpus: traces from npt-synth)
 * The target opens the bytes as a trace, iterates every event (also with a
 * filter and a seek), verifies, and runs the three exporters to /dev/null. */
#include <stdio.h>
#include <stdlib.h>

#include "traces/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npu_diag d = { 0 };
    trc_reader *r = trc_open_mem(data, size, &d);
    if (!r)
        return 0;
    trc_event e;
    trc_iter *it = trc_iter_new(r, NULL, &d);
    uint64_t n = 0;
    while (it && trc_iter_next(it, &e))
        n++;
    trc_iter_free(it);
    trc_filter f = TRC_FILTER_ALL;
    f.core = 1;
    f.pipe_mask = 1u << TRC_PIPE_M | 1u << TRC_PIPE_NONE;
    f.t_lo = 100;
    it = trc_iter_new(r, &f, &d);
    for (int i = 0; it && i < 3 && trc_iter_next(it, &e); i++)
        ;
    if (it)
        trc_iter_seek(it, 50);
    while (it && trc_iter_next(it, &e))
        ;
    trc_iter_free(it);
    trc_reader_verify(r, &d);
    FILE *null = fopen("/dev/null", "w");
    if (null) {
        trc_export_opts o = { .filter = TRC_FILTER_ALL };
        trc_export_chrome(r, null, &o, &d);
        trc_export_folded(r, null, 0, &d);
        trc_export_folded(r, null, 1, &d);
        trc_export_csv(r, null, &o, &d);
        fclose(null);
    }
    trc_close(r);
    return 0;
}

#ifndef NPT_LIBFUZZER
int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: npt-fuzz FILE...   (replays inputs through the fuzz target)\n");
        return argc < 2 ? 2 : 0;
    }
    for (int i = 1; i < argc; i++) {
        npu_diag d = { 0 };
        uint8_t *buf;
        size_t len;
        if (npu_read_file(argv[i], 0, 0, &buf, &len, &d) != NPU_OK) {
            fprintf(stderr, "npt-fuzz: %s\n", d.msg);
            return 1;
        }
        LLVMFuzzerTestOneInput(buf, len);
        npu_free(buf);
        printf("%s: ok\n", argv[i]);
    }
    return 0;
}
#endif
