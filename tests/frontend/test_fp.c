/* test_fp.c — the number formats of isa/isa_fp.h against independent
 * references:
 *  - narrow float destinations (f16, bf16, e4m3, e5m2): a sorted table of
 *    every finite value of the format (decoded with ldexp, not with the
 *    library), searched by bisection, with the tie and overflow rules
 *    applied to the table neighbours;
 *  - fp32 destination and integer destinations: the host FPU under
 *    fesetround() and libm's rint/trunc/floor/ceil/round.
 * Every 16- and 8-bit pattern is checked exhaustively, every boundary of
 * every format for every mode, and millions of seeded random inputs. */
#include "tests/frontend/suites.h"
#include "isa/isa_fp.h"
#include "isa/npu_util.h"

#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Check's ck_assert records a mark point through a pipe on every call
 * (a syscall each); the loops below make millions of checks, so they only
 * call into Check when a check fails. */
#define CHK(c) do { if (!(c)) ck_assert(c); } while (0)
#define CHK_MSG(c, ...) do { if (!(c)) ck_assert_msg(c, __VA_ARGS__); } while (0)
#define CHK_EQ(a, b) do { if ((a) != (b)) ck_assert_uint_eq(a, b); } while (0)

/* ---- the table reference --------------------------------------------------- */

typedef struct ref_fmt {
    isa_dtype dt;
    int ebits, mbits, has_inf;
    uint32_t maxbits, nan, inf;
    int n;            /* finite non-negative patterns: 0 .. n-1 */
    double *val;      /* val[0..n]: val[n] is the would-be next value (sentinel) */
} ref_fmt;

/* Decode a pattern's magnitude by the textbook formula, ignoring specials. */
static double ref_decode_mag(const ref_fmt *R, uint32_t mag)
{
    int bias = (1 << (R->ebits - 1)) - 1;
    uint32_t field = mag >> R->mbits, man = mag & ((1u << R->mbits) - 1);
    if (field == 0)
        return ldexp((double)man, 1 - bias - R->mbits);
    return ldexp(1.0 + (double)man / (double)(1u << R->mbits), (int)field - bias);
}

static void ref_init(ref_fmt *R, isa_dtype dt)
{
    memset(R, 0, sizeof *R);
    R->dt = dt;
    switch (dt) {
    case ISA_DT_F16: R->ebits = 5; R->mbits = 10; R->has_inf = 1; R->maxbits = 0x7BFF; R->nan = 0x7E00; R->inf = 0x7C00; break;
    case ISA_DT_BF16: R->ebits = 8; R->mbits = 7; R->has_inf = 1; R->maxbits = 0x7F7F; R->nan = 0x7FC0; R->inf = 0x7F80; break;
    case ISA_DT_E4M3: R->ebits = 4; R->mbits = 3; R->has_inf = 0; R->maxbits = 0x7E; R->nan = 0x7F; R->inf = 0; break;
    case ISA_DT_E5M2: R->ebits = 5; R->mbits = 2; R->has_inf = 1; R->maxbits = 0x7B; R->nan = 0x7E; R->inf = 0x7C; break;
    default: ck_abort_msg("no ref format");
    }
    R->n = (int)R->maxbits + 1;
    R->val = malloc(sizeof(double) * (size_t)(R->n + 1));
    for (int i = 0; i <= R->n; i++)
        R->val[i] = ref_decode_mag(R, (uint32_t)i);
    for (int i = 1; i <= R->n; i++)
        ck_assert(R->val[i] > R->val[i - 1]);
}

static void ref_free(ref_fmt *R) { free(R->val); }

static uint32_t ref_sign(const ref_fmt *R) { return 1u << (R->ebits + R->mbits); }

static uint32_t ref_round(const ref_fmt *R, double x, int rmode, int sat)
{
    int neg = signbit(x) != 0;
    uint32_t s = neg ? ref_sign(R) : 0;
    uint32_t over = sat ? R->maxbits : (R->has_inf ? R->inf : R->nan);
    if (isnan(x))
        return s | R->nan;
    if (isinf(x))
        return s | over;
    double a = fabs(x);
    if (a == 0)
        return s;
    int up = (rmode == ISA_RM_RUP && !neg) || (rmode == ISA_RM_RDN && neg);
    int down = rmode == ISA_RM_RTZ || (rmode == ISA_RM_RUP && neg) || (rmode == ISA_RM_RDN && !neg);
    int lo = 0, hi = R->n;  /* largest i in [0, n] with val[i] <= a */
    if (a >= R->val[R->n]) {
        lo = R->n;
    } else {
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (R->val[mid] <= a)
                lo = mid;
            else
                hi = mid;
        }
    }
    int pick;
    if (lo == R->n) {
        pick = down ? R->n - 1 : R->n;
    } else if (R->val[lo] == a) {
        pick = lo;
    } else if (down) {
        pick = lo;
    } else if (up) {
        pick = lo + 1;
    } else {
        double mid = (R->val[lo] + R->val[lo + 1]) / 2;
        if (a < mid)
            pick = lo;
        else if (a > mid)
            pick = lo + 1;
        else if (rmode == ISA_RM_RNA)
            pick = lo + 1;
        else
            pick = (lo & 1) ? lo + 1 : lo;
    }
    if (pick == R->n)
        return s | over;
    return s | (uint32_t)pick;
}

