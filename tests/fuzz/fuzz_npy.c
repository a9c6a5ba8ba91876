/* fuzz_npy — the .npy reader (npy_load_mem) on arbitrary bytes; what loads
 * is encoded again and must load back with the same dtype, shape and data.
 * Seeds: .npy files made by `npusim ref` at fuzz time. */
#include <string.h>

#include "fuzz_common.h"
#include "frontend/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npu_diag d = { 0 };
    npy_tensor t;
    if (npy_load_mem(data, size, "fuzz.npy", &t, &d) != NPU_OK)
        return 0;
    (void)npy_numel(&t);
    npu_buf b = { 0 };
    if (npy_encode(&t, NPY_DESCR_MLDTYPES, &b, &d) == NPU_OK) {
        npy_tensor u;
        if (npy_load_mem(b.data, b.len, "again.npy", &u, &d) != NPU_OK)
            abort();  /* what the writer writes, the reader reads */
        if (u.dtype != t.dtype || u.ndim != t.ndim || u.nbytes != t.nbytes ||
            memcmp(u.shape, t.shape, sizeof t.shape[0] * (size_t)t.ndim) != 0 ||
            (t.nbytes && memcmp(u.data, t.data, t.nbytes) != 0))
            abort();
        npy_free(&u);
    }
    npu_buf_free(&b);
    npy_free(&t);
    return 0;
}
