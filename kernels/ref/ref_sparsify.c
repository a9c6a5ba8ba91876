/* ref_sparsify.c — `npusim sparsify`: compress a dense k x n matrix (.npy)
 * into the 2:4 values + metadata that mmad.sp reads (sim/sparse.h,
 * sim_sparsify_24), optionally also writing the pruned dense matrix (what
 * the sparse product equals). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ref/ref.h"
#include "sim/sparse.h"

uint64_t ref_sparse_panel_bytes(int k, int n, int panel)
{
    uint64_t total = 0;
    for (int c0 = 0; c0 < n; c0 += panel)
        total += sim_sparse_meta_bytes(k, NPU_MIN(panel, n - c0));
    return total;
}

void ref_sparse_panels(const uint8_t *meta, int k, int n, int panel, uint8_t *out)
{
    uint64_t n16 = ((uint64_t)n + 15) / 16 * 16, base = 0;
    memset(out, 0, (size_t)ref_sparse_panel_bytes(k, n, panel));
    for (int c0 = 0; c0 < n; c0 += panel) {
        int w = NPU_MIN(panel, n - c0);
        uint64_t w16 = ((uint64_t)w + 15) / 16 * 16;
        for (int g = 0; g < k / 4; g++)
            for (int c = 0; c < w; c++) {
                uint64_t q = (uint64_t)g * n16 + (uint64_t)(c0 + c);
                unsigned nib = (meta[q / 2] >> (4 * (q % 2))) & 15u;
                uint64_t r = (uint64_t)g * w16 + (uint64_t)c;
                out[base + r / 2] |= (uint8_t)(nib << (4 * (r % 2)));
            }
        base += sim_sparse_meta_bytes(k, w);
    }
}

static void usage(FILE *f)
{
    fprintf(f, "usage: npusim sparsify DENSE.npy --values V.npy --meta M.npy [--panel P] [--pruned P.npy]\n\n"
               "DENSE is k x n (k a multiple of 4) of f16, bf16, f32, e4m3, e5m2 or s8. In every group of 4\n"
               "consecutive rows of a column the 2 values of largest magnitude are kept (ties: lower row).\n"
               "V: the kept values, (k/2) x n, same dtype; M: the metadata, uint8, one nibble per\n"
               "(group, column) with columns padded to 16 (sim/sparse.h); P: DENSE with the dropped\n"
               "values zeroed. --panel P (a multiple of 16): the metadata cut into column panels of P\n"
               "columns, each in the format of its columns alone, concatenated (what gemm_sparse.s reads,\n"
               "with P = its BN, 128; kernels/ref/ref.h).\n");
}

int ref_cmd_sparsify(int argc, char **argv)
{
    const char *in = NULL, *vout = NULL, *mout = NULL, *pout = NULL, *panels = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (a[0] == '-') {
            if (i + 1 >= argc) {
                fprintf(stderr, "npusim sparsify: %s needs a value\n", a);
                return 2;
            }
            const char **slot = !strcmp(a, "--values") ? &vout : !strcmp(a, "--meta") ? &mout
                                : !strcmp(a, "--pruned") ? &pout
                                : !strcmp(a, "--panel") ? &panels : NULL;
            if (!slot) {
                fprintf(stderr, "npusim sparsify: unknown option %s (see --help)\n", a);
                return 2;
            }
            *slot = argv[++i];
        } else if (!in) {
            in = a;
        } else {
            fprintf(stderr, "npusim sparsify: more than one input (%s)\n", a);
            return 2;
        }
    }
    if (!in || !vout || !mout) {
        usage(stderr);
        return 2;
    }
    npu_diag d;
    npu_diag_clear(&d);
    npy_tensor dense, vals, meta, pruned;
    memset(&vals, 0, sizeof vals);
    memset(&meta, 0, sizeof meta);
    memset(&pruned, 0, sizeof pruned);
    if (npy_load(in, &dense, &d)) {
        fprintf(stderr, "npusim sparsify: %s\n", d.msg);
        return 2;
    }
    int rc = 2;
    isa_dtype dt = dense.dtype;
    if (dense.ndim != 2 || dense.shape[0] % 4 || dense.shape[0] < 4 || dense.shape[1] < 1 ||
        dense.shape[0] > 65535 || dense.shape[1] > 65535) {
        fprintf(stderr, "npusim sparsify: %s: need a 2-D k x n matrix with k a positive multiple of 4 (k, n <= 65535)\n",
                in);
        goto out;
    }
    if (!(dt == ISA_DT_F16 || dt == ISA_DT_BF16 || dt == ISA_DT_F32 || dt == ISA_DT_E4M3 || dt == ISA_DT_E5M2 ||
          dt == ISA_DT_S8)) {
        fprintf(stderr, "npusim sparsify: %s: dtype %s is not a cube input dtype\n", in, isa_dtype_suffix(dt));
        goto out;
    }
    int k = (int)dense.shape[0], n = (int)dense.shape[1];
    int panel = n;
    if (panels) {
        char *e;
        long p = strtol(panels, &e, 0);
        if (e == panels || *e || p < 16 || p % 16 || p > 65535) {
            fprintf(stderr, "npusim sparsify: --panel %s: need a multiple of 16 in 16..65535\n", panels);
            goto out;
        }
        panel = (int)p;
    }
    int64_t vs[2] = {k / 2, n}, ms[1] = {(int64_t)sim_sparse_meta_bytes(k, n)};
    if (npy_alloc(&vals, dt, 2, vs, &d) || npy_alloc(&meta, ISA_DT_U8, 1, ms, &d) ||
        sim_sparsify_24(dt, dense.data, k, n, vals.data, meta.data, &d) || npy_save(vout, &vals, &d)) {
        fprintf(stderr, "npusim sparsify: %s\n", d.msg);
        goto out;
    }
    if (panel < n) {
        npy_tensor pm;
        int64_t ps[1] = {(int64_t)ref_sparse_panel_bytes(k, n, panel)};
        if (npy_alloc(&pm, ISA_DT_U8, 1, ps, &d)) {
            fprintf(stderr, "npusim sparsify: %s\n", d.msg);
            goto out;
        }
        ref_sparse_panels(meta.data, k, n, panel, pm.data);
        npu_status st = npy_save(mout, &pm, &d);
        npy_free(&pm);
        ms[0] = ps[0];
        if (st) {
            fprintf(stderr, "npusim sparsify: %s\n", d.msg);
            goto out;
        }
    } else if (npy_save(mout, &meta, &d)) {
        fprintf(stderr, "npusim sparsify: %s\n", d.msg);
        goto out;
    }
    if (pout) {
        /* Rebuild the pruned dense matrix from values + metadata (the same
         * decoding mmad.sp does), so a golden reference can use it. */
        if (npy_alloc(&pruned, dt, 2, dense.shape, &d)) {
            fprintf(stderr, "npusim sparsify: %s\n", d.msg);
            goto out;
        }
        size_t es = (size_t)isa_dtype_bytes(dt);
        uint64_t n16 = ((uint64_t)n + 15) / 16 * 16;
        const uint8_t *mb = meta.data;
        for (int g = 0; g < k / 4; g++)
            for (int col = 0; col < n; col++) {
                uint64_t q = (uint64_t)g * n16 + (uint64_t)col;
                unsigned nib = (mb[q / 2] >> (4 * (q % 2))) & 15u;
                for (int t = 0; t < 2; t++) {
                    int row = 4 * g + (int)(t ? nib >> 2 : nib & 3);
                    memcpy((uint8_t *)pruned.data + ((size_t)row * (size_t)n + (size_t)col) * es,
                           (const uint8_t *)vals.data + ((size_t)(2 * g + t) * (size_t)n + (size_t)col) * es, es);
                }
            }
        if (npy_save(pout, &pruned, &d)) {
            fprintf(stderr, "npusim sparsify: %s\n", d.msg);
            goto out;
        }
    }
    printf("sparsify: %s (%d x %d %s) -> %s (%d x %d), %s (%lld bytes)\n", in, k, n, isa_dtype_suffix(dt), vout, k / 2,
           n, mout, (long long)ms[0]);
    rc = 0;
out:
    npy_free(&dense);
    npy_free(&vals);
    npy_free(&meta);
    npy_free(&pruned);
    return rc;
}