static const isa_dtype narrow[] = {ISA_DT_F16, ISA_DT_BF16, ISA_DT_E4M3, ISA_DT_E5M2};

static int same_f32(float a, float b)
{
    return isa_fp_f32_bits(a) == isa_fp_f32_bits(b);
}

static float f32_of_bits(uint32_t u) { return isa_fp_bits_f32(u); }

/* ---- table and names -------------------------------------------------------- */

START_TEST(t_dtype_table)
{
    ck_assert_str_eq(isa_dtype_suffix(ISA_DT_F32), "f32");
    ck_assert_str_eq(isa_dtype_suffix(ISA_DT_E4M3), "e4m3");
    ck_assert_str_eq(isa_dtype_suffix((isa_dtype)99), "?");
    ck_assert_int_eq(isa_dtype_bytes(ISA_DT_BF16), 2);
    ck_assert_int_eq(isa_dtype_bytes(ISA_DT_S64), 8);
    ck_assert_int_eq(isa_dtype_bytes(ISA_DT_E5M2), 1);
    ck_assert_int_eq(isa_dtype_kind(ISA_DT_U16), 'u');
    for (int i = 0; i < ISA_DT_COUNT; i++)
        ck_assert_int_eq(isa_dtype_from_name(isa_dtype_suffix((isa_dtype)i)), i);
    ck_assert_int_eq(isa_dtype_from_name("bfloat16"), ISA_DT_BF16);
    ck_assert_int_eq(isa_dtype_from_name("float8_e4m3fn"), ISA_DT_E4M3);
    ck_assert_int_eq(isa_dtype_from_name("float8_e5m2"), ISA_DT_E5M2);
    ck_assert_int_eq(isa_dtype_from_name("float64"), -1);
    ck_assert_int_eq(isa_dtype_from_name(NULL), -1);
    for (int m = 0; m < ISA_RM__COUNT; m++)
        ck_assert_int_eq(isa_rmode_from_name(isa_rmode_name(m)), m);
    ck_assert_int_eq(isa_rmode_from_name("nearest"), -1);
}
END_TEST

