/* isa_fp.h — the machine's number formats: bit-exact conversions between
 * fp32, fp16, bf16, fp8 (E4M3 "fn", E5M2) and the integer dtypes, with
 * every rounding mode and overflow rule the hardware and the golden
 * generators need. docs/numerics.md is the reference for every rule here
 * (NaN patterns, overflow, saturation).
 *
 * Conventions:
 *  - a narrow float is passed as its bit pattern (uint16_t / uint8_t, or
 *    uint32_t in the generic calls); fp32 as a C float;
 *  - every conversion rounds exactly once: fp32 and double inputs are
 *    decomposed into integer significand and exponent, never through a
 *    narrower intermediate, so double -> f16 does not double-round;
 *  - every NaN a conversion produces is the destination's canonical quiet
 *    NaN with the sign of the input (ISA_FP_NAN_* below); payloads are
 *    dropped, so results do not depend on the host;
 *  - `sat` = 1 clamps overflow (and infinities) to the largest finite
 *    value of the destination, as NPU casts do; NaN stays NaN.
 * Nothing here allocates, fails or touches libm. */
#ifndef ISA_FP_H
#define ISA_FP_H

#include <stdint.h>
#include <string.h>

#include "isa/isa.h"

/* isa_dtype, isa_dtype_suffix / _bytes / _kind: isa/isa.h (one table). */
/* The dtype named by its suffix ("f16") or its numpy/ml_dtypes name
 * ("float16", "bfloat16", "float8_e4m3fn", "int8", ...); -1 if none. */
int isa_dtype_from_name(const char *name);

/* Rounding modes. The numbering is ABI (the ISA's rounding-mode field). */
typedef enum isa_rmode {
    ISA_RM_RNE = 0, /* to nearest, ties to even (IEEE default) */
    ISA_RM_RTZ = 1, /* toward zero (truncate) */
    ISA_RM_RUP = 2, /* toward +infinity */
    ISA_RM_RDN = 3, /* toward -infinity */
    ISA_RM_RNA = 4, /* to nearest, ties away from zero (C round()) */
    ISA_RM__COUNT
} isa_rmode;

/* "rne", "rtz", "rup", "rdn", "rna"; "?" otherwise. */
const char *isa_rmode_name(int rmode);
/* The mode named by isa_rmode_name; -1 if none. */
int isa_rmode_from_name(const char *name);

/* Canonical NaNs (positive; a conversion ORs in the input's sign). */
#define ISA_FP_NAN_F32  0x7FC00000u
#define ISA_FP_NAN_F16  0x7E00u
#define ISA_FP_NAN_BF16 0x7FC0u
#define ISA_FP_NAN_E4M3 0x7Fu  /* S.1111.111: the only NaN of E4M3fn */
#define ISA_FP_NAN_E5M2 0x7Eu  /* S.11111.10: quiet */
/* Largest finite magnitudes. */
#define ISA_FP_MAX_F16  65504.0
#define ISA_FP_MAX_BF16 3.3895313892515355e38
#define ISA_FP_MAX_E4M3 448.0
#define ISA_FP_MAX_E5M2 57344.0

/* ---- generic conversions (any float dtype, any mode) ----------------------
 * dt must be a float dtype (F32, F16, BF16, E4M3, E5M2); the bits are the
 * pattern of that dtype in the low bits of the result. */
uint32_t isa_fp_from_double(isa_dtype dt, double v, int rmode, int sat);
uint32_t isa_fp_from_f32(isa_dtype dt, float v, int rmode, int sat);
/* Integer to float with one rounding (exact for int64 beyond 2^53). */
uint32_t isa_fp_from_i64(isa_dtype dt, int64_t v, int rmode, int sat);
uint32_t isa_fp_from_u64(isa_dtype dt, uint64_t v, int rmode, int sat);
/* Exact widening: every pattern of every float dtype is a double (and an
 * fp32). NaN -> canonical NaN of the destination, sign kept. */
double isa_fp_to_double(isa_dtype dt, uint32_t bits);
float  isa_fp_to_f32(isa_dtype dt, uint32_t bits);

/* ---- float -> integer -------------------------------------------------
 * Round v to an integer with rmode, then fit it into integer dtype dt:
 *   sat = 1: clamp to [min, max] of dt; +-inf clamp; NaN -> 0;
 *   sat = 0: wrap modulo 2^bits (two's complement), as a C cast from an
 *            unbounded integer would; NaN and +-inf -> 0.
 * The result is the value of dt sign- or zero-extended to 64 bits. */
