/* isa_fp.c — number-format conversions (see isa_fp.h, docs/numerics.md).
 *
 * One rounding engine serves every float destination: the input, whatever
 * it is (double, fp32, int64), is first written exactly as
 *     (-1)^sign * m * 2^e      with m a 64-bit integer,
 * and round_pack() rounds that once into the destination described by an
 * fmt row. Only the hot RNE fp32 <-> f16/bf16 paths (inline, in the
 * header) bypass it, and the tests hold them to it bit for bit. */
#include "isa/isa_fp.h"
#include "isa/npu_util.h"

#include <string.h>


/* numpy / ml_dtypes spellings, for the CLI and configs. */
static const struct { const char *name; isa_dtype dt; } dt_aliases[] = {
    {"float32", ISA_DT_F32},        {"fp32", ISA_DT_F32},
    {"float16", ISA_DT_F16},        {"fp16", ISA_DT_F16},
    {"half", ISA_DT_F16},           {"bfloat16", ISA_DT_BF16},
    {"float8_e4m3fn", ISA_DT_E4M3}, {"fp8_e4m3", ISA_DT_E4M3},
    {"float8_e5m2", ISA_DT_E5M2},   {"fp8_e5m2", ISA_DT_E5M2},
    {"int32", ISA_DT_S32},          {"int16", ISA_DT_S16},
    {"int8", ISA_DT_S8},            {"uint8", ISA_DT_U8},
    {"uint16", ISA_DT_U16},         {"uint32", ISA_DT_U32},
    {"int64", ISA_DT_S64},
};

int isa_dtype_from_name(const char *name)
{
    if (!name)
        return -1;
    int dt = isa_dtype_from_suffix(name);
    if (dt >= 0)
        return dt;
    for (unsigned i = 0; i < NPU_ARRAY_LEN(dt_aliases); i++)
        if (strcmp(name, dt_aliases[i].name) == 0)
            return (int)dt_aliases[i].dt;
    return -1;
}

static const char *const rmode_names[ISA_RM__COUNT] = {"rne", "rtz", "rup", "rdn", "rna"};

const char *isa_rmode_name(int rmode)
{
    return (unsigned)rmode < ISA_RM__COUNT ? rmode_names[rmode] : "?";
}

int isa_rmode_from_name(const char *name)
{
    for (int i = 0; name && i < ISA_RM__COUNT; i++)
        if (strcmp(name, rmode_names[i]) == 0)
            return i;
    return -1;
}

/* ---- float formats ------------------------------------------------------ */

/* A binary float format: ebits exponent bits, mbits stored mantissa bits,
 * bias 2^(ebits-1)-1. maxbits is the magnitude pattern of the largest
 * finite value; E4M3fn has no infinity and uses exponent 1111 for finite
 * values (only S.1111.111 is NaN), so its maxbits is 0x7E, not the IEEE
 * 0x77. */
typedef struct fmt {
    int ebits, mbits, bias;
    int has_inf;
    uint32_t maxbits, infbits, nanbits;
} fmt;

static const fmt fmt_f32  = {8, 23, 127, 1, 0x7F7FFFFFu, 0x7F800000u, ISA_FP_NAN_F32};
static const fmt fmt_f16  = {5, 10, 15, 1, 0x7BFFu, 0x7C00u, ISA_FP_NAN_F16};
static const fmt fmt_bf16 = {8, 7, 127, 1, 0x7F7Fu, 0x7F80u, ISA_FP_NAN_BF16};
static const fmt fmt_e4m3 = {4, 3, 7, 0, 0x7Eu, 0, ISA_FP_NAN_E4M3};
static const fmt fmt_e5m2 = {5, 2, 15, 1, 0x7Bu, 0x7Cu, ISA_FP_NAN_E5M2};

static const fmt *fmt_of(isa_dtype dt)
{
    switch (dt) {
    case ISA_DT_F32: return &fmt_f32;
    case ISA_DT_F16: return &fmt_f16;
    case ISA_DT_BF16: return &fmt_bf16;
    case ISA_DT_E4M3: return &fmt_e4m3;
    case ISA_DT_E5M2: return &fmt_e5m2;
    default: return NULL;
    }
}

static uint32_t sign_bit(const fmt *F) { return 1u << (F->ebits + F->mbits); }

/* Does this mode move magnitudes up (away from zero) for this sign? The
 * nearest modes count as "up" for overflow: past the last halfway point
 * the nearest value is infinity. */
static int mode_rounds_out(int rmode, int sign)
{
    switch (rmode) {
    case ISA_RM_RTZ: return 0;
    case ISA_RM_RUP: return !sign;
    case ISA_RM_RDN: return sign;
    default: return 1;
    }
}