/* Known values from the format specs (IEEE 754, OCP fp8 v1.0). */
START_TEST(t_spot_values)
{
    CHK_EQ(isa_fp_f32_to_f16(1.0f), 0x3C00);
    CHK_EQ(isa_fp_f32_to_f16(65504.0f), 0x7BFF);
    CHK_EQ(isa_fp_f32_to_f16(65519.0f), 0x7BFF);
    CHK_EQ(isa_fp_f32_to_f16(65520.0f), 0x7C00);
    CHK_EQ(isa_fp_f32_to_f16_r(65520.0f, ISA_RM_RTZ, 0), 0x7BFF);
    CHK_EQ(isa_fp_f32_to_f16_r(1e9f, ISA_RM_RNE, 1), 0x7BFF);
    CHK_EQ(isa_fp_f32_to_f16_r(-1e9f, ISA_RM_RUP, 0), 0xFBFF);
    CHK_EQ(isa_fp_f32_to_f16_r(-1e9f, ISA_RM_RDN, 0), 0xFC00);
    CHK_EQ(isa_fp_f32_to_f16(0x1p-24f), 0x0001);
    CHK_EQ(isa_fp_f32_to_f16(0x1p-25f), 0x0000);      /* tie to even 0 */
    CHK_EQ(isa_fp_f32_to_f16_r(0x1p-25f, ISA_RM_RNA, 0), 0x0001);
    CHK_EQ(isa_fp_f32_to_f16(-0.0f), 0x8000);
    CHK_EQ(isa_fp_f32_to_f16(-INFINITY), 0xFC00);
    CHK_EQ(isa_fp_f32_to_f16(-NAN), 0xFE00);
    CHK_EQ(isa_fp_f32_to_bf16(1.0f), 0x3F80);
    CHK_EQ(isa_fp_f32_to_bf16(f32_of_bits(0x7F7FFFFF)), 0x7F80);
    CHK_EQ(isa_fp_f32_to_bf16_r(f32_of_bits(0x7F7FFFFF), ISA_RM_RTZ, 0), 0x7F7F);
    CHK_EQ(isa_fp_f32_to_bf16(f32_of_bits(0x3F808000)), 0x3F80); /* tie, even */
    CHK_EQ(isa_fp_f32_to_bf16(f32_of_bits(0x3F818000)), 0x3F82); /* tie, odd */
    CHK_EQ(isa_fp_f32_to_bf16(f32_of_bits(0x7F800001)), 0x7FC0);
    CHK_EQ(isa_fp_f32_to_e4m3(448.0f, ISA_RM_RNE, 0), 0x7E);
    CHK_EQ(isa_fp_f32_to_e4m3(464.0f, ISA_RM_RNE, 0), 0x7E);     /* tie to even 448 */
    CHK_EQ(isa_fp_f32_to_e4m3(465.0f, ISA_RM_RNE, 0), 0x7F);     /* NaN */
    CHK_EQ(isa_fp_f32_to_e4m3(-1000.0f, ISA_RM_RNE, 1), 0xFE);   /* -448 */
    CHK_EQ(isa_fp_f32_to_e4m3(INFINITY, ISA_RM_RNE, 0), 0x7F);
    CHK_EQ(isa_fp_f32_to_e4m3(INFINITY, ISA_RM_RNE, 1), 0x7E);
    CHK_EQ(isa_fp_f32_to_e4m3(1000.0f, ISA_RM_RTZ, 0), 0x7E);
    CHK_EQ(isa_fp_f32_to_e4m3(0x1p-9f, ISA_RM_RNE, 0), 0x01);
    CHK_EQ(isa_fp_f32_to_e4m3(0x1p-6f, ISA_RM_RNE, 0), 0x08);
    CHK_EQ(isa_fp_f32_to_e5m2(57344.0f, ISA_RM_RNE, 0), 0x7B);
    CHK_EQ(isa_fp_f32_to_e5m2(61440.0f, ISA_RM_RNE, 0), 0x7C);   /* tie -> inf */
    CHK_EQ(isa_fp_f32_to_e5m2(61439.0f, ISA_RM_RNE, 0), 0x7B);
    CHK_EQ(isa_fp_f32_to_e5m2(NAN, ISA_RM_RNE, 0), 0x7E);
    CHK_EQ(isa_fp_f32_to_e5m2(0x1p-16f, ISA_RM_RNE, 0), 0x01);
    CHK(isa_fp_e4m3_to_f32(0x7E) == 448.0f);
    CHK(isa_fp_e4m3_to_f32(0x01) == 0x1p-9f);
    CHK(isnan(isa_fp_e4m3_to_f32(0xFF)) && signbit(isa_fp_e4m3_to_f32(0xFF)));
    CHK(isa_fp_e4m3_to_f32(0x78) == 256.0f);      /* exponent 1111 is finite */
    CHK(isa_fp_e5m2_to_f32(0x7B) == 57344.0f);
    CHK(isinf(isa_fp_e5m2_to_f32(0xFC)) && isa_fp_e5m2_to_f32(0xFC) < 0);
    CHK_EQ(isa_fp_f32_bits(isa_fp_e5m2_to_f32(0x7D)), ISA_FP_NAN_F32);
    CHK(isa_fp_f16_to_f32(0x0001) == 0x1p-24f);
    CHK(isa_fp_bf16_to_f32(0x0001) == 0x1p-133f);
    /* fp32 -> fp32 is the identity except NaN canonicalisation and sat */
    ck_assert_uint_eq(isa_fp_from_f32(ISA_DT_F32, 0x1p-149f, ISA_RM_RUP, 1), 1);
    ck_assert_uint_eq(isa_fp_from_f32(ISA_DT_F32, -3.5f, ISA_RM_RTZ, 0), 0xC0600000u);
    ck_assert_uint_eq(isa_fp_from_f32(ISA_DT_F32, -INFINITY, ISA_RM_RNE, 1), 0xFF7FFFFFu);
    ck_assert_uint_eq(isa_fp_from_f32(ISA_DT_F32, f32_of_bits(0xFF800123u), ISA_RM_RNE, 0), 0xFFC00000u);
    /* double -> f16 rounds once: 1 + 2^-11 + 2^-40 is above the halfway
     * point, but rounding it to fp32 first lands exactly on the tie. */
    double d = 1.0 + 0x1p-11 + 0x1p-40;
    CHK_EQ(isa_fp_f64_to_f16(d, ISA_RM_RNE, 0), 0x3C01);
    CHK_EQ(isa_fp_f32_to_f16((float)d), 0x3C00);
}
END_TEST

