/* dma.c — the data-move engines: every MTE1/MTE2/MTE3 path, mov.ub2ub on
 * the vector pipe, the FIX drain of L0C, and img2col. docs/datamove.md is
 * the reference for every rule here (parameters, transforms, pictures).
 *
 * Every instruction runs in two passes. Pass 1 validates the parameters,
 * then checks and reports (ctx->access) every range it will read and write
 * — on-chip ranges against the buffer sizes; GM ranges are checked by the
 * GM interface when they are touched. Pass 2 (skipped in nodata mode) moves
 * the data. A parameter or on-chip range fault therefore changes nothing;
 * a GM fault (an address outside any allocation) stops the move where it
 * happened. */
#include "sim/units_int.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "isa/isa_fp.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

typedef struct path { sim_space src, dst; } path;

static int path_of(isa_op op, path *p)
{
    switch (op) {
    case ISA_OP_GM2L1: *p = (path){SIM_SP_GM, SIM_SP_L1}; return 1;
    case ISA_OP_GM2UB: *p = (path){SIM_SP_GM, SIM_SP_UB}; return 1;
    case ISA_OP_GM2L0A: *p = (path){SIM_SP_GM, SIM_SP_L0A}; return 1;
    case ISA_OP_GM2L0B: *p = (path){SIM_SP_GM, SIM_SP_L0B}; return 1;
    case ISA_OP_L12L0A: *p = (path){SIM_SP_L1, SIM_SP_L0A}; return 1;
    case ISA_OP_L12L0B: *p = (path){SIM_SP_L1, SIM_SP_L0B}; return 1;
    case ISA_OP_L12UB: *p = (path){SIM_SP_L1, SIM_SP_UB}; return 1;
    case ISA_OP_UB2GM: *p = (path){SIM_SP_UB, SIM_SP_GM}; return 1;
    case ISA_OP_UB2L1: *p = (path){SIM_SP_UB, SIM_SP_L1}; return 1;
    case ISA_OP_L12GM: *p = (path){SIM_SP_L1, SIM_SP_GM}; return 1;
    case ISA_OP_UB2UB: *p = (path){SIM_SP_UB, SIM_SP_UB}; return 1;
    case ISA_OP_IMG2L0A: *p = (path){SIM_SP_L1, SIM_SP_L0A}; return 1;
    case ISA_OP_IMG2L0B: *p = (path){SIM_SP_L1, SIM_SP_L0B}; return 1;
    case ISA_OP_L0C2GM: *p = (path){SIM_SP_L0C, SIM_SP_GM}; return 1;
    case ISA_OP_L0C2UB: *p = (path){SIM_SP_L0C, SIM_SP_UB}; return 1;
    case ISA_OP_L0C2L1: *p = (path){SIM_SP_L0C, SIM_SP_L1}; return 1;
    default: return 0;
    }
}

/* ---- space access ------------------------------------------------------ */

static npu_status sp_read(sim_unit_ctx *c, sim_space sp, uint64_t a, void *dst, uint64_t len, npu_diag *d)
{
    if (sp == SIM_SP_GM)
        return c->gm.read(c->gm.gm, a, dst, len, d);
    memcpy(dst, c->buf[sp] + a, len);
    return NPU_OK;
}

static npu_status sp_write(sim_unit_ctx *c, sim_space sp, uint64_t a, const void *src, uint64_t len, npu_diag *d)
{
    if (sp == SIM_SP_GM)
        return c->gm.write(c->gm.gm, a, src, len, d);
    memcpy(c->buf[sp] + a, src, len);
    return NPU_OK;
}

static void account(sim_work *w, sim_space sp, uint64_t len, int is_write)
{
    if (sp != SIM_SP_GM)
        return;
    if (is_write)
        w->gm_wr += len;
    else
        w->gm_rd += len;
}

/* ---- range reports ---------------------------------------------------------
 * Pass 1 reports n strided runs of len bytes (run i at base + i * stride)
 * exactly as feeding them one by one to a sim_rng would: the same access
 * calls in the same order and the same first error. It is cheaper because
 * it knows the shape: runs only merge when stride == len; GM needs no
 * bounds check here (the GM interface owns GM bounds); and on-chip runs are
 * all in bounds when the last one is, so one check covers them (a failing
 * extent falls back to the run-by-run path for the exact message). This
 * runs for every burst of every data move, in timing mode too. */