/* The result of an overflow: max finite when saturating or when the mode
 * rounds toward zero; otherwise infinity, or NaN for E4M3fn which has no
 * infinity (as ml_dtypes and the OCP spec's non-saturating mode do). */
static uint32_t overflow(const fmt *F, int sign, int rmode, int sat)
{
    uint32_t s = sign ? sign_bit(F) : 0;
    if (sat || !mode_rounds_out(rmode, sign))
        return s | F->maxbits;
    return s | (F->has_inf ? F->infbits : F->nanbits);
}

static int clz64(uint64_t x) { return __builtin_clzll(x); }

/* Round (-1)^sign * m * 2^e (m > 0) into F: one rounding, then encode.
 *
 * The exponent E of the value (2^E <= v < 2^(E+1)) fixes the ulp 2^q of
 * the destination, q = max(E, emin) - mbits. n = v / 2^q rounded is the
 * significand including the hidden bit; the pattern is then
 * ((q + mbits + bias - 1) << mbits) + n, which is right for normals
 * (n in [2^mbits, 2^(mbits+1)), the hidden bit adds 1 to the exponent
 * field), for subnormals (q + mbits + bias - 1 = 0) and for the carries
 * of rounding (subnormal -> min normal, 1.11..1 -> next binade). */
static uint32_t round_pack(const fmt *F, int sign, uint64_t m, int e, int rmode, int sat)
{
    uint32_t s = sign ? sign_bit(F) : 0;
    int msb = 63 - clz64(m);
    int E = msb + e;
    int emin = 1 - F->bias;
    int emax = (int)(F->maxbits >> F->mbits) - F->bias;
    if (E > emax + 1)
        return overflow(F, sign, rmode, sat);
    int q = (E > emin ? E : emin) - F->mbits;
    int shift = q - e;
    uint64_t n, rem, half;
    if (shift <= 0) {
        n = m << -shift;    /* exact: n < 2^(mbits+2) here */
        rem = 0;
        half = 1;
    } else if (shift < 64) {
        n = m >> shift;
        rem = m & ((1ull << shift) - 1);
        half = 1ull << (shift - 1);
    } else if (shift == 64) {
        n = 0;
        rem = m;
        half = 1ull << 63;
    } else {            /* far below half an ulp, but not zero */
        n = 0;
        rem = 1;
        half = 2;
    }
    /* bitwise, not ||: the comparisons are data-dependent and would be
     * mispredicted branches in the vector unit's cast loops */
    uint64_t inc;
    switch (rmode) {
    case ISA_RM_RTZ: inc = 0; break;
    case ISA_RM_RUP: inc = (uint64_t)(rem != 0) & (uint64_t)!sign; break;
    case ISA_RM_RDN: inc = (uint64_t)(rem != 0) & (uint64_t)sign; break;
    case ISA_RM_RNA: inc = rem >= half; break;
    default: inc = (uint64_t)(rem > half) | ((uint64_t)(rem == half) & n & 1); break;
    }
    n += inc;
    uint64_t bits = ((uint64_t)(q + F->mbits + F->bias - 1) << F->mbits) + n;
    if (bits > F->maxbits)
        return overflow(F, sign, rmode, sat);
    return s | (uint32_t)bits;
}

static uint32_t special(const fmt *F, int sign, int is_nan, int sat)
{
    uint32_t s = sign ? sign_bit(F) : 0;
    if (is_nan)
        return s | F->nanbits;
    /* infinity */
    if (sat)
        return s | F->maxbits;
    return s | (F->has_inf ? F->infbits : F->nanbits);
}

uint32_t isa_fp_from_double(isa_dtype dt, double v, int rmode, int sat)
{
    const fmt *F = fmt_of(dt);
    if (!F)
        return 0;
    uint64_t u;
    memcpy(&u, &v, 8);
    int sign = (int)(u >> 63);
    int ex = (int)((u >> 52) & 0x7FF);
    uint64_t fr = u & ((1ull << 52) - 1);
    if (ex == 0x7FF)
        return special(F, sign, fr != 0, sat);
    if (ex == 0 && fr == 0)
        return sign ? sign_bit(F) : 0;
    if (ex == 0)
        return round_pack(F, sign, fr, -1074, rmode, sat);
    return round_pack(F, sign, fr | (1ull << 52), ex - 1075, rmode, sat);
}

