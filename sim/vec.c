/* vec.c — the vector unit's functional model (every V row of isa/isa.def
 * except vmask/vmaskc, which the executor handles, and mov.ub2ub, a data
 * move in dma.c). docs/vector.md is the reference for every rule here.
 *
 * Shape of the code: an instruction is a list of operands (each a
 * geometry: strided blocks, a per-repeat mask block, or packed results),
 * then two passes over its repeats. Pass 1 checks every range the
 * instruction touches and reports it to ctx->access, so a faulting
 * instruction changes nothing and the checks see every access before the
 * data moves. Pass 2 (skipped in nodata mode) gathers each repeat's source
 * elements as raw bits, computes, and scatters the enabled results. */
#include "sim/units_int.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "isa/isa_fp.h"

#define VBLK 32u
#define VMAX_ELEMS 256

/* Operand geometries. */
enum {
    G_STRIDED,   /* element i of repeat r at base + r*rep*32 + (i/epb)*blk*32 + (i%epb)*size */
    G_MASKW,     /* vcmpv result: one 32-byte mask block at base + r*rep*32 */
    G_MASKR,     /* vsel mask: E/8 bytes at base + r*32 */
    G_PACKED,    /* cnt consecutive elements at base + r*cnt*size */
};

typedef struct vopnd {
    int geo;
    int is_write;
    uint64_t base, blk, rep;   /* blk, rep in 32-byte blocks */
    int size;                  /* element bytes */
    int cnt;                   /* G_PACKED: elements per repeat */
    const char *what;          /* "dst", "src0", ... for messages */
} vopnd;

typedef struct vjob {
    sim_unit_ctx *ctx;
    const isa_insn *in;
    const char *mn;
    int E;                     /* elements per repeat */
    uint32_t repeats;
    vopnd op[4];
    int nop;
    int use_mask;              /* vbrcb ignores the mask */
    int nmask_ok, nmask_n;     /* normal mode: the enable bits are the same every repeat */
    uint8_t nmask[VMAX_ELEMS];
} vjob;

/* ---- the mask ------------------------------------------------------------ */

/* Enable bits of repeat r into en[0..E). Normal mode: bit i enables element
 * i when E <= 128; with E = 256 (1-byte dtypes) bit i enables elements 2i
 * and 2i+1. Counter mode: element i of repeat r is enabled iff
 * r*E + i < count. */
static int mask_of(vjob *j, uint32_t r, uint8_t *en)
{
    const sim_vmask *m = j->ctx->vmask;
    int n = 0;
    if (!j->use_mask || !m) {
        memset(en, 1, (size_t)j->E);
        return j->E;
    }
    if (m->counter_mode) {
        uint64_t first = (uint64_t)r * (uint64_t)j->E;
        for (int i = 0; i < j->E; i++)
            n += en[i] = first + (uint64_t)i < m->count;
        return n;
    }
    if (!j->nmask_ok) {
        int shift = j->E > 128 ? 1 : 0;
        for (int i = 0; i < j->E; i++) {
            int b = i >> shift;
            n += j->nmask[i] = (uint8_t)((m->bits[b >> 6] >> (b & 63)) & 1u);
        }
        j->nmask_n = n;
        j->nmask_ok = 1;
    }
    memcpy(en, j->nmask, (size_t)j->E);
    return j->nmask_n;
}

/* ---- geometry ------------------------------------------------------------ */

static inline uint64_t elem_addr(const vopnd *o, uint32_t r, int i)
{
    switch (o->geo) {
    case G_STRIDED: {
        int epb = (int)VBLK / o->size;
        return o->base + (uint64_t)r * o->rep * VBLK + (uint64_t)(i / epb) * o->blk * VBLK +
               (uint64_t)(i % epb) * (uint64_t)o->size;
    }
    case G_PACKED:
        return o->base + ((uint64_t)r * (uint64_t)o->cnt + (uint64_t)i) * (uint64_t)o->size;
    default:
        return o->base;
    }
}

/* Pass 1 for one operand: check and report every range of every repeat.
 * A strided block with a partial mask reports the span from its first to
 * its last enabled element; a block with none is not touched. */
