/* fuzz_common.h — shared by the libFuzzer targets of tests/fuzz/.
 *
 * Each target defines LLVMFuzzerTestOneInput. Built with
 * -fsanitize=fuzzer it is a libFuzzer binary; built with -DFUZZ_REPLAY (a
 * plain build) it gets the main() below, which replays files through the
 * target (crash reproducers, the corpus), so a finding can be re-run
 * without clang. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "isa/npu_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef FUZZ_REPLAY
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE...   (replays inputs through the fuzz target)\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        npu_diag d = { 0 };
        uint8_t *buf;
        size_t len;
        if (npu_read_file(argv[i], 0, 0, &buf, &len, &d) != NPU_OK) {
            fprintf(stderr, "%s\n", d.msg);
            return 1;
        }
        LLVMFuzzerTestOneInput(buf, len);
        npu_free(buf);
    }
    return 0;
}
#endif
#endif