/* ---- exhaustive patterns ------------------------------------------------------ */

static int is_nan_pattern(const ref_fmt *R, uint32_t b)
{
    uint32_t mag = b & (ref_sign(R) - 1);
    return mag > R->maxbits && !(R->has_inf && mag == R->inf);
}

static void check_all_patterns(isa_dtype dt)
{
    ref_fmt R;
    ref_init(&R, dt);
    uint32_t count = ref_sign(&R) << 1;
    for (uint32_t b = 0; b < count; b++) {
        uint32_t mag = b & (ref_sign(&R) - 1);
        int neg = (b & ref_sign(&R)) != 0;
        float f = isa_fp_to_f32(dt, b);
        double d = isa_fp_to_double(dt, b);
        if (is_nan_pattern(&R, b)) {
            CHK_MSG(isa_fp_f32_bits(f) == (ISA_FP_NAN_F32 | (neg ? 0x80000000u : 0)),
                          "%s %#x: widened NaN %#x", isa_dtype_suffix(dt), b, isa_fp_f32_bits(f));
            CHK(isnan(d) && (signbit(d) != 0) == neg);
            for (int m = 0; m < ISA_RM__COUNT; m++)
                for (int sat = 0; sat < 2; sat++)
                    CHK_EQ(isa_fp_from_f32(dt, f, m, sat), (neg ? ref_sign(&R) : 0) | R.nan);
            continue;
        }
        double want = (R.has_inf && mag == R.inf) ? INFINITY : ref_decode_mag(&R, mag);
        if (neg)
            want = -want;
        CHK_MSG((double)f == want && d == want && (signbit(f) != 0) == neg,
                      "%s %#x: decodes to %a, want %a", isa_dtype_suffix(dt), b, (double)f, want);
        for (int m = 0; m < ISA_RM__COUNT; m++) {
            /* exact values come back unchanged in every mode; an infinity
             * saturates to max finite when sat is on */
            CHK_EQ(isa_fp_from_f32(dt, f, m, 0), b);
            CHK_EQ(isa_fp_from_double(dt, d, m, 0), b);
            uint32_t bs = isa_fp_from_f32(dt, f, m, 1);
            if (isinf(want))
                CHK_EQ(bs, (b & ref_sign(&R)) | R.maxbits);
            else
                CHK_EQ(bs, b);
        }
    }
    ref_free(&R);
}

START_TEST(t_all_f16) { check_all_patterns(ISA_DT_F16); }
END_TEST
START_TEST(t_all_bf16) { check_all_patterns(ISA_DT_BF16); }
END_TEST
START_TEST(t_all_fp8)
{
    check_all_patterns(ISA_DT_E4M3);
    check_all_patterns(ISA_DT_E5M2);
}
END_TEST

/* The inline hot paths agree with the engine on every 16-bit pattern. */
START_TEST(t_fast_widen)
{
    for (uint32_t b = 0; b < 65536; b++) {
        CHK(same_f32(isa_fp_f16_to_f32((uint16_t)b),
                           f32_of_bits(isa_fp_from_double(ISA_DT_F32, isa_fp_to_double(ISA_DT_F16, b), 0, 0))));
        CHK(same_f32(isa_fp_bf16_to_f32((uint16_t)b),
                           f32_of_bits(isa_fp_from_double(ISA_DT_F32, isa_fp_to_double(ISA_DT_BF16, b), 0, 0))));
    }
}
END_TEST

/* ---- boundaries ------------------------------------------------------------- */

static void check_point(const ref_fmt *R, double x, long *n)
{
    int f32ok = (double)(float)x == x || isnan(x);
    for (int m = 0; m < ISA_RM__COUNT; m++)
        for (int sat = 0; sat < 2; sat++) {
            uint32_t want = ref_round(R, x, m, sat);
            uint32_t got = isa_fp_from_double(R->dt, x, m, sat);
            CHK_MSG(got == want, "%s from double %a mode %s sat %d: got %#x want %#x",
                          isa_dtype_suffix(R->dt), x, isa_rmode_name(m), sat, got, want);
            if (f32ok) {
                got = isa_fp_from_f32(R->dt, (float)x, m, sat);
                CHK_MSG(got == want, "%s from f32 %a mode %s sat %d: got %#x want %#x",
                              isa_dtype_suffix(R->dt), x, isa_rmode_name(m), sat, got, want);
            }
            (*n)++;
        }
    if (f32ok && R->dt == ISA_DT_F16)
        CHK_EQ(isa_fp_f32_to_f16((float)x), ref_round(R, x, 0, 0));
    if (f32ok && R->dt == ISA_DT_BF16)
        CHK_EQ(isa_fp_f32_to_bf16((float)x), ref_round(R, x, 0, 0));
}