static npu_status opnd_ranges(vjob *j, const vopnd *o, npu_diag *d)
{
    sim_rng rg;
    sim_rng_init(&rg, j->ctx, SIM_SP_UB, o->is_write, j->mn);
    npu_status st = sim_chk_align(j->ctx, SIM_SP_UB, o->base, o->what, j->mn, d);
    if (st)
        return st;
    uint8_t en[VMAX_ELEMS];
    for (uint32_t r = 0; r < j->repeats && !st; r++) {
        switch (o->geo) {
        case G_STRIDED: {
            mask_of(j, r, en);
            int epb = (int)VBLK / o->size;
            int nblk = j->E / epb;
            for (int b = 0; b < nblk && !st; b++) {
                int lo = -1, hi = -1;
                for (int e = 0; e < epb; e++)
                    if (en[b * epb + e]) {
                        if (lo < 0)
                            lo = e;
                        hi = e;
                    }
                if (lo < 0)
                    continue;
                uint64_t a = elem_addr(o, r, b * epb + lo);
                st = sim_rng_add(&rg, a, (uint64_t)(hi - lo + 1) * (uint64_t)o->size, d);
            }
            break;
        }
        case G_MASKW:
            st = sim_rng_add(&rg, o->base + (uint64_t)r * o->rep * VBLK, VBLK, d);
            break;
        case G_MASKR:
            st = sim_rng_add(&rg, o->base + (uint64_t)r * VBLK, (uint64_t)j->E / 8, d);
            break;
        case G_PACKED:
            st = sim_rng_add(&rg, elem_addr(o, r, 0), (uint64_t)o->cnt * (uint64_t)o->size, d);
            break;
        }
    }
    if (!st)
        st = sim_rng_flush(&rg, d);
    return st;
}

/* UB bank model (docs/vector.md): 32-byte block q = addr / 32 lives in bank
 * q % banks, bank group bank % groups. A repeat runs in 8 beats; in beat b
 * the unit reads block b of each strided source and writes block b of the
 * strided destination. Two reads of different blocks in one bank cost one
 * extra cycle each beyond the first; a write in the bank group of a read
 * of another block costs one extra cycle (reading the block being written
 * is the same port access, not a conflict). */
static void bank_conflicts(const vjob *j, sim_work *w)
{
    const sim_unit_ctx *c = j->ctx;
    if (!c->ub_banks || !c->ub_bank_groups)
        return;
    for (uint32_t r = 0; r < j->repeats; r++) {
        for (int b = 0; b < 8; b++) {
            uint64_t rd[3];
            int nrd = 0;
            int have_w = 0;
            uint64_t wq = 0;
            for (int k = 0; k < j->nop; k++) {
                const vopnd *o = &j->op[k];
                if (o->geo != G_STRIDED)
                    continue;
                int epb = (int)VBLK / o->size;
                if (b >= j->E / epb)
                    continue;
                uint64_t q = elem_addr(o, r, b * epb) / VBLK;
                if (o->is_write) {
                    have_w = 1;
                    wq = q;
                } else if (nrd < 3) {
                    rd[nrd++] = q;
                }
            }
            int bc = 0;
            for (int x = 0; x < nrd; x++)
                for (int y = 0; y < x; y++)
                    if (rd[x] != rd[y] && rd[x] % c->ub_banks == rd[y] % c->ub_banks)
                        bc = 1;
            w->bank_conflicts += (uint32_t)bc;
            if (have_w) {
                uint32_t wg = (uint32_t)(wq % c->ub_banks) % c->ub_bank_groups;
                /* a read of the very block being written (vmla/vaxpy's
                 * accumulator, an in-place operand) is the same row of the
                 * same bank: one read-modify-write port access, no second
                 * access to the group to collide with */
                for (int x = 0; x < nrd; x++)
                    if (rd[x] != wq && (uint32_t)(rd[x] % c->ub_banks) % c->ub_bank_groups == wg) {
                        w->bankgroup_conflicts++;
                        break;
                    }
            }
        }
    }
}

/* ---- elements ---------------------------------------------------------- */

static inline uint32_t ld_bits(const uint8_t *p, int size)
{
    switch (size) {
    case 1: return p[0];
    case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
    default: { uint32_t v; memcpy(&v, p, 4); return v; }
    }
}

static inline void st_bits(uint8_t *p, int size, uint32_t v)
{
    switch (size) {
    case 1: p[0] = (uint8_t)v; break;
    case 2: { uint16_t h = (uint16_t)v; memcpy(p, &h, 2); break; }
    default: memcpy(p, &v, 4); break;
    }
}

