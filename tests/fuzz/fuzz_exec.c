/* fuzz_exec — the decoder and executor: an instruction stream built from
 * the input is wrapped in a kernel ELF, loaded through the public API
 * (sim/npusim.h) on the small machine (configs/small.json, else the
 * default with 2 cores) and run in func and perf mode under a small
 * instruction and cycle watchdog.
 *
 * Input layout, 9 bytes per instruction: byte 0 picks the kind, the next 8
 * are the payload. Kind < 224: a random *legal* instruction of row
 * (payload-derived op) with fields drawn by isa_random_insn from the
 * payload as a seed — so most of the stream decodes and reaches the
 * executor's semantics instead of stopping at the first illegal word;
 * otherwise the payload is a raw word (decoder legality checks). A tensor
 * in and a tensor out are bound (a0 = in, a1 = out), so memory
 * instructions have real GM to hit; faults are expected and fine, a crash
 * or a sanitizer report is a finding. */
#include <string.h>

#include "fuzz_common.h"
#include "frontend/asm.h"
#include "frontend/config.h"
#include "frontend/elf.h"
#include "frontend/npy.h"
#include "isa/isa.h"
#include "sim/npusim.h"

#define MAX_WORDS 256

static cfg_machine small_cfg;   /* read-only after init */
static int have_cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc; (void)argv;
    npu_diag d = { 0 };
    const char *root = getenv("NPU_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/configs/small.json", root ? root : ".");
    if (cfg_load_file(&small_cfg, path, &d) != NPU_OK) {
        cfg_default(&small_cfg);
        small_cfg.chip.cores = 2;
    }
    have_cfg = 1;
    return 0;
}

/* One simulator per mode, made once: loading a kernel replaces the last
 * one and drops its arguments, and every run re-initialises the machine
 * (npusim.h), so reuse does not carry state from one input to the next --
 * and it makes a run ~10x cheaper than a fresh npu_sim_new. */
static npu_sim *sims[2];

static void run_mode(const uint8_t *elf, size_t len, int k, npu_mode mode)
{
    npu_diag d = { 0 };
    if (!sims[k] && npu_sim_new(&sims[k], &small_cfg, &d) != NPU_OK)
        return;
    npu_sim *s = sims[k];
    if (npu_sim_load_elf_mem(s, elf, len, "fuzz.elf", &d) != NPU_OK)
        return;
    npy_tensor in;
    int64_t shape[1] = { 256 };
    if (npy_alloc(&in, ISA_DT_F32, 1, shape, &d) != NPU_OK)
        return;
    for (size_t i = 0; i < in.nbytes; i++)
        ((uint8_t *)in.data)[i] = (uint8_t)(i * 37u);
    npu_status st = npu_sim_bind_tensor(s, "x", &in, NPU_IN, &d);
    npy_free(&in);
    if (st != NPU_OK || npu_sim_bind_output(s, "y", ISA_DT_F32, 1, shape, &d) != NPU_OK ||
        npu_sim_bind_int(s, "n", 256, &d) != NPU_OK)
        return;
    npu_run_opts o = { .mode = mode, .max_cycles = 200000, .max_insns = 4096 };
    if (npu_sim_run(s, &o, &d) == NPU_OK) {
        npy_tensor y;
        if (npu_sim_get_output(s, "y", &y, &d) == NPU_OK)
            npy_free(&y);
    }
    (void)npu_sim_cycles(s);
    (void)npu_sim_nfindings(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!have_cfg)
        LLVMFuzzerInitialize(NULL, NULL);
    uint64_t words[MAX_WORDS + 1];
    size_t n = 0;
    for (size_t i = 0; i + 9 <= size && n < MAX_WORDS; i += 9) {
        uint64_t p;
        memcpy(&p, data + i + 1, 8);
        if (data[i] < 224) {
            npu_rng rng = { p };
            isa_op op = (isa_op)(1 + (p >> 40) % (ISA_OP_COUNT - 1));
            isa_insn in;
            npu_diag d = { 0 };
            if (isa_random_insn(op, &rng, &in, &d) != NPU_OK || isa_encode(&in, &p, &d) != NPU_OK)
                continue;
        }
        words[n++] = p;
    }
    /* end with a halt so a stream without a fault finishes */
    isa_insn h = { .op = isa_op_from_mnemonic("halt") };
    npu_diag d = { 0 };
    if (h.op == ISA_OP_INVALID || isa_encode(&h, &words[n], &d) != NPU_OK)
        return 0;
    n++;
    asm_output o;
    memset(&o, 0, sizeof o);
    o.text = words;
    o.ntext = n;
    o.entry = 0;
    npu_buf b = { 0 };
    if (elf_write_mem(&o, &b, &d) == NPU_OK) {
        run_mode(b.data, b.len, 0, NPU_MODE_FUNC);
        run_mode(b.data, b.len, 1, NPU_MODE_PERF);
    }
    npu_buf_free(&b);
    return 0;
}
