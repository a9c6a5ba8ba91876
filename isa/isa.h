/* isa.h — the instruction set of the NPU, as expanded from its tables.
 *
 * Every instruction is one 64-bit little-endian word. isa/isa.def is the one
 * place an instruction is described; this header and isa.c expand it (and
 * fields.def, formats.def, mods.def, pipes.def, sregs.def, dtypes.def) into
 * the opcode enum, the encoder, the decoder with its legality check, the
 * disassembler and the metadata the assembler, simulator and docs need.
 *
 * Encoding in one breath: OPC is bits 7:0; register fields RD/RS1..RS4 are
 * 5 bits at 8/13/18/23/28; DT/DT2 4 bits at 33/37; MOD 7 bits at 41;
 * immediates live in the upper half (IMM32 at 32, IMM48 at 16). Bits a
 * format does not use must be zero. docs/isa.md is generated from the table. */
#ifndef ISA_H
#define ISA_H

#include <stddef.h>
#include <stdint.h>

#include "isa/npu_util.h"

/* ---- dtypes ---------------------------------------------------------------- */
#ifndef ISA_DTYPE_DEFINED
#define ISA_DTYPE_DEFINED
typedef enum isa_dtype {
#define DT(id, suffix, bytes, kind, descr, doc) ISA_DT_##id,
#include "isa/dtypes.def"
#undef DT
    ISA_DT_COUNT
} isa_dtype;
#endif
#define D(x) (1u << ISA_DT_##x)

/* ---- pipes ----------------------------------------------------------------- */
typedef enum isa_pipe {
#define PIPE(id, name, doc) ISA_PIPE_##id,
#include "isa/pipes.def"
#undef PIPE
    ISA_PIPE_COUNT
} isa_pipe;
#define ISA_NPIPES ISA_PIPE_ALL  /* 7 real pipes; ALL is only a barrier operand */
/* Pipe column values of isa.def beyond the real pipes: the pipe is an operand. */
enum { ISA_PIPE_SPIPE = 16, ISA_PIPE_DPIPE, ISA_PIPE_BPIPE };

/* ---- fields, formats, modifiers, special registers ----------------------- */
typedef enum isa_field {
#define FIELD(id, lsb, width, sgn, doc) ISA_FLD_##id,
#include "isa/fields.def"
#undef FIELD
    ISA_FLD_COUNT
} isa_field;

typedef enum isa_fmt {
#define FMT(id, syntax, suffixes, doc) ISA_FMT_##id,
#include "isa/formats.def"
#undef FMT
    ISA_FMT_COUNT
} isa_fmt;

typedef enum isa_modclass { ISA_MC_NOMOD, ISA_MC_XFORM, ISA_MC_FIXM, ISA_MC_RND, ISA_MC_CMP, ISA_MC_COUNT } isa_modclass;

/* Named modifier values (the MOD field), from mods.def. */
enum {
    ISA_XFORM_NONE = 0, ISA_XFORM_ND2NZ = 1, ISA_XFORM_TRANS = 2, ISA_XFORM_PAD = 3,
    ISA_FIX_RELU = 1, ISA_FIX_QUANT = 2, ISA_FIX_ND = 4,
    ISA_RND_RN = 0, ISA_RND_RZ = 1, ISA_RND_RU = 2, ISA_RND_RD = 3, ISA_RND_RA = 4, ISA_RND_SAT = 8,
    ISA_CMP_EQ = 0, ISA_CMP_NE, ISA_CMP_LT, ISA_CMP_LE, ISA_CMP_GT, ISA_CMP_GE
};

typedef enum isa_sreg_id {
#define SREG(id, name, num, acc, doc) ISA_SR_##id = num,
#include "isa/sregs.def"
#undef SREG
} isa_sreg_id;

/* ---- cost classes (the timing model's key into the cost tables) -------- */
#define ISA_COST_LIST(X) X(SALU) X(SMUL) X(SDIV) X(SLD) X(SST) X(SLDG) X(SSTG) \
    X(BR) X(JMP) X(SREG) X(SYNC) X(SYS) X(DMA) X(CUBE) X(VSIMPLE) X(VMULC)   \
    X(VDIVC) X(VTRANS) X(VRED) X(VCONVC) X(VMASKC)