static inline int is_float(int dt)
{
    return dt == ISA_DT_F32 || dt == ISA_DT_F16 || dt == ISA_DT_BF16 || dt == ISA_DT_E4M3 ||
           dt == ISA_DT_E5M2;
}

/* Float value of raw bits (exact widening). */
static inline float fval(int dt, uint32_t b)
{
    switch (dt) {
    case ISA_DT_F32: return isa_fp_bits_f32(b);
    case ISA_DT_F16: return isa_fp_f16_to_f32((uint16_t)b);
    case ISA_DT_BF16: return isa_fp_bf16_to_f32((uint16_t)b);
    default: return isa_fp_to_f32((isa_dtype)dt, b);
    }
}

/* Bits of an f32 result rounded once (RNE) to dt; every NaN becomes the
 * canonical positive quiet NaN of dt, so results do not depend on the host. */
static inline uint32_t fbits(int dt, float v)
{
    if (isnan(v))
        v = isa_fp_bits_f32(ISA_FP_NAN_F32);
    switch (dt) {
    case ISA_DT_F32: return isa_fp_f32_bits(v);
    case ISA_DT_F16: return isa_fp_f32_to_f16(v);
    case ISA_DT_BF16: return isa_fp_f32_to_bf16(v);
    default: return isa_fp_from_f32((isa_dtype)dt, v, ISA_RM_RNE, 0);
    }
}

/* Bits of a double result rounded once (RNE) to dt. */
static inline uint32_t dbits(int dt, double v)
{
    if (isnan(v))
        v = (double)isa_fp_bits_f32(ISA_FP_NAN_F32);
    return isa_fp_from_double((isa_dtype)dt, v, ISA_RM_RNE, 0);
}

/* Round an f32 value to dt's precision and back (vmla/vaxpy intermediates). */
static inline float fround(int dt, float v)
{
    return dt == ISA_DT_F32 ? v : fval(dt, fbits(dt, v));
}

static inline int64_t ival(int dt, uint32_t b)
{
    switch (dt) {
    case ISA_DT_S32: return (int32_t)b;
    case ISA_DT_S16: return (int16_t)b;
    case ISA_DT_S8: return (int8_t)b;
    default: return b;   /* unsigned kinds */
    }
}

/* Two's complement wrap: keep the low bits. */
static inline uint32_t ibits(int size, int64_t v)
{
    uint64_t u = (uint64_t)v;
    return size == 4 ? (uint32_t)u : size == 2 ? (uint32_t)(u & 0xffff) : (uint32_t)(u & 0xff);
}

/* ---- transcendental functions: a fixed algorithm in double ------------------
 * Only + - * / and exact scalings, so the result is the same on every IEEE
 * host (libm's exp/log differ between versions). Accuracy is about one
 * double ulp; rounded once to f32/f16 that is correctly rounded except in
 * rare near-halfway cases. */
static const double LN2_HI = 6.93147180369123816490e-01; /* low 32 bits zero */
static const double LN2_LO = 1.90821492927058770002e-10;

static double det_exp(double x)
{
    if (isnan(x))
        return x;
    if (x > 709.782712893384)
        return INFINITY;
    if (x < -745.2)
        return 0.0;
    double k = floor(x * 1.44269504088896338700 + 0.5);
    double r = (x - k * LN2_HI) - k * LN2_LO;
    /* Taylor to degree 13: |r| <= 0.35, truncation below 1e-17. */
    double p = 1.0 / 6227020800.0;
    static const double inv_fact[] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0,
                                      1.0 / 362880.0,    1.0 / 40320.0,    1.0 / 5040.0,
                                      1.0 / 720.0,       1.0 / 120.0,      1.0 / 24.0,
                                      1.0 / 6.0,         0.5,              1.0,
                                      1.0};
    for (size_t i = 0; i < NPU_ARRAY_LEN(inv_fact); i++)
        p = p * r + inv_fact[i];
    return ldexp(p, (int)k);
}

static double det_log(double x)
{
    if (isnan(x) || x < 0)
        return NAN;
    if (x == 0)
        return -INFINITY;
    if (isinf(x))
        return x;
    int e;
    double m = frexp(x, &e);         /* x = m * 2^e, m in [0.5, 1) */
    if (m < 0.70710678118654752440) {
        m *= 2;
        e -= 1;
    }
    double f = (m - 1) / (m + 1);    /* |f| <= 0.1716 */
    double s = f * f, p = 0;
    for (int k = 21; k >= 3; k -= 2)
        p = p * s + 1.0 / k;
    double lnm = 2 * f + 2 * f * s * p;
    return (double)e * LN2_HI + ((double)e * LN2_LO + lnm);
}

