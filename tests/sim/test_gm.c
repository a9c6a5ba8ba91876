/* test_gm.c — global memory: sparse pages, allocations, guard-zone faults. */
#include "tests/sim/suites.h"

#include <string.h>

START_TEST(gm_sparse_pages)
{
    sim_gm g;
    npu_diag d;
    sim_gm_init(&g);
    /* a 16 GiB tensor costs nothing until touched */
    uint64_t a;
    ck_assert_int_eq(sim_gm_alloc_new(&g, 16ull << 30, SIM_GM_TENSOR, "big", &a, &d), NPU_OK);
    ck_assert_uint_eq(a, SIM_GM_ALLOC_BASE);
    ck_assert_uint_eq(g.touched, 0);
    uint8_t buf[16];
    memset(buf, 0xee, sizeof buf);
    /* reads of untouched memory are zeros and allocate nothing */
    ck_assert_int_eq(sim_gm_read(&g, a + (8ull << 30), buf, 16, &d), NPU_OK);
    for (int i = 0; i < 16; i++)
        ck_assert_uint_eq(buf[i], 0);
    ck_assert_uint_eq(g.touched, 0);
    /* a write straddling a page boundary touches two pages */
    uint8_t w[32];
    for (int i = 0; i < 32; i++)
        w[i] = (uint8_t)(i + 1);
    uint64_t at = a + (12ull << 30) + SIM_GM_PAGE - 16;
    ck_assert_int_eq(sim_gm_write(&g, at, w, 32, &d), NPU_OK);
    ck_assert_uint_eq(g.touched, 2 * SIM_GM_PAGE);
    uint8_t r[32];
    ck_assert_int_eq(sim_gm_read(&g, at, r, 32, &d), NPU_OK);
    ck_assert_mem_eq(r, w, 32);
    sim_gm_free(&g);
}
END_TEST

START_TEST(gm_guard_messages)
{
    sim_gm g;
    npu_diag d;
    sim_gm_init(&g);
    uint64_t c, e;
    ck_assert_int_eq(sim_gm_alloc_new(&g, 4096, SIM_GM_TENSOR, "C", &c, &d), NPU_OK);
    ck_assert_int_eq(sim_gm_alloc_new(&g, 100, SIM_GM_TENSOR, "E", &e, &d), NPU_OK);
    ck_assert_uint_eq(c, 0x200000000ull);
    /* next allocation after C's end plus the 4 KiB guard, 512-aligned */
    ck_assert_uint_eq(e, 0x200000000ull + 4096 + 4096);
    uint8_t b[64] = {0};
    ck_assert_int_eq(sim_gm_write(&g, c + 4096, b, 64, &d), NPU_EFAULT);
    ck_assert_str_eq(d.msg, "GM write [0x200001000, +64) is 0 bytes past the end of tensor C "
                            "[0x200000000, +4096)");
    ck_assert_int_eq(sim_gm_read(&g, c + 4090, b, 8, &d), NPU_EFAULT);
    ck_assert_str_eq(d.msg, "GM read [0x200000ffa, +8) runs 2 bytes past the end of tensor C "
                            "[0x200000000, +4096)");
    ck_assert_int_eq(sim_gm_read(&g, e - 8, b, 8, &d), NPU_EFAULT);
    ck_assert_str_eq(d.msg, "GM read [0x200001ff8, +8) is 8 bytes before the start of tensor E "
                            "[0x200002000, +100)");
    ck_assert_int_eq(sim_gm_read(&g, 0x1000, b, 8, &d), NPU_EFAULT);
    ck_assert_str_eq(d.msg, "GM read [0x1000, +8) outside any allocation (the nearest is tensor "
                            "C [0x200000000, +4096))");
    ck_assert_int_eq(sim_gm_read(&g, c - 100, b, 8, &d), NPU_EFAULT);
    ck_assert_str_eq(d.msg, "GM read [0x1ffffff9c, +8) is 100 bytes before the start of tensor "
                            "C [0x200000000, +4096)");
    ck_assert_int_eq(sim_gm_write(&g, e + 100 + 8192, b, 8, &d), NPU_EFAULT);
    ck_assert_str_eq(d.msg, "GM write [0x200004064, +8) is 8192 bytes past the end of tensor "
                            "E [0x200002000, +100)");
    /* an overflowing range never wraps into an allocation */
    ck_assert_int_eq(sim_gm_read(&g, c + 8, b, UINT64_MAX - 4, &d), NPU_EFAULT);
    sim_gm_free(&g);
    sim_gm_init(&g);
    ck_assert_int_eq(sim_gm_read(&g, 0x1000, b, 8, &d), NPU_EFAULT);
    ck_assert_str_eq(d.msg, "GM read [0x1000, +8) outside any allocation (GM is empty)");
    sim_gm_free(&g);
}
END_TEST

