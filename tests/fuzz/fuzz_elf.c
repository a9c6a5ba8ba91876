/* fuzz_elf — the strict kernel ELF loader (elf_load_mem) on arbitrary
 * bytes, then the symbol lookups on what loaded. Seeds: the library kernels
 * assembled at fuzz time. */
#include "fuzz_common.h"
#include "frontend/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npu_diag d = { 0 };
    elf_image img = { 0 };
    if (elf_load_mem(data, size, "fuzz.elf", &img, &d) == NPU_OK) {
        uint64_t off;
        for (size_t i = 0; i < img.nsyms; i++)
            if (elf_find_sym(&img, img.syms[i].name) == NULL)
                abort();  /* every loaded symbol must be found by name */
        elf_sym_at(&img, img.entry, &off);
        elf_sym_at(&img, img.ntext * 8, &off);
    }
    elf_free(&img);
    return 0;
}