static npu_status runs(sim_unit_ctx *ctx, sim_space sp, int is_write, const char *mn, uint64_t base,
                       uint64_t stride, uint64_t len, uint64_t n, npu_diag *d)
{
    if (!n || !len)
        return NPU_OK;
    if (n > 1 && stride == len) {
        /* one contiguous run (sim_rng merges them) */
        sim_rng r;
        sim_rng_init(&r, ctx, sp, is_write, mn);
        npu_status st = sim_rng_add(&r, base, n * len, d);
        return st ? st : sim_rng_flush(&r, d);
    }
    uint64_t last, end;
    int fast = n == 1 || stride > len;
    if (fast && sp != SIM_SP_GM) {
        fast = !__builtin_mul_overflow(n - 1, stride, &last) && !__builtin_add_overflow(base, last, &last) &&
               !__builtin_add_overflow(last, len, &end) && end <= ctx->size[sp];
    }
    if (fast) {
        if (ctx->access)
            for (uint64_t i = 0; i < n; i++)
                ctx->access(ctx->access_user, sp, base + i * stride, len, is_write);
        return NPU_OK;
    }
    sim_rng r;
    sim_rng_init(&r, ctx, sp, is_write, mn);
    npu_status st;
    for (uint64_t i = 0; i < n; i++)
        if ((st = sim_rng_add(&r, base + i * stride, len, d)))
            return st;
    return sim_rng_flush(&r, d);
}

/* ---- plain, pad, trans --------------------------------------------------- */

typedef struct mv {
    sim_unit_ctx *ctx;
    const isa_insn *in;
    const char *mn;
    path p;
    uint64_t dst, src;
    uint64_t nburst, burst, sstride, dstride;
    int esize;            /* element bytes of DT (u8 when no suffix) */
} mv;

static npu_status chk_aligned(const mv *m, sim_space sp, uint64_t v, const char *what, npu_diag *d)
{
    return sim_chk_align(m->ctx, sp, v, what, m->mn, d);
}

/* Transpose unit of trans: S x S elements, S = 32 / esize, stored as S rows
 * of 32 bytes (16x16 for 2-byte, 32x32 for 1-byte, 8x8 for 4-byte types). */
#define TRANSPOSE_AS(T, S)                                                        \
    do {                                                                          \
        T in_[S][S], out_[S][S];                                                  \
        memcpy(in_, s, sizeof in_);                                               \
        for (int r = 0; r < (S); r++)                                             \
            for (int c = 0; c < (S); c++)                                         \
                out_[c][r] = in_[r][c];                                           \
        memcpy(o, out_, sizeof out_);                                             \
    } while (0)

#ifdef __SSE2__
/* 8 x 8 2-byte elements, rows `pitch` bytes apart, by the unpack ladder
 * (16-, 32-, then 64-bit interleaves): pure data movement, so bit-exact. */
static void tr8x8_u16(const uint8_t *s, uint8_t *o, size_t pitch)
{
    __m128i a[8], b[8], c[8];
    for (int k = 0; k < 8; k++)
        a[k] = _mm_loadu_si128((const __m128i *)(const void *)(s + (size_t)k * pitch));
    for (int k = 0; k < 4; k++) {
        b[2 * k] = _mm_unpacklo_epi16(a[2 * k], a[2 * k + 1]);
        b[2 * k + 1] = _mm_unpackhi_epi16(a[2 * k], a[2 * k + 1]);
    }
    for (int h = 0; h < 2; h++) {
        /* rows 4h..4h+3: columns 0-1, 2-3 from b[4h], b[4h+2]; 4-5, 6-7 from b[4h+1], b[4h+3] */
        c[4 * h + 0] = _mm_unpacklo_epi32(b[4 * h], b[4 * h + 2]);
        c[4 * h + 1] = _mm_unpackhi_epi32(b[4 * h], b[4 * h + 2]);
        c[4 * h + 2] = _mm_unpacklo_epi32(b[4 * h + 1], b[4 * h + 3]);
        c[4 * h + 3] = _mm_unpackhi_epi32(b[4 * h + 1], b[4 * h + 3]);
    }
    for (int k = 0; k < 4; k++) {
        _mm_storeu_si128((__m128i *)(void *)(o + (size_t)(2 * k) * pitch), _mm_unpacklo_epi64(c[k], c[4 + k]));
        _mm_storeu_si128((__m128i *)(void *)(o + (size_t)(2 * k + 1) * pitch), _mm_unpackhi_epi64(c[k], c[4 + k]));
    }
}
#endif

