/* elf.h — kernel ELF files: writer (from asm_output) and strict loader.
 *
 * A kernel is an ELF64 little-endian ET_EXEC file with e_machine
 * ELF_EM_NPU (0x4e50, "NP": unassigned by the ELF registry), sections
 * .text/.rodata/.data/.bss/.symtab/.strtab/.shstrtab, one PT_LOAD per
 * non-empty section, and an entry point inside .text. Addresses (docs/elf.md):
 * .text at instruction address 0 (pc = byte address, 8 bytes per
 * instruction); .rodata, .data and .bss in global memory from
 * ASM_GM_DATA_BASE (0x1_0000_0000), in that order.
 *
 * The loader rejects every malformed file with a message naming the file,
 * the problem and the byte offset; it never reads out of bounds. */
#ifndef ELF_H
#define ELF_H

#include <stddef.h>
#include <stdint.h>

#include "frontend/asm.h"
#include "isa/npu_util.h"

#define ELF_EM_NPU 0x4e50
/* e_flags: the ISA version the kernel was assembled for. */
#define ELF_NPU_FLAGS 0x1

/* Segment kinds (elf_seg.kind) and symbol sections (elf_sym.section) use
 * the asm_section values: ASM_SEC_TEXT, ASM_SEC_RODATA, ASM_SEC_DATA,
 * ASM_SEC_BSS. */
typedef struct elf_seg {
    uint64_t addr, size, filesz;  /* GM address, memory size, bytes in file (0 for bss) */
    uint8_t *data;                /* filesz bytes (NULL when filesz is 0); the rest is zero */
    int kind;                     /* ASM_SEC_RODATA / DATA / BSS */
} elf_seg;

typedef struct elf_sym {
    char *name;
    uint64_t addr, size;
    int is_func, is_global;
    int section;                  /* ASM_SEC_* */
} elf_sym;

typedef struct elf_image {
    uint64_t *text;               /* ntext instruction words */
    size_t ntext;
    uint64_t text_addr;           /* always 0 */
    uint64_t entry;
    elf_seg *segs;                /* data segments (not .text), by address */
    size_t nsegs;
    elf_sym *syms;                /* every symbol of .symtab but the null and section symbols */
    size_t nsyms;
} elf_image;

/* Write o as a kernel ELF, atomically (temp file + rename). */
npu_status elf_write(const char *path, const asm_output *o, npu_diag *d);
/* The same into a buffer (the caller frees b with npu_buf_free). */
npu_status elf_write_mem(const asm_output *o, npu_buf *b, npu_diag *d);

/* Load a kernel. On failure img is left empty (elf_free is still safe). */
npu_status elf_load_file(const char *path, elf_image *img, npu_diag *d);
npu_status elf_load_mem(const void *buf, size_t len, const char *name, elf_image *img, npu_diag *d);
void elf_free(elf_image *img);

/* Symbol by name (NULL if none). */
const elf_sym *elf_find_sym(const elf_image *img, const char *name);
/* The innermost (smallest containing, else nearest preceding) .text symbol
 * at pc; *offset = pc - sym->addr. NULL when no .text symbol precedes pc. */
const elf_sym *elf_sym_at(const elf_image *img, uint64_t pc, uint64_t *offset);

#endif
