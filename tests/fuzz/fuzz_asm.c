/* fuzz_asm — the assembler (asm_assemble_mem) on arbitrary source text;
 * when it assembles, the output also goes through elf_write_mem and back
 * through elf_load_mem (writer and loader must agree). Seeds: the kernels/ sources,
 * tests/check/ and tests/data/asm. kernels/include is the include path
 * (run from the repository root), so the library kernels' .include works. */
#include "fuzz_common.h"
#include "frontend/asm.h"
#include "frontend/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)   /* bigger sources only make each run slower */
        return 0;
    npu_diag d = { 0 };
    asm_output o = { 0 };
    static const char *const inc[] = { "kernels/include" };
    asm_opts opts = { .incdirs = inc, .nincdirs = 1, .max_errors = 10 };
    if (asm_assemble_mem((const char *)data, size, "fuzz.s", &opts, &o, &d) == NPU_OK) {
        npu_buf b = { 0 };
        if (elf_write_mem(&o, &b, &d) == NPU_OK) {
            elf_image img = { 0 };
            if (elf_load_mem(b.data, b.len, "fuzz.elf", &img, &d) != NPU_OK)
                abort();  /* the writer's output must load */
            elf_free(&img);
        }
        npu_buf_free(&b);
    }
    for (size_t i = 0; i < o.nmsgs; i++) {   /* the message formatter too */
        npu_buf b = { 0 };
        asm_msg_format(&o.msgs[i], &b);
        npu_buf_free(&b);
    }
    asm_output_free(&o);
    return 0;
}