/* Element moves of a fixed width as whole integers: the generic form (a
 * memcpy of `es` bytes with es unknown at compile time) was a byte loop,
 * most of the functional cost of mov.l12l0b.trans in a GEMM. The 2-byte
 * unit (fp16/bf16) is four 8 x 8 SSE2 transposes where the host has SSE2. */
static void transpose_unit(const uint8_t *s, uint8_t *o, int es)
{
    switch (es) {
    case 1: TRANSPOSE_AS(uint8_t, 32); return;
    case 2:
#ifdef __SSE2__
        for (int bi = 0; bi < 2; bi++)
            for (int bj = 0; bj < 2; bj++)
                tr8x8_u16(s + bi * 256 + bj * 16, o + bj * 256 + bi * 16, 32);
#else
        TRANSPOSE_AS(uint16_t, 16);
#endif
        return;
    case 4: TRANSPOSE_AS(uint32_t, 8); return;
    default: break;
    }
    int S = 32 / es;
    for (int r = 0; r < S; r++)
        for (int c = 0; c < S; c++)
            memcpy(o + c * 32 + r * es, s + r * 32 + c * es, (size_t)es);
}

static npu_status do_bursts(mv *m, int xf, sim_work *w, npu_diag *d)
{
    sim_unit_ctx *ctx = m->ctx;
    int onchip_both = m->p.src != SIM_SP_GM && m->p.dst != SIM_SP_GM;
    uint64_t dlen = m->burst;
    if (xf == ISA_XFORM_PAD) {
        if (m->p.dst == SIM_SP_GM)
            return npu_errf(d, NPU_EFAULT, "%s.pad: padding needs an on-chip destination", m->mn);
        dlen = (m->burst + 31) / 32 * 32;
    } else if (onchip_both && m->burst % 32) {
        return npu_errf(d, NPU_EFAULT, "%s: burst of %" PRIu64 " bytes between on-chip buffers is not a multiple of 32", m->mn,
                        m->burst);
    }
    uint64_t unit = 0;
    if (xf == ISA_XFORM_TRANS) {
        if (m->in->op != ISA_OP_L12L0A && m->in->op != ISA_OP_L12L0B)
            return npu_errf(d, NPU_EFAULT, "%s.trans: trans is legal only on mov.l12l0a and mov.l12l0b", m->mn);
        unit = 1024u / (uint64_t)m->esize;
        if (m->burst % unit)
            return npu_errf(d, NPU_EFAULT, "%s.trans: burst of %" PRIu64 " bytes is not a whole number of %" PRIu64
                            "-byte transpose units (%s)", m->mn, m->burst, unit, isa_dtype_suffix(m->in->dt));
    }
    if (m->nburst > 1 && (m->sstride < m->burst || m->dstride < dlen))
        return npu_errf(d, NPU_EFAULT, "%s: stride smaller than the burst (burst %" PRIu64 " B, src stride %" PRIu64
                        ", dst stride %" PRIu64 ")", m->mn, m->burst, m->sstride, m->dstride);
    npu_status st;
    /* trans writes whole transpose units: its destination needs the
     * buffer's alignment or the unit size, whichever is smaller (f32 units
     * are half a 512-byte fractal) */
    sim_unit_ctx dctx = *ctx;
    if (unit && dctx.align[m->p.dst] > unit)
        dctx.align[m->p.dst] = (uint32_t)unit;
    if ((st = chk_aligned(m, m->p.src, m->src, "source", d)) ||
        (st = sim_chk_align(&dctx, m->p.dst, m->dst, "destination", m->mn, d)))
        return st;
    if (m->nburst > 1 && ((st = chk_aligned(m, m->p.src, m->sstride, "source stride", d)) ||
                          (st = sim_chk_align(&dctx, m->p.dst, m->dstride, "destination stride", m->mn, d))))
        return st;
    /* pass 1 */
    if ((st = runs(ctx, m->p.src, 0, m->mn, m->src, m->sstride, m->burst, m->nburst, d)) ||
        (st = runs(ctx, m->p.dst, 1, m->mn, m->dst, m->dstride, dlen, m->nburst, d)))
        return st;
    w->nburst = (uint32_t)m->nburst;
    w->burst_bytes = m->burst;
    w->bytes = m->nburst * dlen;
    account(w, m->p.src, m->nburst * m->burst, 0);
    account(w, m->p.dst, m->nburst * dlen, 1);
    if (ctx->nodata)
        return NPU_OK;
    if (m->p.src != SIM_SP_GM && m->p.dst != SIM_SP_GM && m->p.src != m->p.dst) {
        /* pass 2 between two different on-chip buffers, which cannot
         * overlap: each burst straight across, one pass over its bytes and
         * no scratch allocation (pass 1 checked every range) */
        const uint8_t *sbuf = ctx->buf[m->p.src];
        uint8_t *dbuf = ctx->buf[m->p.dst];
        for (uint64_t b = 0; b < m->nburst; b++) {
            const uint8_t *src = sbuf + m->src + b * m->sstride;
            uint8_t *dst = dbuf + m->dst + b * m->dstride;
            if (unit) {
                for (uint64_t u = 0; u < m->burst; u += unit)
                    transpose_unit(src + u, dst + u, m->esize);
            } else {
                memcpy(dst, src, (size_t)m->burst);
            }
            if (dlen > m->burst)
                memset(dst + m->burst, 0, (size_t)(dlen - m->burst));
        }
        return NPU_OK;
    }
    /* pass 2: through a scratch burst (sources and destinations may overlap
     * in mov.ub2ub; each burst is read whole before it is written) */
    uint8_t *tmp = npu_malloc(2 * dlen + 1);
    if (!tmp)
        return npu_errf(d, NPU_ENOMEM, "%s: out of host memory for a %" PRIu64 "-byte burst", m->mn, dlen);
    for (uint64_t b = 0; b < m->nburst && !st; b++) {
        uint8_t *buf = tmp;
        memset(buf + m->burst, 0, dlen - m->burst);
        st = sp_read(ctx, m->p.src, m->src + b * m->sstride, buf, m->burst, d);
        if (st)
            break;
        if (unit) {
            uint8_t *o = tmp + dlen;
            for (uint64_t u = 0; u < m->burst; u += unit)
                transpose_unit(buf + u, o + u, m->esize);
            buf = o;
        }
        st = sp_write(ctx, m->p.dst, m->dst + b * m->dstride, buf, dlen, d);
    }
    npu_free(tmp);
    return st;
}