/* ---- the operations ------------------------------------------------------ */

static inline float fmaxn(float a, float b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    if (a == b)   /* +0 vs -0: max is +0 */
        return signbit(a) ? b : a;
    return a > b ? a : b;
}

static inline float fminn(float a, float b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    if (a == b)
        return signbit(a) ? a : b;
    return a < b ? a : b;
}

static int cmp_f(int c, float a, float b)
{
    switch (c) {
    case ISA_CMP_EQ: return a == b;
    case ISA_CMP_NE: return a != b;
    case ISA_CMP_LT: return a < b;
    case ISA_CMP_LE: return a <= b;
    case ISA_CMP_GT: return a > b;
    default: return a >= b;
    }
}

static int cmp_i(int c, int64_t a, int64_t b)
{
    switch (c) {
    case ISA_CMP_EQ: return a == b;
    case ISA_CMP_NE: return a != b;
    case ISA_CMP_LT: return a < b;
    case ISA_CMP_LE: return a <= b;
    case ISA_CMP_GT: return a > b;
    default: return a >= b;
    }
}

/* Elementwise result of op on raw bits a, b (b: src1 or the scalar) and the
 * destination's old bits c (vmla, vaxpy). */
static uint32_t elem_op(isa_op op, int dt, int size, uint32_t a, uint32_t b, uint32_t c)
{
    if (is_float(dt)) {
        float x = fval(dt, a), y = fval(dt, b);
        switch (op) {
        case ISA_OP_VADD: case ISA_OP_VADDS: return fbits(dt, x + y);
        case ISA_OP_VSUB: return fbits(dt, x - y);
        case ISA_OP_VMUL: case ISA_OP_VMULS: return fbits(dt, x * y);
        case ISA_OP_VDIV: return fbits(dt, x / y);
        case ISA_OP_VMAX: case ISA_OP_VMAXS: return fbits(dt, fmaxn(x, y));
        case ISA_OP_VMIN: case ISA_OP_VMINS: return fbits(dt, fminn(x, y));
        case ISA_OP_VMLA: case ISA_OP_VAXPY:
            return fbits(dt, fround(dt, x * y) + fval(dt, c));
        case ISA_OP_VEXP: return dbits(dt, det_exp((double)x));
        case ISA_OP_VLN: return dbits(dt, det_log((double)x));
        case ISA_OP_VSQRT: return fbits(dt, sqrtf(x));
        case ISA_OP_VRSQRT: return dbits(dt, 1.0 / sqrt((double)x));
        case ISA_OP_VREC: return fbits(dt, 1.0f / x);
        case ISA_OP_VABS: return fbits(dt, fabsf(x));
        case ISA_OP_VRELU: return fbits(dt, isnan(x) ? x : x > 0 ? x : 0.0f);
        default: return a;
        }
    }
    int64_t x = ival(dt, a), y = ival(dt, b);
    switch (op) {
    case ISA_OP_VADD: case ISA_OP_VADDS: return ibits(size, (int64_t)((uint64_t)x + (uint64_t)y));
    case ISA_OP_VSUB: return ibits(size, (int64_t)((uint64_t)x - (uint64_t)y));
    case ISA_OP_VMUL: case ISA_OP_VMULS: return ibits(size, (int64_t)((uint64_t)x * (uint64_t)y));
    case ISA_OP_VMAX: case ISA_OP_VMAXS: return ibits(size, x > y ? x : y);
    case ISA_OP_VMIN: case ISA_OP_VMINS: return ibits(size, x < y ? x : y);
    case ISA_OP_VAND: return a & b;
    case ISA_OP_VOR: return a | b;
    case ISA_OP_VABS: return ibits(size, x < 0 ? (int64_t)(0 - (uint64_t)x) : x);
    case ISA_OP_VRELU: return ibits(size, x > 0 ? x : 0);
    default: return a;
    }
}

/* Pairwise tree over n (a power of two) f32 lanes: level by level,
 * v[i] = v[2i] (op) v[2i+1]. */
