/* sparse.h — 2:4 structured sparsity for mmad.sp: compressing a dense B
 * (k x n) into the kept values and the metadata the cube reads.
 *
 * In every group of 4 consecutive k (rows 4g..4g+3 of one column) 2 values
 * are kept. values is the compressed B, (k/2) x n row-major, same dtype:
 * row 2g holds the first kept value of group g, row 2g+1 the second (in
 * increasing k). meta holds one 4-bit nibble per (group, column): nibble
 * q = g * ceil16(n) + col lives in byte q/2 (low nibble for even q); bits
 * 1:0 are the position (0..3) in the group of the first kept value, bits
 * 3:2 that of the second (always first < second). Columns are padded to a
 * multiple of 16 with zero nibbles, so meta can be copied as is into L0B
 * for an n-column mmad.sp (docs/cube.md). */
#ifndef SIM_SPARSE_H
#define SIM_SPARSE_H

#include <stdint.h>

#include "isa/isa.h"
#include "isa/npu_util.h"

/* Bytes of metadata for a k x n B (k a multiple of 4). */
static inline uint64_t sim_sparse_meta_bytes(int k, int n)
{
    uint64_t n16 = ((uint64_t)n + 15) / 16 * 16;
    return ((uint64_t)(k / 4) * n16 + 1) / 2;
}

/* Compress dense_b (k x n row-major, dtype dt) keeping, in each group of
 * 4, the 2 values of largest magnitude (ties: the lower index; NaN ranks
 * as infinity). k must be a positive multiple of 4, n > 0.
 * values: (k/2) * n elements; meta: sim_sparse_meta_bytes(k, n) bytes. */
npu_status sim_sparsify_24(isa_dtype dt, const void *dense_b, int k, int n, void *values, uint8_t *meta,
                           npu_diag *d);

#endif