/* ---- nd2nz ----------------------------------------------------------------
 * Source: nburst rows of burst bytes (ND, row pitch src_stride). Destination:
 * ceil(burst/32) column blocks of 32 bytes (C0 = 32/esize elements), block j
 * at dst + j*dst_stride, each R16 = ceil16(rows) rows of 32 bytes; padding
 * rows and columns are zero. */
static npu_status do_nd2nz(mv *m, sim_work *w, npu_diag *d)
{
    sim_unit_ctx *ctx = m->ctx;
    if (m->p.dst == SIM_SP_GM || m->p.dst == SIM_SP_L0C)
        return npu_errf(d, NPU_EFAULT, "%s.nd2nz: nd2nz needs an L1, UB, L0A or L0B destination", m->mn);
    if (m->burst % (uint64_t)m->esize)
        return npu_errf(d, NPU_EFAULT, "%s.nd2nz: row of %" PRIu64 " bytes is not a whole number of %s elements", m->mn,
                        m->burst, isa_dtype_suffix(m->in->dt));
    uint64_t rows = m->nburst, r16 = (rows + 15) / 16 * 16, nblk = (m->burst + 31) / 32;
    if (rows > 1 && m->sstride < m->burst)
        return npu_errf(d, NPU_EFAULT, "%s.nd2nz: source row pitch %" PRIu64 " smaller than the row (%" PRIu64 " bytes)", m->mn,
                        m->sstride, m->burst);
    if (nblk > 1 && m->dstride < r16 * 32)
        return npu_errf(d, NPU_EFAULT, "%s.nd2nz: column-block pitch %" PRIu64 " smaller than a column block (%" PRIu64
                        " rows x 32 bytes)", m->mn, m->dstride, r16);
    npu_status st;
    if ((st = chk_aligned(m, m->p.src, m->src, "source", d)) || (st = chk_aligned(m, m->p.dst, m->dst, "destination", d)) ||
        (rows > 1 && (st = chk_aligned(m, m->p.src, m->sstride, "source row pitch", d))) ||
        (nblk > 1 && (st = chk_aligned(m, m->p.dst, m->dstride, "column-block pitch", d))))
        return st;
    if ((st = runs(ctx, m->p.src, 0, m->mn, m->src, m->sstride, m->burst, rows, d)) ||
        (st = runs(ctx, m->p.dst, 1, m->mn, m->dst, m->dstride, r16 * 32, nblk, d)))
        return st;
    w->nburst = (uint32_t)rows;
    w->burst_bytes = m->burst;
    w->bytes = nblk * r16 * 32;
    account(w, m->p.src, rows * m->burst, 0);
    account(w, m->p.dst, w->bytes, 1);
    if (ctx->nodata)
        return NPU_OK;
    uint8_t *row = npu_calloc(1, nblk * 32);
    if (!row)
        return npu_errf(d, NPU_ENOMEM, "%s: out of host memory", m->mn);
    uint8_t *out = ctx->buf[m->p.dst];
    for (uint64_t j = 0; j < nblk; j++)   /* the padding rows */
        memset(out + m->dst + j * m->dstride + rows * 32, 0, (r16 - rows) * 32);
    for (uint64_t r = 0; r < rows && !st; r++) {
        memset(row + m->burst, 0, nblk * 32 - m->burst);
        st = sp_read(ctx, m->p.src, m->src + r * m->sstride, row, m->burst, d);
        for (uint64_t j = 0; j < nblk && !st; j++)
            memcpy(out + m->dst + j * m->dstride + r * 32, row + j * 32, 32);
    }
    npu_free(row);
    return st;
}