static float tree(isa_op op, float *v, int n)
{
    for (; n > 1; n /= 2)
        for (int i = 0; i < n / 2; i++) {
            float a = v[2 * i], b = v[2 * i + 1];
            v[i] = op == ISA_OP_VCADD || op == ISA_OP_VCGADD ? a + b
                   : op == ISA_OP_VCMIN                     ? fminn(a, b)
                                                            : fmaxn(a, b);
        }
    return v[0];
}

static float red_identity(isa_op op)
{
    return op == ISA_OP_VCADD || op == ISA_OP_VCGADD ? 0.0f : op == ISA_OP_VCMIN ? INFINITY : -INFINITY;
}

/* Raw bits of the enabled elements of repeat r of a strided operand
 * (disabled lanes: 0), walking block by block. */
static void gather(const uint8_t *ub, const vopnd *o, uint32_t r, int E, const uint8_t *en, uint32_t *out)
{
    int size = o->size, epb = (int)VBLK / size;
    uint64_t rb = o->base + (uint64_t)r * o->rep * VBLK;
    for (int b = 0, i = 0; b < E / epb; b++) {
        const uint8_t *p = ub + rb + (uint64_t)b * o->blk * VBLK;
        for (int e = 0; e < epb; e++, i++)
            out[i] = en[i] ? ld_bits(p + e * size, size) : 0;
    }
}

static void scatter(uint8_t *ub, const vopnd *o, uint32_t r, int E, const uint8_t *en, const uint32_t *in)
{
    int size = o->size, epb = (int)VBLK / size;
    uint64_t rb = o->base + (uint64_t)r * o->rep * VBLK;
    for (int b = 0, i = 0; b < E / epb; b++) {
        uint8_t *p = ub + rb + (uint64_t)b * o->blk * VBLK;
        for (int e = 0; e < epb; e++, i++)
            if (en[i])
                st_bits(p + e * size, size, in[i]);
    }
}

/* The elementwise ops of one repeat: gather every source first (dst may
 * overlap a source), compute all lanes with the op switch outside the
 * lane loop, scatter the enabled lanes. f32/f16 go through f32 lanes; the
 * rest (integers, and the rarely used transcendental paths) through
 * elem_op. Disabled lanes hold 0 and are never stored. */
static void elementwise(vjob *j, uint32_t r, const uint8_t *en, uint8_t *ub, uint32_t scalar)
{
    const isa_insn *in = j->in;
    isa_op op = in->op;
    int dt = in->dt, size = isa_dtype_bytes(dt), E = j->E;
    uint32_t s0[VMAX_ELEMS], s1[VMAX_ELEMS], old[VMAX_ELEMS], out[VMAX_ELEMS];
    const vopnd *dst = &j->op[0];
    if (op == ISA_OP_VDUP) {
        for (int i = 0; i < E; i++)
            out[i] = ibits(size, (int64_t)scalar);
        scatter(ub, dst, r, E, en, out);
        return;
    }
    gather(ub, &j->op[1], r, E, en, s0);
    if (op == ISA_OP_VMOV) {
        scatter(ub, dst, r, E, en, s0);
        return;
    }
    int has1 = isa_info_of(op)->fmt == ISA_FMT_VBIN;
    int need_old = op == ISA_OP_VMLA || op == ISA_OP_VAXPY;
    if (has1)
        gather(ub, &j->op[2], r, E, en, s1);
    else
        for (int i = 0; i < E; i++)
            s1[i] = scalar;
    if (need_old)
        gather(ub, dst, r, E, en, old);
    if (dt == ISA_DT_F32 || dt == ISA_DT_F16) {
        float x[VMAX_ELEMS], y[VMAX_ELEMS], z[VMAX_ELEMS];
        for (int i = 0; i < E; i++) {
            x[i] = fval(dt, s0[i]);
            y[i] = fval(dt, s1[i]);
        }
        switch (op) {
        case ISA_OP_VADD: case ISA_OP_VADDS: for (int i = 0; i < E; i++) z[i] = x[i] + y[i]; break;
        case ISA_OP_VSUB: for (int i = 0; i < E; i++) z[i] = x[i] - y[i]; break;
        case ISA_OP_VMUL: case ISA_OP_VMULS: for (int i = 0; i < E; i++) z[i] = x[i] * y[i]; break;
        case ISA_OP_VDIV: for (int i = 0; i < E; i++) z[i] = x[i] / y[i]; break;
        case ISA_OP_VMAX: case ISA_OP_VMAXS: for (int i = 0; i < E; i++) z[i] = fmaxn(x[i], y[i]); break;
        case ISA_OP_VMIN: case ISA_OP_VMINS: for (int i = 0; i < E; i++) z[i] = fminn(x[i], y[i]); break;
        case ISA_OP_VMLA: case ISA_OP_VAXPY:
            for (int i = 0; i < E; i++)
                z[i] = fround(dt, x[i] * y[i]) + fval(dt, old[i]);
            break;
        case ISA_OP_VSQRT: for (int i = 0; i < E; i++) z[i] = sqrtf(x[i]); break;
        case ISA_OP_VREC: for (int i = 0; i < E; i++) z[i] = 1.0f / x[i]; break;
        case ISA_OP_VABS: for (int i = 0; i < E; i++) z[i] = fabsf(x[i]); break;
        case ISA_OP_VRELU: for (int i = 0; i < E; i++) z[i] = isnan(x[i]) ? x[i] : x[i] > 0 ? x[i] : 0.0f; break;
        default:   /* exp, ln, rsqrt: rounded from double */
            for (int i = 0; i < E; i++)
                out[i] = en[i] ? elem_op(op, dt, size, s0[i], s1[i], old[i]) : 0;
            scatter(ub, dst, r, E, en, out);
            return;
        }
        for (int i = 0; i < E; i++)
            out[i] = fbits(dt, z[i]);
    } else {
        for (int i = 0; i < E; i++)
            out[i] = en[i] ? elem_op(op, dt, size, s0[i], s1[i], old[i]) : 0;
    }
    scatter(ub, dst, r, E, en, out);
}

