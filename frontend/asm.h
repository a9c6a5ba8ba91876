/* asm.h — the NPU assembler (docs/asm.md).
 *
 * Source text -> asm_output: the .text words, the data sections (placed in
 * GM, see docs/elf.md), the symbols and the entry point; elf_write() turns
 * an asm_output into a kernel ELF. Operand parsing is driven by the ISA
 * tables (isa_fmt_syntax, isa_fmt_suffixes, mods.def): no instruction has
 * parsing code of its own.
 *
 * Errors: the assembler collects every error of a file (up to
 * ASM_MAX_ERRORS) into asm_output.msgs, each with file, line, column, the
 * message and the source line; the call then fails and d holds the first
 * error plus a count. Nothing is written when there are errors. */
#ifndef ASM_H
#define ASM_H

#include <stddef.h>
#include <stdint.h>

#include "isa/npu_util.h"

#define ASM_MAX_ERRORS 50
/* Where the data sections live: .rodata, .data, .bss are laid out in this
 * order from here in global memory (docs/elf.md). */
#define ASM_GM_DATA_BASE 0x0000000100000000ull

/* Sections of a kernel. Order is ABI (elf_sym.section, elf_seg.kind). */
typedef enum asm_section {
    ASM_SEC_TEXT = 0,
    ASM_SEC_RODATA,
    ASM_SEC_DATA,
    ASM_SEC_BSS,
    ASM_SEC_COUNT,
    ASM_SEC_ABS = 100       /* .equ/.set constants (not emitted into the ELF) */
} asm_section;

/* Symbol types (ELF STT_*). */
enum { ASM_SYM_NOTYPE = 0, ASM_SYM_OBJECT = 1, ASM_SYM_FUNC = 2 };

typedef struct asm_sym {
    char *name;
    uint64_t addr;          /* byte address: pc for .text, GM address for data */
    uint64_t size;          /* .size, or automatic for functions (see asm.md) */
    int section;            /* asm_section */
    int type;               /* ASM_SYM_* */
    int global;             /* .globl */
} asm_sym;

/* One diagnostic (error or warning) with where it happened. */
typedef struct asm_msg {
    char *file;
    int line, col;          /* 1-based; col 0 if not known */
    int is_warning;
    char *msg;
    char *src;              /* the source line (without newline), or NULL */
} asm_msg;

typedef struct asm_data {
    uint8_t *bytes;         /* NULL for .bss */
    uint64_t size;
    uint64_t addr;          /* GM base address of the section */
    uint64_t align;         /* largest .align seen (>= 8) */
} asm_data;

typedef struct asm_output {
    uint64_t *text;         /* instruction words, text[i] at pc 8*i */
    size_t ntext;
    uint32_t *text_line;    /* source line of each word (for listings) */
    asm_data data[ASM_SEC_COUNT];  /* [ASM_SEC_RODATA..BSS]; [TEXT] unused */
    asm_sym *syms;          /* labels of .text/.rodata/.data/.bss, sorted by section then addr */
    size_t nsyms;
    uint64_t entry;         /* _start, else main, else the first global function, else 0 */
    asm_msg *msgs;
    size_t nmsgs;
    size_t nerrors;
} asm_output;

/* Command-line style options. */
typedef struct asm_define { const char *name; int64_t value; } asm_define;
typedef struct asm_opts {
    const char *const *incdirs;   /* -I paths, searched after the including file's dir */
    size_t nincdirs;
    const asm_define *defines;    /* -D NAME=VALUE */
    size_t ndefines;
    int max_errors;               /* 0: ASM_MAX_ERRORS */
} asm_opts;

/* Assemble a file / a buffer. out is filled (and must be freed with
 * asm_output_free) whether or not the call succeeds: on failure, out->msgs
 * holds every error. */
npu_status asm_assemble_file(const char *path, const asm_opts *opts, asm_output *out, npu_diag *d);
npu_status asm_assemble_mem(const char *text, size_t len, const char *name, const asm_opts *opts,
                            asm_output *out, npu_diag *d);
void asm_output_free(asm_output *out);

/* Format one message as "file:line:col: error: msg\n  src\n  ^\n" into b. */
void asm_msg_format(const asm_msg *m, npu_buf *b);

/* Parse "NAME=VALUE" (VALUE an integer expression of literals; "NAME" alone
 * is 1). The name points into arg. 0 ok, -1 bad. */
int asm_parse_define(const char *arg, char *name, size_t namelen, int64_t *value);

/* The command bodies behind `npusim asm` and `npusim dis` (argv[0] is the
 * command name). Return a process exit code (0 ok, 1 failure, 2 usage). */
int asm_cmd_asm(int argc, char **argv);
int asm_cmd_dis(int argc, char **argv);

#endif