/* ---- FIX: L0C -> GM / UB / L1 ------------------------------------------- */

/* One L0C value through quant, ReLU and the cast to dt2 (docs/datamove.md). */
/* What one fixpipe instruction's element conversion needs, worked out once
 * per instruction rather than once per element. */
typedef struct fix_cvt {
    int dt, dt2, relu, quant, s2, kind2;
    float scale;
} fix_cvt;

static fix_cvt fix_cvt_of(int dt, int dt2, int mod, float scale)
{
    fix_cvt k = {dt, dt2, (mod & ISA_FIX_RELU) != 0, (mod & ISA_FIX_QUANT) != 0, isa_dtype_bytes(dt2),
                 isa_dtype_kind((isa_dtype)dt2), scale};
    return k;
}

static void fix_elem(const fix_cvt *k, const uint8_t *src, uint8_t *o)
{
    uint32_t raw;
    memcpy(&raw, src, 4);
    int dt = k->dt, dt2 = k->dt2, relu = k->relu, quant = k->quant, s2 = k->s2, kind2 = k->kind2;
    float scale = k->scale;
    if (dt == ISA_DT_S32 && !quant) {
        int64_t v = (int32_t)raw;
        if (relu && v < 0)
            v = 0;
        if (kind2 == 's' || kind2 == 'u') {
            isa_fp_store((isa_dtype)dt2, o, (double)v, ISA_RM_RNE, 1);   /* exact, then clamped */
        } else {
            uint32_t b = isa_fp_from_i64((isa_dtype)dt2, v, ISA_RM_RNE, dt2 == ISA_DT_E4M3 || dt2 == ISA_DT_E5M2);
            memcpy(o, &b, (size_t)s2);
        }
        return;
    }
    float f = dt == ISA_DT_S32 ? isa_fp_s32_to_f32((int32_t)raw, ISA_RM_RNE) : isa_fp_bits_f32(raw);
    if (quant)
        f = f * scale;
    if (relu && !(f > 0) && !isnan(f))
        f = 0.0f;
    if (isnan(f))
        f = isa_fp_bits_f32(ISA_FP_NAN_F32);
    if (kind2 == 's' || kind2 == 'u') {
        isa_fp_store((isa_dtype)dt2, o, (double)f, ISA_RM_RNE, 1);
    } else {
        uint32_t b = isa_fp_from_f32((isa_dtype)dt2, f, ISA_RM_RNE, dt2 == ISA_DT_E4M3 || dt2 == ISA_DT_E5M2);
        memcpy(o, &b, (size_t)s2);
    }
}