typedef enum isa_cost {
#define X(c) ISA_COST_##c,
    ISA_COST_LIST(X)
#undef X
    ISA_COST_COUNT
} isa_cost;

/* ---- instruction flags -------------------------------------------------- */
enum {
    ISA_F_END    = 1 << 0,  /* ends the kernel on this core (halt, trap) */
    ISA_F_BRANCH = 1 << 1,  /* conditional branch */
    ISA_F_JUMP   = 1 << 2,  /* unconditional jump (jal, jalr) */
    ISA_F_LOAD   = 1 << 3,  /* scalar load */
    ISA_F_STORE  = 1 << 4,  /* scalar store */
    ISA_F_GM     = 1 << 5,  /* touches global memory */
    ISA_F_SYNC   = 1 << 6,  /* synchronisation */
    ISA_F_SHAMT  = 1 << 7,  /* imm32 is a shift amount 0..63 */
    ISA_F_DTOPT  = 1 << 8,  /* the dtype suffix is optional (default u8: bytes) */
};

/* ---- opcodes ----------------------------------------------------------- */
typedef enum isa_op {
    ISA_OP_INVALID = 0,
#define DEF(id, mn, opc, fmt, pipe, cost, dts, dts2, mc, flags, doc) ISA_OP_##id,
#include "isa/isa.def"
#undef DEF
    ISA_OP_COUNT
} isa_op;

/* One row of the table, as data. */
typedef struct isa_info {
    const char *mnemonic;
    uint8_t opcode;
    isa_fmt fmt;
    int pipe;             /* isa_pipe, or ISA_PIPE_SPIPE/DPIPE/BPIPE */
    isa_cost cost;
    uint32_t dtypes;      /* legal DT values as a bit mask (0: no DT) */
    uint32_t dtypes2;     /* legal DT2 values (0: no DT2) */
    isa_modclass modclass;
    uint32_t flags;
    const char *doc;
} isa_info;

/* A decoded instruction: every field by name; those its format does not use
 * are zero. The executor reads these; it never shifts bits itself. */
typedef struct isa_insn {
    isa_op op;
    uint8_t rd, rs1, rs2, rs3, rs4;
    uint8_t dt, dt2, mod;
    uint8_t spipe, dpipe, fid, pipe;
    uint16_t sreg;
    int64_t imm;          /* IMM32 or IMM48 sign-extended, or IMM16 */
} isa_insn;

/* Metadata lookups. */
const isa_info *isa_info_of(isa_op op);             /* NULL for INVALID/out of range */
isa_op isa_op_from_mnemonic(const char *mn);          /* exact base mnemonic; INVALID if none */
isa_op isa_op_from_opcode(uint8_t opcode);
const char *isa_fmt_syntax(isa_fmt f);
const char *isa_fmt_suffixes(isa_fmt f);
const char *isa_fmt_name(isa_fmt f);
const char *isa_fmt_doc(isa_fmt f);
/* Mask of fields (1 << isa_field) a format uses, OPC included. */
uint32_t isa_fmt_fields(isa_fmt f);
void isa_field_info(isa_field f, const char **name, int *lsb, int *width, int *is_signed);

const char *isa_pipe_name(int pipe);                  /* "S".."FIX","ALL"; "?" */
int isa_pipe_from_name(const char *name);             /* -1 if unknown (case-insensitive) */
/* The pipe an instruction runs on (resolves SPIPE/DPIPE/BPIPE; pipe_barrier
 * ALL runs on S). */
isa_pipe isa_insn_pipe(const isa_insn *in);

const char *isa_dtype_suffix(int dt);                 /* "f32"...; "?" */
int isa_dtype_bytes(int dt);
int isa_dtype_kind(int dt);                           /* 'f', 's', 'u'; 0 if unknown */
int isa_dtype_from_suffix(const char *s);             /* -1 if unknown */
/* A vector repeat covers ISA_VREP_BYTES of its widest operand: the elements
 * of one repeat of an op on dt, or of a vconv dt -> dt2 (dt2 < 0: none);
 * docs/vector.md, "Operands and the repeat". */
