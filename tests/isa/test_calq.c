/* test_calq.c — the calendar event queue (isa/npu_calq.h) against a plain
 * reference: after any mix of pushes (inside the window, far ahead, before
 * the window), advances and pops, every pop is the least (time, push
 * order) of what is queued, as one heap would give. */
#include <check.h>
#include <stdint.h>

#include "isa/npu_calq.h"

#define NREF 4096

typedef struct { uint64_t t, seq; int live; } ref_ev;

START_TEST(calq_matches_heap_order)
{
    static ref_ev ref[NREF];
    npu_calq q;
    npu_calq_init(&q);
    npu_rng seed = { 12345 };
    uint64_t now = 0, seq = 0;
    size_t nref = 0, live = 0, pops = 0;
    for (int step = 0; step < 200000; step++) {
        uint64_t r = npu_rng_next(&seed) % 100;
        if ((r < 55 || live == 0) && nref < NREF) {
            /* mostly near the last event taken, some beyond the window, a
             * few before it */
            uint64_t k = npu_rng_next(&seed) % 100, t;
            if (k < 80) t = now + npu_rng_next(&seed) % 1500;
            else if (k < 95) t = now + 1000 + npu_rng_next(&seed) % 100000;
            else t = now > 50 ? now - npu_rng_next(&seed) % 50 : now;
            ck_assert_int_eq(npu_calq_push(&q, t, seq, ~seq), 0);
            ref[nref++] = (ref_ev){ t, seq++, 1 };
            live++;
        } else if (r < 60) {
            /* the caller's promise: nothing earlier than t from now on */
            uint64_t nx = npu_calq_next(&q);
            if (nx != NPU_CALQ_NONE && nx > now) {
                uint64_t t = now + npu_rng_next(&seed) % (nx - now + 1);
                npu_calq_advance(&q, t);
                now = t;
            }
        } else {
            size_t best = NREF;
            for (size_t i = 0; i < nref; i++)
                if (ref[i].live && (best == NREF || ref[i].t < ref[best].t ||
                                    (ref[i].t == ref[best].t && ref[i].seq < ref[best].seq)))
                    best = i;
            ck_assert_uint_eq(npu_calq_next(&q), ref[best].t);
            npu_cev e;
            ck_assert_int_eq(npu_calq_pop(&q, &e), 1);
            ck_assert_uint_eq(e.t, ref[best].t);
            ck_assert_uint_eq(e.a, ref[best].seq);
            ck_assert_uint_eq(e.b, ~ref[best].seq);
            ref[best].live = 0;
            live--;
            pops++;
            if (e.t > now) now = e.t;
            if (live == 0) nref = 0;   /* reuse the reference array */
        }
        ck_assert_uint_eq(npu_calq_size(&q), live);
    }
    ck_assert_uint_gt(pops, 10000);
    npu_cev e;
    while (live) {
        ck_assert_int_eq(npu_calq_pop(&q, &e), 1);
        live--;
    }
    ck_assert_int_eq(npu_calq_pop(&q, &e), 0);
    ck_assert_uint_eq(npu_calq_next(&q), NPU_CALQ_NONE);
    npu_calq_free(&q);
}
END_TEST

Suite *isa_calq_suite(void)
{
    Suite *s = suite_create("isa-calq");
    TCase *t = tcase_create("order");
    tcase_add_test(t, calq_matches_heap_order);
    suite_add_tcase(s, t);
    return s;
}