/* Every value, every halfway point between neighbours (including the one
 * between max finite and the overflow threshold, and between 0 and the
 * smallest subnormal), and the nearest fp32 and double on each side of
 * each, in both signs; then the specials. */
static void check_boundaries(isa_dtype dt)
{
    ref_fmt R;
    ref_init(&R, dt);
    long n = 0;
    for (int i = 0; i <= R.n; i++) {
        double pts[10];
        int k = 0;
        double v = R.val[i];
        pts[k++] = v;
        if (i < R.n) {
            double mid = (v + R.val[i + 1]) / 2;
            pts[k++] = mid;
            pts[k++] = nextafter(mid, INFINITY);
            pts[k++] = nextafter(mid, 0);
            pts[k++] = (double)nextafterf((float)mid, INFINITY);
            pts[k++] = (double)nextafterf((float)mid, 0);
        }
        pts[k++] = nextafter(v, INFINITY);
        if (v > 0) {
            pts[k++] = nextafter(v, 0);
            pts[k++] = (double)nextafterf((float)v, 0);
        }
        pts[k++] = v * 2;
        for (int j = 0; j < k; j++) {
            check_point(&R, pts[j], &n);
            check_point(&R, -pts[j], &n);
        }
    }
    const double specials[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, DBL_MAX, -DBL_MAX,
                               DBL_MIN, 0x1p-1074, FLT_MAX, -FLT_MAX, 0x1p-149, 0x1p-126,
                               0x1p-150, 0x1p200, 1e-300};
    for (unsigned j = 0; j < NPU_ARRAY_LEN(specials); j++)
        check_point(&R, specials[j], &n);
    CHK(n > 1000);
    ref_free(&R);
}

START_TEST(t_boundaries)
{
    check_boundaries(narrow[_i]);
}
END_TEST

/* ---- random fp32 and double inputs ----------------------------------------- */

/* Random fp32 bits: half uniform patterns, half with the exponent drawn
 * near the destination's range so that subnormals, normals and overflow
 * all get dense coverage. */
static uint32_t rand_f32_bits(npu_rng *r, int elo, int ehi)
{
    uint64_t x = npu_rng_next(r);
    uint32_t u = (uint32_t)x;
    if ((x >> 32) & 1) {
        int span = ehi - elo + 1;
        int e = elo + (int)((x >> 33) % (uint64_t)span);
        if (e < 1)
            e = (x >> 40) & 1 ? 0 : 1;
        if (e > 254)
            e = 254;
        u = (u & 0x807FFFFFu) | ((uint32_t)e << 23);
    }
    return u;
}

static void exp_window(isa_dtype dt, int *lo, int *hi)
{
    switch (dt) {
    case ISA_DT_F16: *lo = 127 - 27; *hi = 127 + 17; break;
    case ISA_DT_BF16: *lo = 0; *hi = 255; break;
    case ISA_DT_E4M3: *lo = 127 - 12; *hi = 127 + 10; break;
    default: *lo = 127 - 19; *hi = 127 + 17; break;
    }
}

START_TEST(t_random_f32)
{
    isa_dtype dt = narrow[_i];
    ref_fmt R;
    ref_init(&R, dt);
    npu_rng rng = {0x5EEDu + (uint64_t)_i};
    int elo, ehi;
    exp_window(dt, &elo, &ehi);
    long n = 0;
    for (int m = 0; m < ISA_RM__COUNT; m++)
        for (int sat = 0; sat < 2; sat++)
            for (int k = 0; k < 100000; k++) {
                float f = f32_of_bits(rand_f32_bits(&rng, elo, ehi));
                uint32_t want = ref_round(&R, (double)f, m, sat);
                uint32_t got = isa_fp_from_f32(dt, f, m, sat);
                CHK_MSG(got == want, "%s %a %s sat %d: got %#x want %#x", isa_dtype_suffix(dt),
                              (double)f, isa_rmode_name(m), sat, got, want);
                n++;
            }
    /* the inline RNE paths, against the same reference */
    if (dt == ISA_DT_F16 || dt == ISA_DT_BF16)
        for (int k = 0; k < 1000000; k++) {
            float f = f32_of_bits(rand_f32_bits(&rng, elo, ehi));
            uint32_t want = ref_round(&R, (double)f, ISA_RM_RNE, 0);
            uint32_t got = dt == ISA_DT_F16 ? isa_fp_f32_to_f16(f) : isa_fp_f32_to_bf16(f);
            CHK_MSG(got == want, "fast %s %a: got %#x want %#x", isa_dtype_suffix(dt),
                          (double)f, got, want);
            n++;
        }
    CHK(n >= 1000000);
    ref_free(&R);
}
END_TEST