#define ISA_VREP_BYTES 256
int isa_vrep_elems(int dt, int dt2);

/* Modifier tokens of a class: iterate i = 0.. until NULL. */
const char *isa_mod_token(isa_modclass mc, int i, int *value, int *mask, const char **doc);
/* Find a modifier token in class mc: returns 0 and sets value/mask, or -1. */
int isa_mod_lookup(isa_modclass mc, const char *tok, int *value, int *mask);
const char *isa_modclass_name(isa_modclass mc);

/* Special registers. */
int isa_sreg_from_name(const char *name);             /* number, or -1 */
const char *isa_sreg_name(int num);                   /* NULL if unknown */
int isa_sreg_writable(int num);                       /* 1 if RW */
int isa_sreg_count(void);
void isa_sreg_at(int i, const char **name, int *num, int *writable, const char **doc);

/* Scalar register names: x0..x31 and the ABI aliases below. */
const char *isa_reg_name(int r);                      /* ABI name: zero ra sp ... */
int isa_reg_from_name(const char *name);              /* -1 if unknown */

/* ---- encode / decode / disassemble -------------------------------------- */
/* Encode in into *word. Fails (EINVAL, message in d) if a field is out of
 * range, a dtype/modifier is not legal for the row, or a field the format
 * does not have is non-zero. */
npu_status isa_encode(const isa_insn *in, uint64_t *word, npu_diag *d);
/* Decode a word. Fails with "illegal instruction 0x...: <why>" for an
 * unknown opcode, non-zero unused bits, or an illegal field value. */
npu_status isa_decode(uint64_t word, isa_insn *out, npu_diag *d);
/* Write the assembler text of in ("vadd.f16 x5, x6, x7, x8"); pc gives
 * pc-relative targets as absolute hex addresses when sym is NULL, or as
 * symbol+offset through sym. Returns the length written (snprintf-like). */
typedef const char *(*isa_symbolizer)(void *user, uint64_t addr, uint64_t *offset);
int isa_disasm(const isa_insn *in, uint64_t pc, char *buf, size_t len,
               isa_symbolizer sym, void *user);

/* ---- packed config registers (isa/cfgregs.def) --------------------------- */
typedef struct isa_cfgfield {
    const char *reg;      /* "DMA_CFG", ... */
    const char *name;     /* "nburst", ... */
    int lsb, width;
    const char *doc;
} isa_cfgfield;
/* The i-th field of all config registers (table order); NULL past the end. */
const isa_cfgfield *isa_cfg_field(int i);
/* The i-th config register: its id, the operand that carries it, and a doc
 * line; NULL past the end. */
const char *isa_cfg_reg(int i, const char **operand, const char **doc);

/* A random legal instruction of row op (for table tests and fuzzing): every
 * field uniformly within what the row accepts. */
npu_status isa_random_insn(isa_op op, npu_rng *rng, isa_insn *out, npu_diag *d);

/* Width/offset helpers for the packed config registers (docs/isa.md). */
#define ISA_DMA_CFG(nburst, bytes)      (((uint64_t)(bytes) << 16) | ((uint64_t)(nburst) & 0xffff))
#define ISA_DMA_STRIDES(src, dst)       (((uint64_t)(dst) << 32) | ((uint64_t)(src) & 0xffffffffu))
#define ISA_MM_CFG(m, k, n, init)       (((uint64_t)((init) ? 1 : 0) << 48) | ((uint64_t)(n) << 32) | \
                                         ((uint64_t)(k) << 16) | ((uint64_t)(m) & 0xffff))
#define ISA_VCFG(rep, db, s0b, s1b, dr, s0r, s1r) \
    ((uint64_t)(rep) | ((uint64_t)(db) << 8) | ((uint64_t)(s0b) << 16) | ((uint64_t)(s1b) << 24) | \
     ((uint64_t)(dr) << 32) | ((uint64_t)(s0r) << 40) | ((uint64_t)(s1r) << 48))

#endif