static npu_status do_fix(mv *m, sim_work *w, npu_diag *d)
{
    sim_unit_ctx *ctx = m->ctx;
    const isa_insn *in = m->in;
    uint64_t cfg = ctx->x[in->rs2], pitches = ctx->x[in->rs3];
    uint64_t M = cfg & 0xffff, N = (cfg >> 16) & 0xffff;
    uint64_t spitch = pitches & 0xffffffffu, dpitch = pitches >> 32;
    float scale = isa_fp_bits_f32((uint32_t)ctx->x[in->rs4]);
    int nd = (in->mod & ISA_FIX_ND) != 0;
    int dt = in->dt, dt2 = in->dt2;
    if (dt != ISA_DT_F32 && dt != ISA_DT_S32)
        return npu_errf(d, NPU_EFAULT, "%s: L0C type %s not legal (f32 or s32)", m->mn, isa_dtype_suffix(dt));
    static const int ok2[] = {ISA_DT_F32, ISA_DT_F16, ISA_DT_BF16, ISA_DT_S32, ISA_DT_S8, ISA_DT_E4M3, ISA_DT_E5M2};
    int legal = 0;
    for (size_t i = 0; i < NPU_ARRAY_LEN(ok2); i++)
        legal |= ok2[i] == dt2;
    if (!legal)
        return npu_errf(d, NPU_EFAULT, "%s: destination type %s not legal", m->mn, isa_dtype_suffix(dt2));
    if (!M || !N)
        return npu_errf(d, NPU_EFAULT, "%s: m and n must be non-zero (m=%" PRIu64 " n=%" PRIu64 ")", m->mn, M, N);
    uint64_t s2 = (uint64_t)isa_dtype_bytes(dt2);
    uint64_t m16 = (M + 15) / 16 * 16, sblk = (N + 15) / 16;
    if (sblk > 1 && spitch < M * 64)
        return npu_errf(d, NPU_EFAULT, "%s: L0C column-block pitch %" PRIu64 " smaller than %" PRIu64 " rows x 64 bytes", m->mn,
                        spitch, M);
    uint64_t c0 = 32 / s2, dblk = (N + c0 - 1) / c0;
    npu_status st;
    if ((st = chk_aligned(m, SIM_SP_L0C, m->src, "source", d)) || (st = chk_aligned(m, m->p.dst, m->dst, "destination", d)) ||
        (sblk > 1 && (st = chk_aligned(m, SIM_SP_L0C, spitch, "source pitch", d))))
        return st;
    if (nd) {
        if (M > 1 && dpitch < N * s2)
            return npu_errf(d, NPU_EFAULT, "%s.nd: row pitch %" PRIu64 " smaller than a row (%" PRIu64 " bytes)", m->mn, dpitch,
                            N * s2);
        if (M > 1 && (st = chk_aligned(m, m->p.dst, dpitch, "row pitch", d)))
            return st;
    } else {
        if (dblk > 1 && dpitch < m16 * 32)
            return npu_errf(d, NPU_EFAULT, "%s: destination column-block pitch %" PRIu64 " smaller than %" PRIu64
                            " rows x 32 bytes", m->mn, dpitch, m16);
        if (dblk > 1 && (st = chk_aligned(m, m->p.dst, dpitch, "destination pitch", d)))
            return st;
    }
    uint64_t nrun = nd ? M : dblk, runlen = nd ? N * s2 : m16 * 32;
    if ((st = runs(ctx, SIM_SP_L0C, 0, m->mn, m->src, spitch, M * 64, sblk, d)) ||
        (st = runs(ctx, m->p.dst, 1, m->mn, m->dst, dpitch, runlen, nrun, d)))
        return st;
    w->nburst = (uint32_t)nrun;
    w->burst_bytes = runlen;
    w->bytes = nrun * runlen;
    account(w, m->p.dst, w->bytes, 1);
    if (ctx->nodata)
        return NPU_OK;
    uint8_t *buf = npu_calloc(1, runlen);
    if (!buf)
        return npu_errf(d, NPU_ENOMEM, "%s: out of host memory", m->mn);
    const uint8_t *l0c = ctx->buf[SIM_SP_L0C];
    fix_cvt k = fix_cvt_of(dt, dt2, in->mod, scale);
    for (uint64_t r = 0; r < nrun && !st; r++) {
        if (nd) {
            for (uint64_t j = 0; j < N; j++)
                fix_elem(&k, l0c + m->src + (j / 16) * spitch + r * 64 + (j % 16) * 4, buf + j * s2);
        } else {
            memset(buf, 0, runlen);
            for (uint64_t i = 0; i < M; i++)
                for (uint64_t c = 0; c < c0 && r * c0 + c < N; c++) {
                    uint64_t j = r * c0 + c;
                    fix_elem(&k, l0c + m->src + (j / 16) * spitch + i * 64 + (j % 16) * 4,
                             buf + i * 32 + c * s2);
                }
        }
        st = sp_write(ctx, m->p.dst, m->dst + r * dpitch, buf, runlen, d);
    }
    npu_free(buf);
    return st;
}

/* ---- img2col ------------------------------------------------------------ */