/* Doubles just off the halfway points: rounding through fp32 would land
 * on the tie and go the wrong way; the direct path must not. */
START_TEST(t_random_double)
{
    isa_dtype dt = narrow[_i];
    ref_fmt R;
    ref_init(&R, dt);
    npu_rng rng = {0xD0B1Eu + (uint64_t)_i};
    long differ = 0;
    for (int k = 0; k < 200000; k++) {
        uint64_t x = npu_rng_next(&rng);
        int i = (int)(x % (uint64_t)R.n);
        double mid = (R.val[i] + R.val[i + 1]) / 2;
        double off = ldexp(mid, -30 - (int)((x >> 20) % 20)) * (((x >> 40) & 1) ? 1 : -1);
        double v = mid + off;
        if ((x >> 41) & 1)
            v = -v;
        for (int m = 0; m < ISA_RM__COUNT; m++) {
            uint32_t want = ref_round(&R, v, m, 0);
            CHK_EQ(isa_fp_from_double(dt, v, m, 0), want);
            if (m == ISA_RM_RNE && isa_fp_from_f32(dt, (float)v, m, 0) != want)
                differ++;
        }
    }
    /* the test means something: double rounding would have been wrong */
    CHK(differ > 1000);
    ref_free(&R);
}
END_TEST

/* ---- fp32 destination against the host FPU ------------------------------------ */

static const int fe_modes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_UPWARD, FE_DOWNWARD};

static float host_to_f32(double x, int rmode, int sat)
{
    volatile double vx = x;
    volatile float r;
    if (rmode == ISA_RM_RNA) {
        fesetround(FE_TOWARDZERO);
        r = (float)vx;
        fesetround(FE_TONEAREST);
        float lo = r;
        if ((double)lo != x && !isnan(x)) {
            float hi = nextafterf(lo, x > 0 ? INFINITY : -INFINITY);
            double mid = isinf(hi) ? (double)lo + copysign(0x1p103, x) : ((double)lo + (double)hi) / 2;
            r = fabs(x) >= fabs(mid) ? hi : lo;
        }
    } else {
        fesetround(fe_modes[rmode]);
        r = (float)vx;
        fesetround(FE_TONEAREST);
    }
    float f = r;
    if (isnan(f))
        return f32_of_bits(ISA_FP_NAN_F32 | (signbit(x) ? 0x80000000u : 0));
    if (sat && isinf(f))
        return copysignf(FLT_MAX, f);
    return f;
}

START_TEST(t_f32_dest)
{
    npu_rng rng = {0xF32u};
    for (int k = 0; k < 300000; k++) {
        uint64_t x = npu_rng_next(&rng);
        /* exponents from deep fp32-subnormal to past FLT_MAX */
        int e = 1023 - 160 + (int)((x >> 52) % 300);
        uint64_t u = (x & 0x800FFFFFFFFFFFFFull) | ((uint64_t)e << 52);
        if ((x & 7) == 0)   /* low bits exactly at a fp32 halfway point */
            u = (u & ~0x3FFFFFFFull) | 0x10000000ull;
        double d;
        memcpy(&d, &u, 8);
        for (int m = 0; m < ISA_RM__COUNT; m++)
            for (int sat = 0; sat < 2; sat++) {
                float want = host_to_f32(d, m, sat);
                float got = isa_fp_f64_to_f32(d, m, sat);
                CHK_MSG(same_f32(got, want), "%a %s sat %d: got %a want %a", d,
                              isa_rmode_name(m), sat, (double)got, (double)want);
            }
    }
    CHK(same_f32(isa_fp_f64_to_f32(NAN, 0, 0), f32_of_bits(ISA_FP_NAN_F32)));
    CHK(same_f32(isa_fp_f64_to_f32(-INFINITY, 0, 1), -FLT_MAX));
    CHK(same_f32(isa_fp_f64_to_f32(-0.0, 0, 0), -0.0f));
}
END_TEST

/* ---- integers ------------------------------------------------------------------ */

static double host_round(double x, int rmode)
{
    switch (rmode) {
    case ISA_RM_RTZ: return trunc(x);
    case ISA_RM_RUP: return ceil(x);
    case ISA_RM_RDN: return floor(x);
    case ISA_RM_RNA: return round(x);
    default: return nearbyint(x);
    }
}