uint32_t isa_fp_from_f32(isa_dtype dt, float v, int rmode, int sat)
{
    /* the common case of the vector unit's casts goes inline */
    if (rmode == ISA_RM_RNE && !sat) {
        if (dt == ISA_DT_F16)
            return isa_fp_f32_to_f16(v);
        if (dt == ISA_DT_BF16)
            return isa_fp_f32_to_bf16(v);
    }
    const fmt *F = fmt_of(dt);
    if (!F)
        return 0;
    /* decompose the fp32 exactly (no double detour): one rounding */
    uint32_t u = isa_fp_f32_bits(v);
    int sign = (int)(u >> 31);
    int ex = (int)((u >> 23) & 0xFF);
    uint32_t fr = u & 0x7FFFFFu;
    if (ex == 0xFF)
        return special(F, sign, fr != 0, sat);
    if (ex == 0 && fr == 0)
        return sign ? sign_bit(F) : 0;
    if (dt == ISA_DT_F32)
        return u;
    if (ex == 0)
        return round_pack(F, sign, fr, -149, rmode, sat);
    return round_pack(F, sign, fr | 0x800000u, ex - 150, rmode, sat);
}

uint32_t isa_fp_from_u64(isa_dtype dt, uint64_t v, int rmode, int sat)
{
    const fmt *F = fmt_of(dt);
    if (!F || v == 0)
        return 0;
    return round_pack(F, 0, v, 0, rmode, sat);
}

uint32_t isa_fp_from_i64(isa_dtype dt, int64_t v, int rmode, int sat)
{
    const fmt *F = fmt_of(dt);
    if (!F || v == 0)
        return 0;
    uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    return round_pack(F, v < 0, mag, 0, rmode, sat);
}

/* 2^k as a double, built from bits (no libm); k in [-1074, 1023]. */
static double pow2(int k)
{
    uint64_t u;
    if (k >= -1022)
        u = (uint64_t)(k + 1023) << 52;
    else
        u = 1ull << (k + 1074);
    double d;
    memcpy(&d, &u, 8);
    return d;
}

double isa_fp_to_double(isa_dtype dt, uint32_t bits)
{
    const fmt *F = fmt_of(dt);
    if (!F)
        return 0;
    int sign = (bits & sign_bit(F)) != 0;
    uint32_t mag = bits & (sign_bit(F) - 1);
    uint32_t field = mag >> F->mbits, man = mag & ((1u << F->mbits) - 1);
    double r;
    if (mag > F->maxbits) {
        if (F->has_inf && mag == F->infbits) {
            uint64_t inf = 0x7FF0000000000000ull;
            memcpy(&r, &inf, 8);
        } else {
            uint64_t nan = 0x7FF8000000000000ull;
            memcpy(&r, &nan, 8);
        }
    } else if (field == 0) {
        r = (double)man * pow2(1 - F->bias - F->mbits);
    } else {
        r = (double)(man | (1u << F->mbits)) * pow2((int)field - F->bias - F->mbits);
    }
    return sign ? -r : r;
}

float isa_fp_to_f32(isa_dtype dt, uint32_t bits)
{
    if (dt == ISA_DT_F32) {
        if ((bits & 0x7FFFFFFFu) > 0x7F800000u)
            bits = (bits & 0x80000000u) | ISA_FP_NAN_F32;
        return isa_fp_bits_f32(bits);
    }
    if (dt == ISA_DT_F16)
        return isa_fp_f16_to_f32((uint16_t)bits);
    if (dt == ISA_DT_BF16)
        return isa_fp_bf16_to_f32((uint16_t)bits);
    if (dt == ISA_DT_E4M3)
        return isa_fp_e4m3_to_f32((uint8_t)bits);
    if (dt == ISA_DT_E5M2)
        return isa_fp_e5m2_to_f32((uint8_t)bits);
    return 0;
}

/* ---- float -> integer ----------------------------------------------------- */

/* Integer bounds of an integer dtype. */
static int int_bounds(isa_dtype dt, int *bits, int *is_signed)
{
    switch (dt) {
    case ISA_DT_S32: *bits = 32; *is_signed = 1; return 1;
    case ISA_DT_S16: *bits = 16; *is_signed = 1; return 1;
    case ISA_DT_S8:  *bits = 8;  *is_signed = 1; return 1;
    case ISA_DT_U8:  *bits = 8;  *is_signed = 0; return 1;
    case ISA_DT_U16: *bits = 16; *is_signed = 0; return 1;
    case ISA_DT_U32: *bits = 32; *is_signed = 0; return 1;
    case ISA_DT_S64: *bits = 64; *is_signed = 1; return 1;
    default: return 0;
    }
}

