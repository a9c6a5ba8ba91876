/* test_fuzz.c — random legal programs never crash the host: every run ends
 * in a halt, a fault report, a deadlock or the watchdog, with a message.
 * Registers are seeded with values near real buffer and tensor addresses so
 * that many instructions pass their checks and reach deeper code.
 * FUZZ_ROUNDS=N runs N rounds of 40 programs (default 5); FUZZ_VERBOSE=1
 * prints every outcome. 150 rounds under ASan+UBSan: no finding. */
#include "tests/sim/suites.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/elf.h"

static uint64_t pick(npu_rng *r, uint64_t n) { return npu_rng_next(r) % n; }

static int pick_bit(npu_rng *r, uint32_t mask)
{
    int n = __builtin_popcount(mask);
    if (!n)
        return 0;
    int k = (int)pick(r, (uint64_t)n);
    for (int b = 0; b < 32; b++)
        if ((mask >> b) & 1 && k-- == 0)
            return b;
    return 0;
}

/* A random legal instruction word (isa_encode accepts it). */
static uint64_t random_insn(npu_rng *r, size_t idx, size_t n)
{
    static const int sregs[] = {0x000, 0x001, 0x002, 0x003, 0x004, 0x010, 0x020,
                                0x021, 0x022, 0x023, 0x030, 0x031, 0x032, 0x033};
    for (int tries = 0; tries < 200; tries++) {
        isa_insn in;
        memset(&in, 0, sizeof in);
        in.op = (isa_op)(1 + pick(r, ISA_OP_COUNT - 1));
        const isa_info *ii = isa_info_of(in.op);
        if (!ii || in.op == ISA_OP_TRAP)
            continue;
        /* most rows are vector ops: keep 2 in 3 instructions scalar, so
         * programs run long enough to reach loops, calls and barriers */
        if (ii->pipe != ISA_PIPE_S && pick(r, 3) != 0)
            continue;
        uint32_t f = isa_fmt_fields(ii->fmt);
        if (f & (1u << ISA_FLD_RD)) in.rd = (uint8_t)(5 + pick(r, 27));
        if (f & (1u << ISA_FLD_RS1)) in.rs1 = (uint8_t)pick(r, 32);
        if (f & (1u << ISA_FLD_RS2)) in.rs2 = (uint8_t)pick(r, 32);
        if (f & (1u << ISA_FLD_RS3)) in.rs3 = (uint8_t)pick(r, 32);
        if (f & (1u << ISA_FLD_RS4)) in.rs4 = (uint8_t)pick(r, 32);
        if (f & (1u << ISA_FLD_DT)) in.dt = (uint8_t)pick_bit(r, ii->dtypes);
        if (f & (1u << ISA_FLD_DT2)) in.dt2 = (uint8_t)pick_bit(r, ii->dtypes2);
        if (f & (1u << ISA_FLD_MOD)) in.mod = (uint8_t)pick(r, 16);
        if (f & (1u << ISA_FLD_SPIPE)) in.spipe = (uint8_t)pick(r, 7);
        if (f & (1u << ISA_FLD_DPIPE)) in.dpipe = (uint8_t)pick(r, 7);
        if (f & (1u << ISA_FLD_FID)) in.fid = (uint8_t)pick(r, 8);
        if (f & (1u << ISA_FLD_PIPE)) in.pipe = (uint8_t)pick(r, 8);
        if (f & (1u << ISA_FLD_SREG)) in.sreg = (uint16_t)sregs[pick(r, NPU_ARRAY_LEN(sregs))];
        if (ii->flags & (ISA_F_BRANCH | ISA_F_JUMP)) {
            /* mostly forward within the program, sometimes anywhere */
            int64_t tgt = (int64_t)pick(r, n + 2) - (int64_t)idx;
            in.imm = tgt * 8;
        } else if (f & (1u << ISA_FLD_IMM16)) {
            in.imm = (int64_t)pick(r, 65536);
        } else if (ii->flags & ISA_F_SHAMT) {
            in.imm = (int64_t)pick(r, 64);
        } else if (f & ((1u << ISA_FLD_IMM32) | (1u << ISA_FLD_IMM48))) {
            in.imm = (int64_t)pick(r, 4096) - 2048;
        }
        uint64_t w;
        npu_diag d;
        if (isa_encode(&in, &w, &d) == NPU_OK)
            return w;
    }
    return 0x01; /* nop */
}