int64_t isa_fp_to_int(isa_dtype dt, double v, int rmode, int sat);
int32_t  isa_fp_f32_to_s32(float v, int rmode, int sat);
int16_t  isa_fp_f32_to_s16(float v, int rmode, int sat);
int8_t   isa_fp_f32_to_s8(float v, int rmode, int sat);
uint8_t  isa_fp_f32_to_u8(float v, int rmode, int sat);
uint16_t isa_fp_f32_to_u16(float v, int rmode, int sat);
uint32_t isa_fp_f32_to_u32(float v, int rmode, int sat);
float    isa_fp_s32_to_f32(int32_t v, int rmode);

/* ---- named conversions ---------------------------------------------------
 * Cold paths: any mode, optional saturation. */
uint16_t isa_fp_f32_to_f16_r(float v, int rmode, int sat);
uint16_t isa_fp_f32_to_bf16_r(float v, int rmode, int sat);
uint8_t  isa_fp_f32_to_e4m3(float v, int rmode, int sat);
uint8_t  isa_fp_f32_to_e5m2(float v, int rmode, int sat);
float    isa_fp_e4m3_to_f32(uint8_t b);
float    isa_fp_e5m2_to_f32(uint8_t b);
/* Straight from double (golden generators): one rounding. */
float    isa_fp_f64_to_f32(double v, int rmode, int sat);
uint16_t isa_fp_f64_to_f16(double v, int rmode, int sat);
uint16_t isa_fp_f64_to_bf16(double v, int rmode, int sat);
uint8_t  isa_fp_f64_to_e4m3(double v, int rmode, int sat);
uint8_t  isa_fp_f64_to_e5m2(double v, int rmode, int sat);

/* ---- load / store of one element of any dtype ------------------------
 * p points at the element in little-endian byte order (the simulated
 * machine's memory and .npy data; the host is assumed little-endian).
 * Loads are exact except S64 beyond 2^53 (rounded to nearest double).
 * Stores round v once with rmode; sat as above (integers and floats). */
double isa_fp_load(isa_dtype dt, const void *p);
void   isa_fp_store(isa_dtype dt, void *p, double v, int rmode, int sat);

/* ---- hot paths: RNE, non-saturating, branch-light, inline ----------------
 * These run in the vector unit's inner loops. They agree bit for bit with
 * isa_fp_from_f32(.., ISA_RM_RNE, 0) and isa_fp_to_f32 (the tests check
 * every 16-bit pattern and millions of fp32 values). */
static inline uint32_t isa_fp_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float isa_fp_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t isa_fp_f32_to_bf16(float f)
{
    uint32_t u = isa_fp_f32_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)(((u >> 16) & 0x8000u) | ISA_FP_NAN_BF16);
    /* Add just under half an ulp, plus the lsb of the kept part: ties go
     * to even and the carry runs into the exponent (max -> inf) for free. */
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static inline float isa_fp_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    if ((u & 0x7FFFFFFFu) > 0x7F800000u)
        u = (u & 0x80000000u) | ISA_FP_NAN_F32;
    return isa_fp_bits_f32(u);
}

static inline uint16_t isa_fp_f32_to_f16(float f)
{
    uint32_t u = isa_fp_f32_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    u &= 0x7FFFFFFFu;
    uint32_t o;
    if (u >= 0x47800000u) {            /* >= 2^16: overflow, inf or NaN */
        o = u > 0x7F800000u ? ISA_FP_NAN_F16 : 0x7C00u;
    } else if (u < 0x38800000u) {      /* < 2^-14: f16 subnormal or zero */
        /* Adding 0.5 (2^-1) puts the f16 subnormal ulp (2^-24) at the fp32
         * lsb, so the FPU's own RNE does the rounding; subtracting the bias
         * pattern leaves the f16 bits. Needs the default FP rounding mode. */
        float t = isa_fp_bits_f32(u) + 0.5f;
        o = isa_fp_f32_bits(t) - 0x3F000000u;
    } else {
        /* Rebias the exponent and round the 13 dropped bits to even; a
         * carry out of the mantissa bumps the exponent (65520 -> inf). */
        uint32_t odd = (u >> 13) & 1u;
        u += ((uint32_t)(15 - 127) << 23) + 0xFFFu + odd;
        o = u >> 13;
    }
    return (uint16_t)(o | sign);
}

static inline float isa_fp_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t em = h & 0x7FFFu;
    uint32_t u;
    if (em >= 0x7C00u)
        u = em == 0x7C00u ? 0x7F800000u : ISA_FP_NAN_F32;
    else if (em >= 0x0400u)
        u = (em << 13) + ((uint32_t)(127 - 15) << 23);
    else /* subnormal: em * 2^-24 is exact in fp32 */
        u = isa_fp_f32_bits((float)em * 0x1p-24f);
    return isa_fp_bits_f32(u | sign);
}

#endif
