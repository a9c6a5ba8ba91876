/* sparse.c — 2:4 compression of a dense B for mmad.sp (see sparse.h). */
#include "sim/sparse.h"

#include <math.h>
#include <string.h>

#include "isa/isa_fp.h"

/* Magnitude for ranking: |value|; NaN ranks as infinity. */
static double mag(isa_dtype dt, const uint8_t *p)
{
    double v = isa_fp_load(dt, p);
    return isnan(v) ? INFINITY : fabs(v);
}

npu_status sim_sparsify_24(isa_dtype dt, const void *dense_b, int k, int n, void *values, uint8_t *meta,
                           npu_diag *d)
{
    int s = isa_dtype_bytes(dt);
    if (s <= 0 || s > 4)
        return npu_errf(d, NPU_EINVAL, "sparsify: dtype %d not supported", (int)dt);
    if (k <= 0 || k % 4 || n <= 0)
        return npu_errf(d, NPU_EINVAL, "sparsify: k=%d must be a positive multiple of 4 and n=%d positive", k, n);
    const uint8_t *src = dense_b;
    uint8_t *out = values;
    uint64_t n16 = ((uint64_t)n + 15) / 16 * 16;
    memset(meta, 0, (size_t)sim_sparse_meta_bytes(k, n));
    for (int g = 0; g < k / 4; g++)
        for (int c = 0; c < n; c++) {
            double m[4];
            for (int i = 0; i < 4; i++)
                m[i] = mag(dt, src + ((size_t)(4 * g + i) * (size_t)n + (size_t)c) * (size_t)s);
            /* best: largest, lowest index on ties; second: the same among the rest */
            int b0 = 0;
            for (int i = 1; i < 4; i++)
                if (m[i] > m[b0])
                    b0 = i;
            int b1 = -1;
            for (int i = 0; i < 4; i++)
                if (i != b0 && (b1 < 0 || m[i] > m[b1]))
                    b1 = i;
            int lo = b0 < b1 ? b0 : b1, hi = b0 < b1 ? b1 : b0;
            memcpy(out + ((size_t)(2 * g) * (size_t)n + (size_t)c) * (size_t)s,
                   src + ((size_t)(4 * g + lo) * (size_t)n + (size_t)c) * (size_t)s, (size_t)s);
            memcpy(out + ((size_t)(2 * g + 1) * (size_t)n + (size_t)c) * (size_t)s,
                   src + ((size_t)(4 * g + hi) * (size_t)n + (size_t)c) * (size_t)s, (size_t)s);
            uint64_t q = (uint64_t)g * n16 + (uint64_t)c;
            meta[q / 2] |= (uint8_t)((unsigned)(lo | hi << 2) << (4 * (q % 2)));
        }
    return NPU_OK;
}