static npu_status do_img2col(mv *m, sim_work *w, npu_diag *d)
{
    sim_unit_ctx *ctx = m->ctx;
    const isa_insn *in = m->in;
    uint64_t f = ctx->x[in->rs2], kc = ctx->x[in->rs3], pos = ctx->x[in->rs4];
    int64_t W = (int64_t)(f & 0xffff), H = (int64_t)((f >> 16) & 0xffff), C1 = (int64_t)((f >> 32) & 0xffff);
    int64_t kw = (int64_t)(kc & 0xff), kh = (int64_t)((kc >> 8) & 0xff), sw = (int64_t)((kc >> 16) & 0xff),
            sh = (int64_t)((kc >> 24) & 0xff), dw = (int64_t)((kc >> 32) & 0xff), dh = (int64_t)((kc >> 40) & 0xff);
    int64_t pl = (int64_t)((kc >> 48) & 0xf), pr = (int64_t)((kc >> 52) & 0xf), pt = (int64_t)((kc >> 56) & 0xf),
            pb = (int64_t)((kc >> 60) & 0xf);
    int64_t P0 = (int64_t)(pos & 0xffff), NP = (int64_t)((pos >> 16) & 0xffff), KB0 = (int64_t)((pos >> 32) & 0xffff),
            NKB = (int64_t)((pos >> 48) & 0xffff);
    if (!(in->dt == ISA_DT_F16 || in->dt == ISA_DT_BF16 || in->dt == ISA_DT_S8 || in->dt == ISA_DT_E4M3 ||
          in->dt == ISA_DT_E5M2 || in->dt == ISA_DT_F32))
        return npu_errf(d, NPU_EFAULT, "%s: dtype %s not legal", m->mn, isa_dtype_suffix(in->dt));
    if (!W || !H || !C1)
        return npu_errf(d, NPU_EFAULT, "%s: feature map W=%" PRId64 " H=%" PRId64 " C1=%" PRId64 " must be non-zero", m->mn, W, H, C1);
    if (!kw || !kh || !sw || !sh || !dw || !dh)
        return npu_errf(d, NPU_EFAULT, "%s: kernel size, stride and dilation must be non-zero", m->mn);
    int64_t ew = dw * (kw - 1) + 1, eh = dh * (kh - 1) + 1;   /* dilated kernel extent */
    if (pl >= ew || pr >= ew || pt >= eh || pb >= eh)
        return npu_errf(d, NPU_EFAULT, "%s: padding (l%" PRId64 " r%" PRId64 " t%" PRId64 " b%" PRId64
                        ") must be smaller than the dilated kernel (%" PRId64 " x %" PRId64 ")", m->mn, pl, pr, pt, pb, ew, eh);
    if (W + pl + pr < ew || H + pt + pb < eh)
        return npu_errf(d, NPU_EFAULT, "%s: the dilated kernel (%" PRId64 " x %" PRId64 ") is larger than the padded map", m->mn, ew, eh);
    int64_t Wo = (W + pl + pr - ew) / sw + 1, Ho = (H + pt + pb - eh) / sh + 1;
    int64_t KB = C1 * kh * kw;
    if (!NP || !NKB || P0 + NP > Ho * Wo || KB0 + NKB > KB)
        return npu_errf(d, NPU_EFAULT, "%s: pixels [%" PRId64 ", +%" PRId64 ") of %" PRId64 " or k blocks [%" PRId64 ", +%" PRId64
                        ") of %" PRId64 " out of range (or empty)", m->mn, P0, NP, Ho * Wo, KB0, NKB, KB);
    npu_status st;
    if ((st = chk_aligned(m, SIM_SP_L1, m->src, "feature map", d)) || (st = chk_aligned(m, m->p.dst, m->dst, "destination", d)))
        return st;
    uint64_t fmap = (uint64_t)(C1 * H * W) * 32u;
    if ((st = sim_chk_range(ctx, SIM_SP_L1, 0, m->src, fmap, m->mn, d)))
        return st;
    int64_t M1 = (NP + 15) / 16;
    uint64_t dbytes = (uint64_t)(M1 * NKB) * 512u;
    int to_b = in->op == ISA_OP_IMG2L0B;
    /* the source row (32 bytes) of fractal row r of (m1, kb), or -1 for padding */
#define I2C_SRC(m1, kb, r, out)                                                                          \
    do {                                                                                                 \
        int64_t p_ = P0 + (m1) * 16 + (r);                                                               \
        out = -1;                                                                                        \
        if (p_ < P0 + NP) {                                                                              \
            int64_t kbg = KB0 + (kb), c1_ = kbg / (kh * kw), i_ = (kbg / kw) % kh, j_ = kbg % kw;        \
            int64_t h_ = (p_ / Wo) * sh - pt + i_ * dh, w_ = (p_ % Wo) * sw - pl + j_ * dw;              \
            if (h_ >= 0 && h_ < H && w_ >= 0 && w_ < W)                                                  \
                out = ((c1_ * H + h_) * W + w_) * 32;                                                    \
        }                                                                                                \
    } while (0)
    sim_rng rs, rd;
    sim_rng_init(&rs, ctx, SIM_SP_L1, 0, m->mn);
    sim_rng_init(&rd, ctx, m->p.dst, 1, m->mn);
    for (int64_t m1 = 0; m1 < M1 && !st; m1++)
        for (int64_t kb = 0; kb < NKB && !st; kb++)
            for (int r = 0; r < 16 && !st; r++) {
                int64_t off;
                I2C_SRC(m1, kb, r, off);
                if (off >= 0)
                    st = sim_rng_add(&rs, m->src + (uint64_t)off, 32, d);
            }
    if (st || (st = sim_rng_flush(&rs, d)))
        return st;
    if ((st = sim_rng_add(&rd, m->dst, dbytes, d)) || (st = sim_rng_flush(&rd, d)))
        return st;
    w->nburst = (uint32_t)(M1 * NKB);
    w->burst_bytes = 512;
    w->bytes = dbytes;
    if (ctx->nodata)
        return NPU_OK;
    const uint8_t *l1 = ctx->buf[SIM_SP_L1] + m->src;
    uint8_t *out = ctx->buf[m->p.dst] + m->dst;
    for (int64_t m1 = 0; m1 < M1; m1++)
        for (int64_t kb = 0; kb < NKB; kb++) {
            /* ZZ for L0A: fractal (m1, kb) at index m1*NKB + kb; ZN for L0B:
             * the same fractal (16 pixels x C0 channels) at kb*M1 + m1 */
            uint8_t *fr = out + (uint64_t)(to_b ? kb * M1 + m1 : m1 * NKB + kb) * 512u;
            for (int r = 0; r < 16; r++) {
                int64_t off;
                I2C_SRC(m1, kb, r, off);
                if (off >= 0)
                    memcpy(fr + r * 32, l1 + off, 32);
                else
                    memset(fr + r * 32, 0, 32);
            }
        }
#undef I2C_SRC
    return NPU_OK;
}