/* Pass 2: compute every repeat. */
static void compute(vjob *j)
{
    sim_unit_ctx *ctx = j->ctx;
    const isa_insn *in = j->in;
    uint8_t *ub = ctx->buf[SIM_SP_UB];
    isa_op op = in->op;
    int dt = in->dt;
    int size = isa_dtype_bytes(dt);
    uint8_t en[VMAX_ELEMS];
    uint32_t scalar = (uint32_t)ctx->x[in->rs2];
    const vopnd *dst = &j->op[0];
    for (uint32_t r = 0; r < j->repeats; r++) {
        mask_of(j, r, en);
        switch (op) {
        case ISA_OP_VCONV: {
            int ds = isa_dtype_bytes(in->dt2);
            int rm = in->mod & 7, sat = (in->mod & ISA_RND_SAT) != 0;
            for (int i = 0; i < j->E; i++) {
                if (!en[i])
                    continue;
                double v = isa_fp_load((isa_dtype)in->dt, ub + elem_addr(&j->op[1], r, i));
                uint8_t tmp[4];
                isa_fp_store((isa_dtype)in->dt2, tmp, v, rm, sat);
                memcpy(ub + elem_addr(dst, r, i), tmp, (size_t)ds);
            }
            break;
        }
        case ISA_OP_VCMPV: case ISA_OP_VCMPVS: {
            uint8_t blk[VBLK];
            memset(blk, 0, sizeof blk);
            int c = in->mod & 7;
            for (int i = 0; i < j->E; i++) {
                if (!en[i])
                    continue;
                uint32_t a = ld_bits(ub + elem_addr(&j->op[1], r, i), size);
                uint32_t b = op == ISA_OP_VCMPV ? ld_bits(ub + elem_addr(&j->op[2], r, i), size) : scalar;
                int t = is_float(dt) ? cmp_f(c, fval(dt, a), fval(dt, b)) : cmp_i(c, ival(dt, a), ival(dt, b));
                if (t)
                    blk[i / 8] |= (uint8_t)(1u << (i % 8));
            }
            memcpy(ub + dst->base + (uint64_t)r * dst->rep * VBLK, blk, VBLK);
            break;
        }
        case ISA_OP_VSEL: {
            const uint8_t *m = ub + j->op[3].base + (uint64_t)r * VBLK;
            for (int i = 0; i < j->E; i++) {
                if (!en[i])
                    continue;
                int bit = (m[i / 8] >> (i % 8)) & 1;
                const vopnd *src = bit ? &j->op[1] : &j->op[2];
                memcpy(ub + elem_addr(dst, r, i), ub + elem_addr(src, r, i), (size_t)size);
            }
            break;
        }
        case ISA_OP_VCADD: case ISA_OP_VCMAX: case ISA_OP_VCMIN:
        case ISA_OP_VCGADD: case ISA_OP_VCGMAX: {
            float lane[VMAX_ELEMS];
            for (int i = 0; i < j->E; i++)
                lane[i] = en[i] ? fval(dt, ld_bits(ub + elem_addr(&j->op[1], r, i), size)) : red_identity(op);
            if (op == ISA_OP_VCGADD || op == ISA_OP_VCGMAX) {
                int epb = (int)VBLK / size;
                for (int b = 0; b < 8; b++)
                    st_bits(ub + elem_addr(dst, r, b), size, fbits(dt, tree(op, lane + b * epb, epb)));
            } else {
                st_bits(ub + elem_addr(dst, r, 0), size, fbits(dt, tree(op, lane, j->E)));
            }
            break;
        }
        case ISA_OP_VBRCB: {
            int epb = (int)VBLK / size;
            for (int b = 0; b < 8; b++) {
                uint32_t v = ld_bits(ub + elem_addr(&j->op[1], r, b), size);
                for (int e = 0; e < epb; e++)
                    st_bits(ub + elem_addr(dst, r, b * epb + e), size, v);
            }
            break;
        }
        default:
            elementwise(j, r, en, ub, scalar);
            break;
        }
    }
}