static int64_t host_to_int(isa_dtype dt, double x, int rmode, int sat)
{
    int nb = isa_dtype_bytes(dt) * 8;
    int sg = isa_dtype_kind(dt) == 's';
    if (isnan(x))
        return 0;
    if (isinf(x) && !sat)
        return 0;
    double r = isinf(x) ? x : host_round(x, rmode);
    double lo = sg ? -ldexp(1, nb - 1) : 0;
    double hi = sg ? ldexp(1, nb - 1) - 1 : ldexp(1, nb) - 1;
    if (sat) {
        if (r <= lo)
            return sg ? (nb == 64 ? INT64_MIN : -(1ll << (nb - 1))) : 0;
        if (r >= hi)
            return (int64_t)(sg ? (nb == 64 ? INT64_MAX : (1ll << (nb - 1)) - 1) : (1ll << nb) - 1);
        return (int64_t)r;
    }
    uint64_t w;
    if (fabs(r) < 0x1p63) {
        w = (uint64_t)(int64_t)r;
    } else {
        w = (uint64_t)fmod(fabs(r), 0x1p64);
        if (r < 0)
            w = 0 - w;
    }
    if (nb < 64) {
        w &= (1ull << nb) - 1;
        if (sg && (w >> (nb - 1)))
            w |= ~((1ull << nb) - 1);
    }
    return (int64_t)w;
}

static const isa_dtype ints[] = {ISA_DT_S32, ISA_DT_S16, ISA_DT_S8, ISA_DT_U8,
                                 ISA_DT_U16, ISA_DT_U32, ISA_DT_S64};

START_TEST(t_to_int)
{
    npu_rng rng = {0x1A7u};
    for (int k = 0; k < 60000; k++) {
        uint64_t x = npu_rng_next(&rng);
        int e = 127 - 3 + (int)((x >> 40) % 72);   /* 2^-3 .. 2^68 */
        uint32_t u = ((uint32_t)x & 0x807FFFFFu) | ((uint32_t)e << 23);
        if ((x >> 62) == 0)       /* exact .5 cases */
            u = isa_fp_f32_bits((float)((int32_t)(x >> 8) % 1000) + 0.5f);
        float f = f32_of_bits(u);
        for (unsigned t = 0; t < NPU_ARRAY_LEN(ints); t++)
            for (int m = 0; m < ISA_RM__COUNT; m++)
                for (int sat = 0; sat < 2; sat++) {
                    int64_t want = host_to_int(ints[t], f, m, sat);
                    int64_t got = isa_fp_to_int(ints[t], f, m, sat);
                    CHK_MSG(got == want, "%a -> %s %s sat %d: got %lld want %lld", (double)f,
                                  isa_dtype_suffix(ints[t]), isa_rmode_name(m), sat, (long long)got,
                                  (long long)want);
                }
    }
    const float sp[] = {NAN, INFINITY, -INFINITY, -0.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f,
                        2147483648.0f, -2147483648.0f, 4294967296.0f, 255.5f, -128.5f};
    for (unsigned j = 0; j < NPU_ARRAY_LEN(sp); j++)
        for (unsigned t = 0; t < NPU_ARRAY_LEN(ints); t++)
            for (int m = 0; m < ISA_RM__COUNT; m++)
                for (int sat = 0; sat < 2; sat++)
                    ck_assert_int_eq(isa_fp_to_int(ints[t], sp[j], m, sat),
                                     host_to_int(ints[t], sp[j], m, sat));
    ck_assert_int_eq(isa_fp_f32_to_s8(300.0f, ISA_RM_RNE, 1), 127);
    ck_assert_int_eq(isa_fp_f32_to_s8(300.0f, ISA_RM_RNE, 0), 44);
    ck_assert_int_eq(isa_fp_f32_to_u8(-3.0f, ISA_RM_RNE, 1), 0);
    ck_assert_int_eq(isa_fp_f32_to_s32(2.5f, ISA_RM_RNE, 1), 2);
    ck_assert_int_eq(isa_fp_f32_to_s32(2.5f, ISA_RM_RNA, 1), 3);
    ck_assert_int_eq(isa_fp_f32_to_s16(-2.5f, ISA_RM_RDN, 1), -3);
    CHK_EQ(isa_fp_f32_to_u16(70000.0f, ISA_RM_RNE, 1), 65535);
    CHK_EQ(isa_fp_f32_to_u32(-1.0f, ISA_RM_RNE, 0), 0xFFFFFFFFu);
}
END_TEST