START_TEST(gm_map_overlap_readonly)
{
    sim_gm g;
    npu_diag d;
    sim_gm_init(&g);
    ck_assert_int_eq(sim_gm_map(&g, 0x100000000ull, 256, SIM_GM_SEG, 1, ".rodata", &d), NPU_OK);
    /* segments may be adjacent (the assembler lays them out) but not overlap */
    ck_assert_int_eq(sim_gm_map(&g, 0x100000000ull + 100, 64, SIM_GM_SEG, 0, ".data", &d),
                     NPU_EINVAL);
    ck_assert_ptr_nonnull(strstr(d.msg, "overlaps segment .rodata"));
    ck_assert_int_eq(sim_gm_map(&g, 0x100000100ull, 64, SIM_GM_SEG, 0, ".data", &d), NPU_OK);
    /* tensors keep a guard zone from everything */
    ck_assert_int_eq(sim_gm_map(&g, 0x100000140ull + 100, 64, SIM_GM_TENSOR, 0, "T", &d),
                     NPU_EINVAL);
    uint32_t v = 0x11223344;
    ck_assert_int_eq(sim_gm_write_init(&g, 0x100000000ull, &v, 4, &d), NPU_OK);
    ck_assert_int_eq(sim_gm_write(&g, 0x100000000ull, &v, 4, &d), NPU_EFAULT);
    ck_assert_str_eq(d.msg, "GM write [0x100000000, +4) into read-only segment .rodata "
                            "[0x100000000, +256)");
    uint32_t r = 0;
    ck_assert_int_eq(sim_gm_read(&g, 0x100000000ull, &r, 4, &d), NPU_OK);
    ck_assert_uint_eq(r, 0x11223344);
    /* drop by kind, then the space is free again */
    sim_gm_drop_kind(&g, SIM_GM_SEG);
    ck_assert_int_eq(sim_gm_read(&g, 0x100000000ull, &r, 4, &d), NPU_EFAULT);
    sim_gm_free(&g);
}
END_TEST

START_TEST(gm_oom_is_clean)
{
    /* every allocation failure is an error, never a crash or a leak */
    for (long n = 1; n < 10; n++) {
        sim_gm g;
        npu_diag d;
        sim_gm_init(&g);
        npu_alloc_fail_after(n);
        uint64_t a;
        npu_status st = sim_gm_alloc_new(&g, 1 << 20, SIM_GM_TENSOR, "T", &a, &d);
        uint8_t b[8] = {1};
        if (!st)
            st = sim_gm_write(&g, a + 100, b, 8, &d);
        npu_alloc_fail_after(0);
        ck_assert(st == NPU_OK || st == NPU_ENOMEM);
        sim_gm_free(&g);
    }
}
END_TEST

Suite *gm_suite(void)
{
    Suite *s = suite_create("gm");
    TCase *tc = tcase_create("gm");
    tcase_add_test(tc, gm_sparse_pages);
    tcase_add_test(tc, gm_guard_messages);
    tcase_add_test(tc, gm_map_overlap_readonly);
    tcase_add_test(tc, gm_oom_is_clean);
    suite_add_tcase(s, tc);
    return s;
}