START_TEST(random_programs_never_crash)
{
    npu_rng r = {0x5eed0001u + (uint64_t)_i};
    npu_diag d;
    int outcomes[NPU__STATUS_COUNT] = {0};
    for (int prog = 0; prog < 40; prog++) {
        const size_t n = 48;
        asm_output o;
        memset(&o, 0, sizeof o);
        o.ntext = n + 40;
        o.text = npu_calloc(o.ntext, sizeof *o.text);
        ck_assert_ptr_nonnull(o.text);
        size_t k = 0;
        /* seed registers x5..x31 with plausible operands: buffer offsets,
         * tensor addresses, packed configs of small sizes */
        for (int reg = 5; reg < 32; reg++) {
            static const int64_t vals[] = {0, 32, 256, 512, 1024, 4096, 0x10001, 0x2000001,
                                           (1 | (64 << 16)), 0x0101010101, -1, 7};
            isa_insn li;
            memset(&li, 0, sizeof li);
            li.op = ISA_OP_LI;
            li.rd = (uint8_t)reg;
            if (pick(&r, 3) == 0) {
                li.op = ISA_OP_ADDI;          /* a tensor address + an offset */
                li.rs1 = (uint8_t)(10 + pick(&r, 3));
                li.imm = (int64_t)pick(&r, 8) * 64;
            } else {
                li.imm = vals[pick(&r, NPU_ARRAY_LEN(vals))];
            }
            ck_assert_int_eq(isa_encode(&li, &o.text[k++], &d), NPU_OK);
        }
        size_t base = k;
        while (k < o.ntext - 1)
            o.text[k] = random_insn(&r, k - base, n), k++;
        o.text[k++] = 0x02; /* halt */
        o.ntext = k;
        npu_buf b = {0};
        ck_assert_int_eq(elf_write_mem(&o, &b, &d), NPU_OK);
        npu_free(o.text);
        npu_sim *s = NULL;
        ck_assert_int_eq(npu_sim_new(&s, NULL, &d), NPU_OK);
        ck_assert_int_eq(npu_sim_load_elf_mem(s, b.data, b.len, "fuzz.elf", &d), NPU_OK);
        npu_buf_free(&b);
        ck_assert_int_eq(npu_sim_set_cores(s, 2, &d), NPU_OK);
        int64_t shape[1] = {4096};
        for (int a = 0; a < 3; a++)
            ck_assert_int_eq(npu_sim_bind_output(s, NULL, ISA_DT_F32, 1, shape, &d), NPU_OK);
        npu_run_opts ro = {NPU_MODE_FUNC, 0, 20000};
        npu_diag_clear(&d);
        npu_status st = npu_sim_run(s, &ro, &d);
        ck_assert(st >= 0 && st < NPU__STATUS_COUNT);
        if (st)
            ck_assert_msg(d.msg[0] != 0, "status %s without a message", npu_status_name(st));
        outcomes[st]++;
        if (getenv("FUZZ_VERBOSE") && st)
            fprintf(stderr, "%s\n", d.msg);
        npu_sim_free(s);
    }
    if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "fuzz %d: ok %d fault %d deadlock %d timeout %d unsupported %d\n", _i,
                outcomes[NPU_OK], outcomes[NPU_EFAULT], outcomes[NPU_EDEADLOCK],
                outcomes[NPU_ETIMEOUT], outcomes[NPU_EUNSUPP]);
    /* the generator must exercise both clean ends and faults */
    ck_assert_int_gt(outcomes[NPU_EFAULT] + outcomes[NPU_EUNSUPP], 0);
}
END_TEST

Suite *fuzz_suite(void)
{
    Suite *s = suite_create("fuzz");
    TCase *tc = tcase_create("fuzz");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, random_programs_never_crash, 0, getenv("FUZZ_ROUNDS") ? atoi(getenv("FUZZ_ROUNDS")) : 5);
    suite_add_tcase(s, tc);
    return s;
}
