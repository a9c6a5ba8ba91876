/* fuzz_view.c — npuview's model and views on hostile traces.
 *
 * A trace's payload is zlib-compressed and CRC-checked, so byte mutations
 * of a trace file seldom get past the reader (npt-fuzz covers the reader).
 * This target builds the trace from the input instead: the bytes choose
 * the core count, the counter interval, counter-unit names (the memory
 * units `npusim record` and `-A` name, odd numbers, arbitrary bytes),
 * counter names, and then events of every kind with their fields and
 * times. The trace is written with the writer, read back, loaded into the
 * viewer's model (tracks, counters, heat maps, HBM lanes, flows), and every
 * tab is drawn into a command list and hit-tested at a grid of points,
 * with the tooltip lines of counter bins and heat map cells — without SDL
 * (the views fall back to fixed text metrics). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "viewer/vw.h"

typedef struct in { const uint8_t *p; size_t n; } in;
static unsigned u8(in *s) { if (!s->n) return 0; s->n--; return *s->p++; }
static unsigned u16(in *s) { unsigned a = u8(s); return a | u8(s) << 8; }
static uint64_t u32(in *s) { uint64_t a = u16(s); return a | (uint64_t)u16(s) << 16; }

static const char *const ctrs[] = { "l2.bytes", "hbm.bytes_read", "hbm.bytes_written", "gm.read_bytes",
                                    "gm.write_bytes", "pipe.m.busy_cycles", "l2.hits", "cycles" };
static const char *const ops[] = { "nop", "mmad", "vadd", "mov.gm2l1" };
static const char *const causes[] = { "flag", "queue_full", "bank", "memory", "barrier" };
static const char *const cmds[] = { "ACT", "PRE", "RD", "WR", "REF" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    in s = { data, size };
    static char path[64];
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/fuzz_view.%d.npt", (int)getpid());
    trc_meta m = { 0 };
    m.config_json = "{}";
    m.clock_ghz = 1.0 + (u8(&s) & 3);
    m.n_cores = 1 + (u8(&s) & 7);
    m.kernel = "k";
    m.level = "instr";
    m.counter_interval = u16(&s);               /* 0: the viewer's default bins */
    m.opcodes = (trc_names){ ops, 4 };
    m.causes = (trc_names){ causes, 5 };
    m.hbm_commands = (trc_names){ cmds, 5 };
    uint32_t nctr = 1 + (u8(&s) & 7);
    m.counters = (trc_names){ ctrs, nctr };
    /* counter units: the cores (unnamed), then names of every sort */
    char text[80][24];
    const char *units[96] = { 0 };
    uint32_t nnamed = u8(&s) % 81, nu = m.n_cores + nnamed;
    for (uint32_t i = 0; i < nnamed; i++) {
        unsigned k = u8(&s), v = u16(&s);
        switch (k & 7) {
        case 0: case 1: snprintf(text[i], sizeof text[i], "L2 slice %u", v % 40); break;
        case 2: case 3: snprintf(text[i], sizeof text[i], "HBM channel %u", v % 40); break;
        case 4: snprintf(text[i], sizeof text[i], "HBM channel %u", v * 997u); break;
        case 5: snprintf(text[i], sizeof text[i], "memory (L2 + HBM)"); break;
        case 6: snprintf(text[i], sizeof text[i], "L2 slice -%u", v); break;
        default:
            for (unsigned j = 0; j < 12; j++)
                text[i][j] = (char)(1 + u8(&s) % 255);
            text[i][12] = 0;
        }
        units[m.n_cores + i] = text[i];
    }
    if (nnamed)
        m.units = (trc_names){ units, nu };
    npu_diag d = { 0 };
    trc_writer *w = trc_writer_open(path, &m, &d);
    if (!w)
        return 0;
    uint64_t t = 0;
    int bad = 0;
    while (s.n && !bad) {
        unsigned k = u8(&s);
        t += u8(&s) & 0x3f;
        uint32_t core = u8(&s) % (m.n_cores + 1), unit = u8(&s) % (nu + 2);
        unsigned pipe = u8(&s) % 8, dur = u16(&s) & 0x3ff;
        trc_event e;
        switch (k % 9) {
        case 0: case 1: e = trc_ev_insn(core, pipe, (uint64_t)(u8(&s) & 31) * 8, u8(&s) % 5, t, t, t + dur, u8(&s) & 1); break;
        case 2: e = trc_ev_stall(core, pipe, u8(&s) % 6, t, t + dur); break;
        case 3: e = trc_ev_counter(unit, u8(&s) % (nctr + 1), t, u32(&s)); break;
        case 4: e = trc_ev_counter(unit, u8(&s) % (nctr + 1), t, t * (u8(&s) + 1)); break;
        case 5: e = trc_ev_hbm(u8(&s) % 40, u8(&s) & 1, u8(&s) % 20, u16(&s), u8(&s) % 6, t); break;
        case 6: e = trc_ev_flag_set(core, pipe, u8(&s) % 8, u8(&s) & 7, t, u16(&s)); break;
        case 7: e = trc_ev_flag_wait(core, u8(&s) % 8, pipe, u8(&s) & 7, t, t + dur, u16(&s)); break;
        default: e = trc_ev_barrier(core, t, t + dur); break;
        }
        bad = trc_write(w, &e) != NPU_OK;
    }
    if (bad) {
        trc_writer_discard(w);
        return 0;
    }
    if (trc_writer_close(w, &d) != NPU_OK)
        return 0;
    vw_model md;
    memset(&md, 0, sizeof md);
    npu_status st = vw_model_load(&md, path, &d);
    /* the exports of the same well-formed trace: their stall owners and
     * call stacks see events that mutated files seldom get through */
    if (st == NPU_OK) {
        FILE *null = fopen("/dev/null", "w");
        if (null) {
            trc_export_opts eo = { .filter = TRC_FILTER_ALL };
            trc_export_chrome(md.r, null, &eo, &d);
            trc_export_folded(md.r, null, (int)(size & 1), &d);
            fclose(null);
        }
    }
    unlink(path);
    if (st != NPU_OK)
        return 0;
    vw_view v;
    if (vw_view_init(&v, &md, 640, 400, 1, &d) == NPU_OK) {
        for (int tab = 0; tab < VW_NTABS; tab++) {
            v.tab = (vw_tab)tab;
            for (int y = 0; y < 400; y += 37)
                for (int x = 0; x < 640; x += 71) {
                    vw_hit h = vw_hit_test(&v, x, y);
                    if (h.kind == 9 || h.kind == 10) {
                        char lines[3][160];
                        vw_bin_lines(&v, &h, lines);
                    }
                }
            v.mx = 320;
            v.my = 150;
            vw_cmds c;
            memset(&c, 0, sizeof c);
            vw_draw(&v, &c);
            vw_cmds_free(&c);
        }
        vw_view_free(&v);
    }
    /* npuview --report and --diff: every grouping, in a format, order, range
     * and core the input picks (every combination over a run of inputs:
     * all of them for each input slowed the target to a third) */
    for (int k = 0; k < VW_HK__N; k++) {
        int f = (int)((size + (size_t)k) % 3), sc = (int)((size / 3 + (size_t)k) % 5);
        vw_report_opts ro = { .key = (vw_hkey)k, .sort_col = sc, .top = (size_t)f * 3, .has_range = f == 1,
                              .r0 = 10, .r1 = 500, .fmt = (vw_rfmt)f, .trace = "fuzz",
                              .core = size % 4 == 0 ? 0 : -1 };
        npu_buf b = { 0 };
        vw_report(&md, &ro, &b, &d);
        npu_buf_free(&b);
        vw_report_diff(&md, &md, &ro, "base", &b, &d);   /* a run against itself */
        npu_buf_free(&b);
    }
    vw_model_free(&md);
    return 0;
}