npu_status sim_exec_dma(sim_unit_ctx *ctx, const isa_insn *in, sim_work *w, npu_diag *d)
{
    mv m;
    memset(&m, 0, sizeof m);
    m.ctx = ctx;
    m.in = in;
    m.mn = sim_mn(in);
    if (!path_of(in->op, &m.p))
        return npu_errf(d, NPU_EFAULT, "%s: not a data move", m.mn);
    w->src_space = m.p.src;
    w->dst_space = m.p.dst;
    m.dst = ctx->x[in->rd];
    m.src = ctx->x[in->rs1];
    m.esize = isa_dtype_bytes(in->dt);
    if (m.esize <= 0 || m.esize > 4)
        return npu_errf(d, NPU_EFAULT, "%s: dtype %s not legal", m.mn, isa_dtype_suffix(in->dt));
    if (!ctx->nodata && ((m.p.src != SIM_SP_GM && !ctx->buf[m.p.src]) || (m.p.dst != SIM_SP_GM && !ctx->buf[m.p.dst])))
        return npu_errf(d, NPU_EFAULT, "%s: buffer missing", m.mn);
    switch (in->op) {
    case ISA_OP_IMG2L0A: case ISA_OP_IMG2L0B:
        return do_img2col(&m, w, d);
    case ISA_OP_L0C2GM: case ISA_OP_L0C2UB: case ISA_OP_L0C2L1:
        return do_fix(&m, w, d);
    default: break;
    }
    uint64_t cfg = ctx->x[in->rs2], str = ctx->x[in->rs3];
    m.nburst = cfg & 0xffff;
    m.burst = (cfg >> 16) & 0xffffffffu;
    m.sstride = str & 0xffffffffu;
    m.dstride = str >> 32;
    if (!m.nburst || !m.burst)
        return npu_errf(d, NPU_EFAULT, "%s: %" PRIu64 " bursts of %" PRIu64 " bytes: both must be non-zero", m.mn, m.nburst, m.burst);
    int xf = in->mod & 7;
    switch (xf) {
    case ISA_XFORM_NONE: case ISA_XFORM_PAD: case ISA_XFORM_TRANS:
        return do_bursts(&m, xf, w, d);
    case ISA_XFORM_ND2NZ:
        return do_nd2nz(&m, w, d);
    default:
        return npu_errf(d, NPU_EFAULT, "%s: unknown transform %d", m.mn, xf);
    }
}