int64_t isa_fp_to_int(isa_dtype dt, double v, int rmode, int sat)
{
    int nb, sg;
    if (!int_bounds(dt, &nb, &sg))
        return 0;
    uint64_t u;
    memcpy(&u, &v, 8);
    int sign = (int)(u >> 63);
    int ex = (int)((u >> 52) & 0x7FF);
    uint64_t fr = u & ((1ull << 52) - 1);
    int64_t lo = sg ? (nb == 64 ? INT64_MIN : -(1ll << (nb - 1))) : 0;
    uint64_t hi = sg ? (1ull << (nb - 1)) - 1 : (nb == 64 ? UINT64_MAX : (1ull << nb) - 1);
    if (ex == 0x7FF) {
        if (fr != 0 || !sat)
            return 0;
        return sign ? lo : (int64_t)hi;
    }
    /* |v| = m * 2^e; round to an integer magnitude mag (mod 2^64) and note
     * whether it is beyond 2^64 (big). */
    uint64_t m = ex ? (fr | (1ull << 52)) : fr;
    int e = ex ? ex - 1075 : -1074;
    uint64_t mag = 0;
    int big = 0;
    if (m == 0) {
        mag = 0;
    } else if (e >= 0) {
        /* integral already; m < 2^53 so m << e overflows 64 bits once
         * e > 11; the low 64 bits are what wrapping keeps */
        big = e > 11;
        mag = e >= 64 ? 0 : m << e;
    } else {
        int sh = -e;
        uint64_t n, rem, half;
        if (sh < 64) {
            n = m >> sh;
            rem = m & ((1ull << sh) - 1);
            half = 1ull << (sh - 1);
        } else {
            n = 0;
            rem = 1;   /* m < 2^53 < 2^(sh-1): nonzero, below half */
            half = 2;
        }
        int inc;
        switch (rmode) {
        case ISA_RM_RTZ: inc = 0; break;
        case ISA_RM_RUP: inc = rem != 0 && !sign; break;
        case ISA_RM_RDN: inc = rem != 0 && sign; break;
        case ISA_RM_RNA: inc = rem >= half; break;
        default: inc = rem > half || (rem == half && (n & 1)); break;
        }
        mag = n + (uint64_t)inc;
    }
    if (sat) {
        if (sign) {
            if (big || mag > (uint64_t)0 - (uint64_t)lo)
                return lo;
            return (int64_t)(0 - mag);
        }
        if (big || mag > hi)
            return (int64_t)hi;
        return (int64_t)mag;
    }
    /* wrap modulo 2^nb, then sign- or zero-extend */
    uint64_t r = sign ? 0 - mag : mag;
    if (nb < 64) {
        r &= (1ull << nb) - 1;
        if (sg && (r >> (nb - 1)))
            r |= ~((1ull << nb) - 1);
    }
    return (int64_t)r;
}

int32_t isa_fp_f32_to_s32(float v, int rmode, int sat) { return (int32_t)isa_fp_to_int(ISA_DT_S32, v, rmode, sat); }
int16_t isa_fp_f32_to_s16(float v, int rmode, int sat) { return (int16_t)isa_fp_to_int(ISA_DT_S16, v, rmode, sat); }
int8_t isa_fp_f32_to_s8(float v, int rmode, int sat) { return (int8_t)isa_fp_to_int(ISA_DT_S8, v, rmode, sat); }
uint8_t isa_fp_f32_to_u8(float v, int rmode, int sat) { return (uint8_t)isa_fp_to_int(ISA_DT_U8, v, rmode, sat); }
uint16_t isa_fp_f32_to_u16(float v, int rmode, int sat) { return (uint16_t)isa_fp_to_int(ISA_DT_U16, v, rmode, sat); }
uint32_t isa_fp_f32_to_u32(float v, int rmode, int sat) { return (uint32_t)isa_fp_to_int(ISA_DT_U32, v, rmode, sat); }
float isa_fp_s32_to_f32(int32_t v, int rmode) { return isa_fp_bits_f32(isa_fp_from_i64(ISA_DT_F32, v, rmode, 0)); }

/* ---- named conversions -------------------------------------------------- */