START_TEST(t_from_int)
{
    npu_rng rng = {0x1B7u};
    for (int k = 0; k < 100000; k++) {
        uint64_t x = npu_rng_next(&rng);
        int64_t v = (int64_t)x >> (x & 63);
        for (int m = 0; m < 4; m++) {
            volatile int64_t vv = v;
            fesetround(fe_modes[m]);
            volatile float want = (float)vv;
            fesetround(FE_TONEAREST);
            CHK(same_f32(f32_of_bits(isa_fp_from_i64(ISA_DT_F32, v, m, 0)), want));
            if (v >= INT32_MIN && v <= INT32_MAX)
                CHK(same_f32(isa_fp_s32_to_f32((int32_t)v, m), want));
        }
        if (v > -(1ll << 53) && v < (1ll << 53)) {
            for (unsigned j = 0; j < NPU_ARRAY_LEN(narrow); j++)
                for (int m = 0; m < ISA_RM__COUNT; m++)
                    CHK_EQ(isa_fp_from_i64(narrow[j], v, m, 0),
                                      isa_fp_from_double(narrow[j], (double)v, m, 0));
        }
        uint64_t uv = x >> (x & 63);
        fesetround(FE_TOWARDZERO);
        volatile uint64_t vu = uv;
        volatile float wu = (float)vu;
        fesetround(FE_TONEAREST);
        CHK(same_f32(f32_of_bits(isa_fp_from_u64(ISA_DT_F32, uv, ISA_RM_RTZ, 0)), wu));
    }
    CHK_EQ(isa_fp_from_i64(ISA_DT_E4M3, 1000, ISA_RM_RNE, 1), 0x7E);
    CHK_EQ(isa_fp_from_i64(ISA_DT_F16, -70000, ISA_RM_RNE, 0), 0xFC00);
}
END_TEST

/* ---- load / store ---------------------------------------------------------------- */

START_TEST(t_load_store)
{
    uint8_t buf[8];
    const double vals[] = {0, 1, -1, 2.5, -3.75, 100, 127, -128, 255, 1000.25, 65504, 1e6};
    for (int dt = 0; dt < ISA_DT_COUNT; dt++)
        for (unsigned j = 0; j < NPU_ARRAY_LEN(vals); j++)
            for (int sat = 0; sat < 2; sat++) {
                memset(buf, 0xAA, sizeof buf);
                isa_fp_store((isa_dtype)dt, buf, vals[j], ISA_RM_RNE, sat);
                /* only the element's bytes are written */
                for (int b = isa_dtype_bytes((isa_dtype)dt); b < 8; b++)
                    CHK_EQ(buf[b], 0xAA);
                double got = isa_fp_load((isa_dtype)dt, buf);
                double want;
                if (isa_dtype_kind((isa_dtype)dt) == 'f') {
                    uint32_t bits = isa_fp_from_double((isa_dtype)dt, vals[j], ISA_RM_RNE, sat);
                    want = isa_fp_to_double((isa_dtype)dt, bits);
                } else {
                    want = (double)isa_fp_to_int((isa_dtype)dt, vals[j], ISA_RM_RNE, sat);
                }
                CHK_MSG(got == want || (isnan(got) && isnan(want)), "%s %g: %g vs %g",
                              isa_dtype_suffix((isa_dtype)dt), vals[j], got, want);
            }
    /* little-endian layout */
    isa_fp_store(ISA_DT_F16, buf, 1.0, 0, 0);
    CHK(buf[0] == 0x00 && buf[1] == 0x3C);
    isa_fp_store(ISA_DT_S32, buf, -2.0, 0, 0);
    CHK(buf[0] == 0xFE && buf[3] == 0xFF);
    isa_fp_store(ISA_DT_U8, buf, 300.0, 0, 1);
    CHK_EQ(buf[0], 255);
    isa_fp_store(ISA_DT_E4M3, buf, 500.0, 0, 1);
    CHK_EQ(buf[0], 0x7E);
    const uint8_t s64[8] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    CHK(isa_fp_load(ISA_DT_S64, s64) == -1.0);
    CHK(isa_fp_load(ISA_DT_U32, s64) == 4294967295.0);
}
END_TEST

Suite *fp_suite(void)
{
    Suite *s = suite_create("fp");
    TCase *tc = tcase_create("formats");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, t_dtype_table);
    tcase_add_test(tc, t_spot_values);
    tcase_add_test(tc, t_all_f16);
    tcase_add_test(tc, t_all_bf16);
    tcase_add_test(tc, t_all_fp8);
    tcase_add_test(tc, t_fast_widen);
    tcase_add_loop_test(tc, t_boundaries, 0, (int)NPU_ARRAY_LEN(narrow));
    tcase_add_loop_test(tc, t_random_f32, 0, (int)NPU_ARRAY_LEN(narrow));
    tcase_add_loop_test(tc, t_random_double, 0, (int)NPU_ARRAY_LEN(narrow));
    tcase_add_test(tc, t_f32_dest);
    tcase_add_test(tc, t_to_int);
    tcase_add_test(tc, t_from_int);
    tcase_add_test(tc, t_load_store);
    suite_add_tcase(s, tc);
    return s;
}