static vopnd strided(uint64_t base, uint64_t blk, uint64_t rep, int size, int is_write, const char *what)
{
    vopnd o = {G_STRIDED, is_write, base, blk, rep, size, 0, what};
    return o;
}

npu_status sim_exec_vec(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d)
{
    vjob j;
    memset(&j, 0, sizeof j);
    j.ctx = ctx;
    j.in = in;
    j.mn = sim_mn(in);
    j.use_mask = 1;
    const isa_info *info = isa_info_of(in->op);
    if (!info || sim_unit_of(in->op) != 'v')
        return npu_errf(d, NPU_EFAULT, "%s: not a vector instruction", j.mn);
    if (!(info->dtypes & (1u << in->dt)) || (info->dtypes2 && !(info->dtypes2 & (1u << in->dt2))))
        return npu_errf(d, NPU_EFAULT, "%s: dtype %s%s%s not legal", j.mn, isa_dtype_suffix(in->dt),
                        info->dtypes2 ? "->" : "", info->dtypes2 ? isa_dtype_suffix(in->dt2) : "");
    if (!ctx->buf[SIM_SP_UB] && !ctx->nodata)
        return npu_errf(d, NPU_EFAULT, "%s: no UB", j.mn);

    uint64_t cfg = ctx->x[in->rs3];
    uint64_t rep_f = cfg & 0xff;
    uint64_t dblk = (cfg >> 8) & 0xff, s0blk = (cfg >> 16) & 0xff, s1blk = (cfg >> 24) & 0xff;
    uint64_t drep = (cfg >> 32) & 0xff, s0rep = (cfg >> 40) & 0xff, s1rep = (cfg >> 48) & 0xff;
    uint64_t dst = ctx->x[in->rd], src0 = ctx->x[in->rs1], src1 = ctx->x[in->rs2];
    int size = isa_dtype_bytes(in->dt);
    j.E = isa_vrep_elems(in->dt, -1);

    switch (in->op) {
    case ISA_OP_VCONV: {
        int ds = isa_dtype_bytes(in->dt2);
        if ((in->mod & 7) > ISA_RND_RA)
            return npu_errf(d, NPU_EFAULT, "%s: rounding mode %d not defined", j.mn, in->mod & 7);
        j.E = isa_vrep_elems(in->dt, in->dt2);
        j.op[0] = strided(dst, dblk, drep, ds, 1, "dst");
        j.op[1] = strided(src0, s0blk, s0rep, size, 0, "src");
        j.nop = 2;
        break;
    }
    case ISA_OP_VCMPV: case ISA_OP_VCMPVS:
        if ((in->mod & 7) > ISA_CMP_GE)
            return npu_errf(d, NPU_EFAULT, "%s: condition %d not defined", j.mn, in->mod & 7);
        j.op[0] = (vopnd){G_MASKW, 1, dst, 0, drep, 1, 0, "dst mask"};
        j.op[1] = strided(src0, s0blk, s0rep, size, 0, "src0");
        j.nop = 2;
        if (in->op == ISA_OP_VCMPV)
            j.op[j.nop++] = strided(src1, s1blk, s1rep, size, 0, "src1");
        break;
    case ISA_OP_VSEL:
        j.op[0] = strided(dst, dblk, drep, size, 1, "dst");
        j.op[1] = strided(src0, s0blk, s0rep, size, 0, "src0");
        j.op[2] = strided(src1, s1blk, s1rep, size, 0, "src1");
        j.op[3] = (vopnd){G_MASKR, 0, ctx->x[in->rs4], 0, 0, 1, 0, "mask"};
        j.nop = 4;
        break;
    case ISA_OP_VCADD: case ISA_OP_VCMAX: case ISA_OP_VCMIN:
        j.op[0] = (vopnd){G_PACKED, 1, dst, 0, 0, size, 1, "dst"};
        j.op[1] = strided(src0, s0blk, s0rep, size, 0, "src");
        j.nop = 2;
        break;
    case ISA_OP_VCGADD: case ISA_OP_VCGMAX:
        j.op[0] = (vopnd){G_PACKED, 1, dst, 0, 0, size, 8, "dst"};
        j.op[1] = strided(src0, s0blk, s0rep, size, 0, "src");
        j.nop = 2;
        break;
    case ISA_OP_VBRCB:
        j.use_mask = 0;
        j.op[0] = strided(dst, dblk, drep, size, 1, "dst");
        j.op[1] = (vopnd){G_PACKED, 0, src0, 0, 0, size, 8, "src"};
        j.nop = 2;
        break;
    case ISA_OP_VDUP:
        j.op[0] = strided(dst, dblk, drep, size, 1, "dst");
        j.nop = 1;
        break;
    case ISA_OP_VADD: case ISA_OP_VSUB: case ISA_OP_VMUL: case ISA_OP_VDIV: case ISA_OP_VMAX:
    case ISA_OP_VMIN: case ISA_OP_VAND: case ISA_OP_VOR: case ISA_OP_VMLA:
        j.op[0] = strided(dst, dblk, drep, size, 1, "dst");
        j.op[1] = strided(src0, s0blk, s0rep, size, 0, "src0");
        j.op[2] = strided(src1, s1blk, s1rep, size, 0, "src1");
        j.nop = 3;
        if (in->op == ISA_OP_VMLA)   /* dst is read too */
            j.op[j.nop++] = strided(dst, dblk, drep, size, 0, "dst (accumulator)");
        break;
    default:   /* unary and scalar forms */
        j.op[0] = strided(dst, dblk, drep, size, 1, "dst");
        j.op[1] = strided(src0, s0blk, s0rep, size, 0, "src");
        j.nop = 2;
        if (in->op == ISA_OP_VAXPY)
            j.op[j.nop++] = strided(dst, dblk, drep, size, 0, "dst (accumulator)");
        break;
    }

    /* Repeat count: the field in normal mode; in counter mode the count
     * decides (ceil(count / E)) and the field is ignored. */
    if (j.use_mask && ctx->vmask && ctx->vmask->counter_mode) {
        uint64_t rr = (ctx->vmask->count + (uint64_t)j.E - 1) / (uint64_t)j.E;
        if (rr > 255)
            return npu_errf(d, NPU_EFAULT, "%s: counter mode count %" PRIu64 " needs %" PRIu64
                            " repeats of %d elements (at most 255)", j.mn, ctx->vmask->count, rr, j.E);
        j.repeats = (uint32_t)rr;
    } else {
        j.repeats = (uint32_t)rep_f;
    }

    /* Pass 1: reads first, then writes (the order the hardware observes). */
    npu_status st = NPU_OK;
    for (int k = 1; k < j.nop && !st; k++)
        st = opnd_ranges(&j, &j.op[k], d);
    if (!st)
        st = opnd_ranges(&j, &j.op[0], d);
    if (st)
        return st;

    uint8_t en[VMAX_ELEMS];
    uint64_t elems = 0;
    for (uint32_t r = 0; r < j.repeats; r++)
        elems += (uint64_t)mask_of(&j, r, en);
    w->repeats = j.repeats;
    w->elems = elems;
    bank_conflicts(&j, w);
    if (!ctx->nodata)
        compute(&j);
    return NPU_OK;
}
