/* asm_int.h — internals of the assembler shared by its .c files. */
#ifndef ASM_INT_H
#define ASM_INT_H

#include "frontend/asm.h"
#include "isa/isa.h"

/* Limits that keep a runaway source from eating the machine. */
#define ASM_MAX_DEPTH 64             /* nested macro / .include / .rept frames */
#define ASM_MAX_LINES 1000000        /* total lines processed, after expansion */
#define ASM_MAX_TEXT (1u << 20)      /* instructions in .text */
#define ASM_MAX_REPT 1000000         /* one .rept count */
#define ASM_MAX_SECTION (256u << 20) /* bytes in one data section */

/* Where a statement came from. */
typedef struct asm_loc {
    const char *file;
    int line, col;
    const char *src;          /* the source line */
    const char *macro;        /* innermost macro being expanded, or NULL */
    const char *call_file;    /* where that macro was called */
    int call_line;
    int colfixed;             /* col is the pseudo-instruction's: keep it */
} asm_loc;

/* A value: absolute (sec < 0) or an offset into a data section that is
 * placed only once every section's size is known. .text labels are always
 * absolute (.text starts at 0). */
typedef struct asm_val {
    int64_t v;
    int sec;
} asm_val;

/* Expression tree. Symbols are resolved by name at evaluation time, so an
 * expression can be parsed before its labels are defined. */
enum { EX_NUM, EX_SYM, EX_UN, EX_BIN, EX_COND };
typedef struct asm_expr {
    int kind;
    int op;                   /* operator character or token code */
    asm_val val;              /* EX_NUM */
    const char *sym;          /* EX_SYM */
    int col;                  /* column of the node (for messages) */
    struct asm_expr *a, *b, *c;
} asm_expr;

#endif