uint16_t isa_fp_f32_to_f16_r(float v, int rmode, int sat) { return (uint16_t)isa_fp_from_f32(ISA_DT_F16, v, rmode, sat); }
uint16_t isa_fp_f32_to_bf16_r(float v, int rmode, int sat) { return (uint16_t)isa_fp_from_f32(ISA_DT_BF16, v, rmode, sat); }
uint8_t isa_fp_f32_to_e4m3(float v, int rmode, int sat) { return (uint8_t)isa_fp_from_f32(ISA_DT_E4M3, v, rmode, sat); }
uint8_t isa_fp_f32_to_e5m2(float v, int rmode, int sat) { return (uint8_t)isa_fp_from_f32(ISA_DT_E5M2, v, rmode, sat); }
/* fp8 widening is on the vector unit's cast path too, so it skips the
 * double detour: E5M2 is the top byte of an f16 (same exponent field and
 * bias), and E4M3 is rebiased by hand. */
float isa_fp_e5m2_to_f32(uint8_t b) { return isa_fp_f16_to_f32((uint16_t)(b << 8)); }

float isa_fp_e4m3_to_f32(uint8_t b)
{
    uint32_t sign = (uint32_t)(b & 0x80u) << 24;
    uint32_t em = b & 0x7Fu;
    uint32_t u;
    if (em == 0x7Fu)
        u = ISA_FP_NAN_F32;
    else if (em >= 0x08u)
        u = (em << 20) + ((uint32_t)(127 - 7) << 23);
    else /* subnormal: em * 2^-9, exact */
        u = isa_fp_f32_bits((float)em * 0x1p-9f);
    return isa_fp_bits_f32(u | sign);
}
float isa_fp_f64_to_f32(double v, int rmode, int sat) { return isa_fp_bits_f32(isa_fp_from_double(ISA_DT_F32, v, rmode, sat)); }
uint16_t isa_fp_f64_to_f16(double v, int rmode, int sat) { return (uint16_t)isa_fp_from_double(ISA_DT_F16, v, rmode, sat); }
uint16_t isa_fp_f64_to_bf16(double v, int rmode, int sat) { return (uint16_t)isa_fp_from_double(ISA_DT_BF16, v, rmode, sat); }
uint8_t isa_fp_f64_to_e4m3(double v, int rmode, int sat) { return (uint8_t)isa_fp_from_double(ISA_DT_E4M3, v, rmode, sat); }
uint8_t isa_fp_f64_to_e5m2(double v, int rmode, int sat) { return (uint8_t)isa_fp_from_double(ISA_DT_E5M2, v, rmode, sat); }

/* ---- load / store ---------------------------------------------------------- */

double isa_fp_load(isa_dtype dt, const void *p)
{
    const uint8_t *b = p;
    switch (dt) {
    case ISA_DT_F32: {
        uint32_t u;
        memcpy(&u, b, 4);
        return isa_fp_to_double(ISA_DT_F32, u);
    }
    case ISA_DT_F16: case ISA_DT_BF16: {
        uint16_t h;
        memcpy(&h, b, 2);
        return isa_fp_to_double(dt, h);
    }
    case ISA_DT_E4M3: case ISA_DT_E5M2: return isa_fp_to_double(dt, b[0]);
    case ISA_DT_S32: { int32_t x; memcpy(&x, b, 4); return x; }
    case ISA_DT_S16: { int16_t x; memcpy(&x, b, 2); return x; }
    case ISA_DT_S8:  return (int8_t)b[0];
    case ISA_DT_U8:  return b[0];
    case ISA_DT_U16: { uint16_t x; memcpy(&x, b, 2); return x; }
    case ISA_DT_U32: { uint32_t x; memcpy(&x, b, 4); return x; }
    case ISA_DT_S64: { int64_t x; memcpy(&x, b, 8); return (double)x; }
    default: return 0;
    }
}

void isa_fp_store(isa_dtype dt, void *p, double v, int rmode, int sat)
{
    uint8_t *b = p;
    switch (dt) {
    case ISA_DT_F32: {
        uint32_t u = isa_fp_from_double(dt, v, rmode, sat);
        memcpy(b, &u, 4);
        return;
    }
    case ISA_DT_F16: case ISA_DT_BF16: {
        uint16_t h = (uint16_t)isa_fp_from_double(dt, v, rmode, sat);
        memcpy(b, &h, 2);
        return;
    }
    case ISA_DT_E4M3: case ISA_DT_E5M2:
        b[0] = (uint8_t)isa_fp_from_double(dt, v, rmode, sat);
        return;
    default: break;
    }
    int64_t x = isa_fp_to_int(dt, v, rmode, sat);
    switch (isa_dtype_bytes(dt)) {
    case 1: b[0] = (uint8_t)x; break;
    case 2: { uint16_t y = (uint16_t)x; memcpy(b, &y, 2); break; }
    case 4: { uint32_t y = (uint32_t)x; memcpy(b, &y, 4); break; }
    case 8: memcpy(b, &x, 8); break;
    default: break;
    }
}
