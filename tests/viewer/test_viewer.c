/* test_viewer.c — the Check runner of viewer/: model, aggregates, view
 * interaction through synthetic SDL events, and headless pictures read
 * back pixel by pixel. Traces are made at test time with the synthetic
 * generator of traces/. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <SDL.h>
#include <cJSON.h>

#include "viewer/vw.h"

typedef struct fixture {
    char dir[64], path[128];
} fixture;

/* One small trace per process (4 cores, ~20k events): written once. */
static const char *trace_path(fixture *f)
{
    if (f->path[0])
        return f->path;
    snprintf(f->dir, sizeof f->dir, "/tmp/test-viewer.XXXXXX");
    if (!mkdtemp(f->dir))
        return NULL;
    snprintf(f->path, sizeof f->path, "%s/s.npt", f->dir);
    trc_synth_opts o = { .events = 20000, .cores = 4, .seed = 7, .mem = 1 };
    npu_diag d = {0};
    if (trc_synth_write(f->path, &o, &d) != NPU_OK) {
        fprintf(stderr, "synth: %s\n", d.msg);
        return NULL;
    }
    return f->path;
}

/* Tests run in forked children (CK_FORK) or not: either way one fixture per
 * process, kept by main and handed to the tests through this accessor. */
static fixture *fx(void)
{
    static fixture f;   /* test-only: the trace file of this test process */
    return &f;
}

static void load(vw_model *m)
{
    npu_diag d = {0};
    const char *p = trace_path(fx());
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(vw_model_load(m, p, &d) == NPU_OK, "load: %s", d.msg);
}

/* A fresh directory /tmp/test-viewer-TAG.XXXXXX for a test's hand-written
 * trace, and path = that directory / file. */
static void tmp_trace(char dir[64], char path[128], const char *tag, const char *file)
{
    snprintf(dir, 64, "/tmp/test-viewer-%s.XXXXXX", tag);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, 128, "%s/%s", dir, file);
}

/* A hand-written trace of events ev[0..n) under meta, loaded into m (the
 * file is removed again). */
static void load_events(const char *tag, const trc_meta *meta, const trc_event *ev, size_t n, vw_model *m)
{
    char dir[64], path[128];
    tmp_trace(dir, path, tag, "t.npt");
    npu_diag d = {0};
    trc_writer *w = trc_writer_open(path, meta, &d);
    ck_assert_msg(w != NULL, "%s", d.msg);
    for (size_t i = 0; i < n; i++)
        ck_assert_int_eq(trc_write(w, &ev[i]), NPU_OK);
    ck_assert_msg(trc_writer_close(w, &d) == NPU_OK, "%s", d.msg);
    ck_assert_msg(vw_model_load(m, path, &d) == NPU_OK, "load: %s", d.msg);
    unlink(path);
    rmdir(dir);
}

/* The header of the hand-written traces: two cores, instruction level;
 * each test adds its name tables. */
static trc_meta two_core_meta(void)
{
    trc_meta meta = {0};
    meta.config_json = "{}";
    meta.clock_ghz = 1.0;
    meta.n_cores = 2;
    meta.kernel = "k";
    meta.level = "instr";
    return meta;
}

/* two_core_meta with counters samples every 100 cycles and one opcode */
static trc_meta counter_meta(const char *const *ctrs, uint32_t n)
{
    static const char *const ops[] = { "nop" };
    trc_meta meta = two_core_meta();
    meta.counter_interval = 100;
    meta.opcodes = (trc_names){ ops, 1 };
    meta.counters = (trc_names){ ctrs, n };
    return meta;
}

/* ---- model --------------------------------------------------------------- */
START_TEST(t_model_counts)
{
    vw_model m;
    load(&m);
    /* every INSN of the file is a box, sorted by start in its track */
    npu_diag d = {0};
    trc_reader *r = trc_open(fx()->path, &d);
    ck_assert_ptr_nonnull(r);
    trc_filter f = TRC_FILTER_ALL;
    f.kind_mask = 1u << TRC_INSN;
    trc_iter *it = trc_iter_new(r, &f, &d);
    trc_event e;
    uint64_t n = 0, busy = 0, mmad = 0;
    while (trc_iter_next(it, &e)) {
        n++;
        busy += e.t1 - e.t0;
        mmad += strcmp(trc_name(r, &trc_reader_meta(r)->opcodes, e.id), "mmad") == 0;
    }
    trc_iter_free(it);
    trc_close(r);
    ck_assert_uint_eq(m.n_insn, n);
    ck_assert_uint_gt(n, 1000);
    uint64_t tot = 0, tm = 0;
    for (uint32_t c = 0; c < m.ncores; c++)
        for (unsigned p = 0; p < TRC_NPIPES; p++) {
            const vw_track *t = vw_track_at(&m, c, p);
            for (size_t i = 1; i < t->n; i++)
                ck_assert_uint_le(t->box[i - 1].t0, t->box[i].t0);
            tot += t->cum[t->n];
            for (size_t i = 0; i < t->n; i++)
                tm += strcmp(vw_op_name(&m, t->box[i].op), "mmad") == 0;
        }
    ck_assert_uint_eq(tot, busy);
    ck_assert_uint_eq(tm, mmad);
    ck_assert_uint_gt(m.n_stall, 0);
    ck_assert_uint_gt(m.nflows, 0);
    ck_assert_uint_gt(m.nhbm, 0);   /* mem level: HBM lanes */
    /* the roofline's HBM bytes: every RD/WR tick of the lanes, counted by range */
    {
        const trc_names *hn = &m.meta->hbm_commands;
        size_t want = 0, in = 0;
        uint64_t a = (m.t_min + m.t_end) / 3, z = a + 5000;
        for (uint32_t l = 0; l < m.nhbm; l++)
            for (size_t i = 0; i < m.hbm[l].n; i++) {
                const char *nm = m.hbm[l].v[i].cmd < hn->count ? hn->names[m.hbm[l].v[i].cmd] : NULL;
                int col = nm && (!strncmp(nm, "RD", 2) || !strncmp(nm, "WR", 2));
                want += col;
                in += col && m.hbm[l].v[i].t >= a && m.hbm[l].v[i].t < z;
            }
        ck_assert_uint_gt(want, 0);
        ck_assert_uint_eq(vw_hbm_col_count(&m, 0, UINT64_MAX), want);
        ck_assert_uint_eq(vw_hbm_col_count(&m, a, z), in);
        ck_assert_uint_eq(vw_hbm_col_count(&m, z, a), 0);
    }
    ck_assert(m.peak_ops_per_cycle > 0 && m.peak_bytes_per_cycle > 0);
    vw_model_free(&m);
}
END_TEST

/* The roofline's roofs come from the trace's embedded config: the HBM's
 * pins x data rate (the fixed port's bytes a cycle under memory_model
 * fixed), the L2's slices x bytes a slice when enabled, the atom of an
 * HBM column command. */
static void roofs_of(const char *config, vw_model *m)
{
    static const char *const ops[] = { "nop" };
    trc_meta meta = two_core_meta();
    meta.config_json = config;
    meta.opcodes = (trc_names){ ops, 1 };
    trc_event e = trc_ev_insn(0, 0, 0, 0, 0, 0, 100, 0);
    load_events("roofs", &meta, &e, 1, m);
}

START_TEST(t_model_roofs)
{
    vw_model m;
    /* (hand-written machine configs: version 1, the meta's 1 GHz clock) */
    roofs_of("{\"version\": 1, \"chip\": {\"clock_ghz\": 1.0}, \"cube\": {\"f16\": {\"m\": 16, \"k\": 16, \"n\": 16, \"cycles_per_fractal\": 2}},"
             " \"timing\": {\"memory_model\": \"hbm\"},"
             " \"memory\": {\"hbm\": {\"stacks\": 1, \"channels\": 2, \"pseudo_channels\": 2, \"width_bits\": 64,"
             " \"burst_length\": 4, \"data_rate_mbps\": 2000}, \"l2\": {\"enabled\": true, \"slices\": 4,"
             " \"slice_bytes_per_cycle\": 16}}}", &m);
    ck_assert_double_eq_tol(m.peak_ops_per_cycle, 2 * 2048.0 * 2, 1e-9);   /* 2 cores */
    ck_assert_double_eq_tol(m.peak_bytes_per_cycle, 64.0, 1e-9);            /* 64 GB/s at 1 GHz */
    ck_assert_double_eq_tol(m.l2_bytes_per_cycle, 64.0, 1e-9);
    ck_assert_double_eq_tol(m.hbm_atom_bytes, 32.0, 1e-9);
    ck_assert_int_eq(m.fixed_port, 0);
    vw_model_free(&m);
    /* the fixed port: its own roof, no L2 in front of it */
    roofs_of("{\"version\": 1, \"chip\": {\"clock_ghz\": 1.0}, \"timing\": {\"memory_model\": \"fixed\", \"gm_fixed_bytes_per_cycle\": 100},"
             " \"memory\": {\"l2\": {\"enabled\": true, \"slices\": 4, \"slice_bytes_per_cycle\": 16}}}", &m);
    ck_assert_double_eq_tol(m.peak_bytes_per_cycle, 100.0, 1e-9);
    ck_assert_double_eq_tol(m.l2_bytes_per_cycle, 0.0, 1e-9);
    ck_assert_int_eq(m.fixed_port, 1);
    vw_model_free(&m);
    /* the L2 disabled, or a config that does not say (no machine config):
     * no L2 roof */
    roofs_of("{\"version\": 1, \"memory\": {\"l2\": {\"enabled\": false, \"slices\": 4}}}", &m);
    ck_assert_double_eq_tol(m.l2_bytes_per_cycle, 0.0, 1e-9);
    vw_model_free(&m);
    roofs_of("{}", &m);
    ck_assert_double_eq_tol(m.l2_bytes_per_cycle, 0.0, 1e-9);
    ck_assert(m.peak_bytes_per_cycle > 0);
    vw_model_free(&m);
}
END_TEST

/* The label table: instructions of a function before its first label get
 * a row of their own, named for the function, not "(no symbol)". */
START_TEST(t_hotspots_before_label)
{
    static const char *const ops[] = { "nop" };
    static const trc_symbol syms[] = { { "main", 0x100, 0x100, 1 }, { ".Lloop", 0x140, 0, 0 } };
    trc_meta meta = two_core_meta();
    meta.opcodes = (trc_names){ ops, 1 };
    meta.symbols = syms;
    meta.n_symbols = 2;
    const trc_event ev[3] = {
        trc_ev_insn(0, 0, 0x100, 0, 0, 0, 10, 0), trc_ev_insn(0, 0, 0x140, 0, 10, 10, 40, 0),
        trc_ev_insn(0, 0, 0x400, 0, 40, 40, 45, 0),   /* outside every symbol */
    };
    vw_model m;
    load_events("lbl", &meta, ev, 3, &m);
    npu_diag d = {0};
    vw_table t = {0};
    ck_assert(vw_hotspots(&m, VW_HK_LABEL, 0, 0, &t, &d) == NPU_OK);
    ck_assert_uint_eq(t.n, 3);
    vw_table_sort(&t, 2);   /* by busy cycles */
    ck_assert_str_eq(t.row[0].name, ".Lloop");
    ck_assert_uint_eq(t.row[0].busy, 30);
    ck_assert_str_eq(t.row[1].name, "main (before its first label)");
    ck_assert_uint_eq(t.row[1].busy, 10);
    ck_assert_str_eq(t.row[2].name, "(no symbol)");
    ck_assert_uint_eq(t.row[2].busy, 5);
    vw_table_free(&t);
    vw_model_free(&m);
}
END_TEST

/* A stall belongs to the instruction that waited (viewer/model.c,
 * stall_owners): on S the dispatch after a full queue, not the branch
 * before it; on MTE1 the wait_flag after a set_flag of the same cycle; on
 * MTE2 the data move whose box holds a memory stall. */
START_TEST(t_stall_owner)
{
    static const char *const ops[] = { "bne", "mov", "set_flag", "wait_flag" };
    static const char *const causes[] = { "flag", "queue_full", "memory" };
    static const trc_symbol syms[] = { { "main", 0x100, 0x400, 1 }, { ".La", 0x180, 0, 0 },
                                       { ".Lb", 0x300, 0, 0 }, { ".Lc", 0x400, 0, 0 } };
    trc_meta meta = two_core_meta();
    meta.opcodes = (trc_names){ ops, 4 };
    meta.causes = (trc_names){ causes, 3 };
    meta.symbols = syms;
    meta.n_symbols = 4;
    const trc_event ev[] = {
        trc_ev_insn(0, TRC_PIPE_MTE2, 0x400, 1, 0, 0, 100, 0),   /* a move 0..100 ... */
        trc_ev_insn(0, TRC_PIPE_S, 0x180, 0, 0, 0, 3, 0),        /* bne */
        trc_ev_stall(0, TRC_PIPE_S, 1, 3, 10),                    /* queue full: 7 */
        trc_ev_insn(0, TRC_PIPE_S, 0x200, 1, 10, 10, 11, 1),     /* the dispatch that waited */
        trc_ev_insn(0, TRC_PIPE_MTE1, 0x2f8, 2, 20, 20, 20, 0),  /* set_flag, no time */
        trc_ev_stall(0, TRC_PIPE_MTE1, 0, 20, 50),                /* flag: 30 */
        trc_ev_insn(0, TRC_PIPE_MTE1, 0x300, 3, 50, 50, 50, 0),  /* the wait_flag */
        trc_ev_stall(0, TRC_PIPE_MTE2, 2, 60, 100),               /* ... waiting for GM: 40 */
        trc_ev_stall(0, TRC_PIPE_MTE1, 0, 60, 65),                /* nothing after: the lane's last, 5 */
    };
    vw_model m;
    load_events("owner", &meta, ev, NPU_ARRAY_LEN(ev), &m);
    npu_diag d = {0};
    vw_table t = {0};
    ck_assert(vw_hotspots(&m, VW_HK_PC, 0, 0, &t, &d) == NPU_OK);
    uint64_t want[][2] = { { 0x180, 0 }, { 0x200, 7 }, { 0x2f8, 0 }, { 0x300, 35 }, { 0x400, 40 } };
    ck_assert_uint_eq(t.n, NPU_ARRAY_LEN(want));
    for (size_t i = 0; i < NPU_ARRAY_LEN(want); i++) {
        const vw_hrow *r = NULL;
        for (size_t k = 0; k < t.n; k++)
            if (t.row[k].key == want[i][0])
                r = &t.row[k];
        ck_assert_msg(r != NULL, "no row for 0x%llx", (unsigned long long)want[i][0]);
        ck_assert_msg(r->stall == want[i][1], "0x%llx: stall %llu, want %llu", (unsigned long long)want[i][0],
                      (unsigned long long)r->stall, (unsigned long long)want[i][1]);
    }
    vw_table_free(&t);
    /* by label: the stalls follow their instructions' labels */
    ck_assert(vw_hotspots(&m, VW_HK_LABEL, 0, 0, &t, &d) == NPU_OK);
    for (size_t k = 0; k < t.n; k++) {
        const char *n = t.row[k].name;
        uint64_t w = !strcmp(n, ".La") ? 7 : !strcmp(n, ".Lb") ? 35 : !strcmp(n, ".Lc") ? 40 : 0;
        ck_assert_msg(t.row[k].stall == w, "%s: stall %llu", n, (unsigned long long)t.row[k].stall);
    }
    vw_table_free(&t);
    vw_model_free(&m);
}
END_TEST

/* npuview --report (viewer/report.c): the hotspot table as text, CSV and
 * JSON. The rows are vw_hotspots' (sorted, cut by --top); a name longer
 * than the tab's 63 bytes is printed whole; a pc row keeps its
 * instruction's pipe when a stall on another pipe is attributed to it. */
START_TEST(t_report)
{
    static const char *const ops[] = { "nop", "vadd" };
    static const char *const causes[] = { "memory" };
    static const char *const longname = ".Lan_inner_loop_label_whose_name_is_longer_than_the_hotspot_tab_keeps";
    static const trc_symbol syms[] = { { "main", 0x100, 0x100, 1 }, { ".Lloop", 0x140, 0, 0 },
                                       { longname, 0x180, 0, 0 } };
    trc_meta meta = two_core_meta();
    meta.opcodes = (trc_names){ ops, 2 };
    meta.causes = (trc_names){ causes, 1 };
    meta.symbols = syms;
    meta.n_symbols = 3;
    char dir[64], path[128];
    tmp_trace(dir, path, "report", "r.npt");
    npu_diag d = {0};
    trc_writer *w = trc_writer_open(path, &meta, &d);
    ck_assert_msg(w != NULL, "%s", d.msg);
    const trc_event ev[] = {
        trc_ev_insn(0, TRC_PIPE_S, 0x100, 0, 0, 0, 4, 0),        /* main: 4 */
        trc_ev_insn(0, TRC_PIPE_S, 0x140, 1, 4, 4, 5, 0),        /* vadd issues on S ... */
        trc_ev_insn(0, TRC_PIPE_V, 0x140, 1, 5, 5, 25, 0),       /* ... and runs on V: 20 */
        trc_ev_stall(0, TRC_PIPE_S, 0, 25, 40),                   /* S waits, pc 0x140: 15 */
        trc_ev_insn(1, TRC_PIPE_S, 0x180, 0, 0, 0, 75, 0),       /* the long label: 75 */
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(ev); i++)
        ck_assert_int_eq(trc_write(w, &ev[i]), NPU_OK);
    ck_assert_int_eq(trc_writer_add_disasm(w, 0x140, "vadd v0, v1, v2, 8"), NPU_OK);
    ck_assert_msg(trc_writer_close(w, &d) == NPU_OK, "%s", d.msg);
    vw_model m;
    ck_assert_msg(vw_model_load(&m, path, &d) == NPU_OK, "load: %s", d.msg);

    /* text, by label, busy first */
    vw_report_opts o = { .key = VW_HK_LABEL, .sort_col = 2, .fmt = VW_RF_TEXT, .trace = "r.npt", .core = -1 };
    npu_buf b = {0};
    ck_assert_msg(vw_report(&m, &o, &b, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(npu_buf_append(&b, "", 1), 0);
    const char *txt = (const char *)b.data;
    ck_assert_msg(strstr(txt, "# npuview report of r.npt: k on 2 cores, cycles 0 to 75 (the whole run)\n") != NULL, "%s", txt);
    ck_assert_msg(strstr(txt, "# busy 100 cycles in 3 instructions; stall 15 cycles\n") != NULL, "%s", txt);
    ck_assert_msg(strstr(txt, "# stall by cause: memory 100.0 %\n") != NULL, "%s", txt);
    const char *r1 = strstr(txt, "    75.00     0.00            75             0           1                   "
                                 ".Lan_inner_loop_label_whose_name_is_longer_than_the_hotspot_tab_keeps\n");
    /* vadd once (its S slot is busy only); its stall's cause */
    const char *r2 = strstr(txt, "    21.00   100.00            21            15           1  memory 100%      .Lloop\n");
    const char *r3 = strstr(txt, "     4.00     0.00             4             0           1                   "
                                 "main (before its first label)\n");
    ck_assert_msg(r1 && r2 && r3 && r1 < r2 && r2 < r3, "%s", txt);
    npu_buf_free(&b);

    /* CSV by pc, stall first, the first two rows: the pc row is V's */
    o = (vw_report_opts){ .key = VW_HK_PC, .sort_col = 3, .top = 2, .fmt = VW_RF_CSV, .trace = "r.npt", .core = -1 };
    ck_assert_msg(vw_report(&m, &o, &b, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(npu_buf_append(&b, "", 1), 0);
    ck_assert_str_eq((const char *)b.data,
                     "pc,name,pipe,count,busy,stall,busy_pct,stall_pct,stalled_on\n"
                     "0x140,\"vadd v0, v1, v2, 8\",V,1,21,15,21.0000,100.0000,memory 100%\n"
                     "0x100,nop,S,1,4,0,4.0000,0.0000,\n");   /* ties: lower pc first */
    npu_buf_free(&b);

    /* JSON by opcode over [0, 10): every box overlapping it counts */
    o = (vw_report_opts){ .key = VW_HK_OPCODE, .sort_col = 2, .has_range = 1, .r1 = 10, .fmt = VW_RF_JSON, .trace = "r.npt", .core = -1 };
    ck_assert_msg(vw_report(&m, &o, &b, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(npu_buf_append(&b, "", 1), 0);
    cJSON *j = cJSON_Parse((const char *)b.data);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(cJSON_GetObjectItem(j, "group")->valuestring, "opcodes");
    ck_assert_int_eq(cJSON_GetObjectItem(j, "from")->valueint, 0);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "to")->valueint, 10);
    const cJSON *rows = cJSON_GetObjectItem(j, "rows");
    uint64_t busy = 0;
    const cJSON *x;
    cJSON_ArrayForEach(x, rows)
        busy += (uint64_t)cJSON_GetObjectItem(x, "busy")->valuedouble;
    ck_assert_uint_eq(busy, (uint64_t)cJSON_GetObjectItem(j, "total_busy")->valuedouble);
    ck_assert_uint_eq(busy, 4 + 1 + 5 + 10);    /* main, vadd's issue, 5 of its 20 on V, 10 of 75 */
    cJSON_Delete(j);
    npu_buf_free(&b);

    /* program order (--sort addr): a function's own row before its labels;
     * one core (--core 1): only its instruction */
    o = (vw_report_opts){ .key = VW_HK_LABEL, .sort_col = 4, .fmt = VW_RF_CSV, .core = -1 };
    ck_assert_msg(vw_report(&m, &o, &b, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(npu_buf_append(&b, "", 1), 0);
    const char *a0 = strstr((const char *)b.data, "0x100,main (before its first label)");
    const char *a1 = strstr((const char *)b.data, "0x140,.Lloop");
    const char *a2 = strstr((const char *)b.data, "0x180,.Lan_inner");
    ck_assert_msg(a0 && a1 && a2 && a0 < a1 && a1 < a2, "%s", (const char *)b.data);
    npu_buf_free(&b);
    o = (vw_report_opts){ .key = VW_HK_PC, .sort_col = 4, .fmt = VW_RF_TEXT, .core = 1 };
    ck_assert_msg(vw_report(&m, &o, &b, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(npu_buf_append(&b, "", 1), 0);
    txt = (const char *)b.data;
    ck_assert_msg(strstr(txt, "# core 1 only (--core)\n") && strstr(txt, "# busy 75 cycles in 1 instructions; stall 0 cycles\n") &&
                  strstr(txt, "\n# .Lan_inner_loop_label_whose_name_is_longer_than_the_hotspot_tab_keeps:\n") &&
                  !strstr(txt, "0x00140"), "%s", txt);
    npu_buf_free(&b);
    o.core = 2;
    ck_assert_int_eq(vw_report(&m, &o, &b, &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "npuview: --core 2: the trace has 2 cores (0..1)");
    npu_buf_free(&b);

    /* a range with no instruction */
    o = (vw_report_opts){ .key = VW_HK_FUNC, .sort_col = 2, .has_range = 1, .r0 = 1000, .r1 = 2000, .fmt = VW_RF_TEXT, .core = -1 };
    ck_assert_msg(vw_report(&m, &o, &b, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(npu_buf_append(&b, "", 1), 0);
    ck_assert_ptr_nonnull(strstr((const char *)b.data, "# no instruction ran in this range\n"));
    npu_buf_free(&b);
    vw_model_free(&m);
    unlink(path);
    rmdir(dir);
}
END_TEST

/* npuview --report --diff (vw_report_diff): rows of both runs matched by
 * name (or pc), base and new cycles, "new" and "gone" for a row of one run */
START_TEST(t_report_diff)
{
    static const char *const ops[] = { "nop", "vadd" };
    static const trc_symbol sa[] = { { "main", 0x100, 0x100, 1 }, { ".La", 0x140, 0, 0 }, { ".Lold", 0x180, 0, 0 } };
    static const trc_symbol sb[] = { { "main", 0x100, 0x100, 1 }, { ".La", 0x150, 0, 0 }, { ".Lnew", 0x190, 0, 0 } };
    trc_meta ma = two_core_meta(), mb = two_core_meta();
    ma.opcodes = mb.opcodes = (trc_names){ ops, 2 };
    ma.symbols = sa;
    ma.n_symbols = 3;
    mb.symbols = sb;
    mb.n_symbols = 3;
    const trc_event ea[] = { trc_ev_insn(0, TRC_PIPE_S, 0x140, 0, 0, 0, 40, 0),
                             trc_ev_insn(0, TRC_PIPE_S, 0x180, 0, 40, 40, 50, 0) };
    const trc_event eb[] = { trc_ev_insn(0, TRC_PIPE_S, 0x150, 0, 0, 0, 30, 0),
                             trc_ev_insn(1, TRC_PIPE_S, 0x190, 1, 0, 0, 5, 0) };
    vw_model a, b;
    load_events("diffa", &ma, ea, 2, &a);
    load_events("diffb", &mb, eb, 2, &b);
    npu_diag d = {0};
    npu_buf out = {0};
    vw_report_opts o = { .key = VW_HK_LABEL, .sort_col = 2, .fmt = VW_RF_CSV, .trace = "b.npt", .core = -1 };
    ck_assert_msg(vw_report_diff(&a, &b, &o, "a.npt", &out, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(npu_buf_append(&out, "", 1), 0);
    /* .La moved (0x140 -> 0x150): matched by name; .Lold gone, .Lnew new */
    ck_assert_str_eq((const char *)out.data, "key,name,base_count,base_busy,base_stall,new_count,new_busy,new_stall\n"
                                             ",.La,1,40,0,1,30,0\n"
                                             ",.Lold,1,10,0,0,0,0\n"
                                             ",.Lnew,0,0,0,1,5,0\n");
    npu_buf_free(&out);
    o.fmt = VW_RF_TEXT;
    ck_assert_msg(vw_report_diff(&a, &b, &o, "a.npt", &out, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(npu_buf_append(&out, "", 1), 0);
    const char *t = (const char *)out.data;
    ck_assert_msg(strstr(t, "# cycles 50 -> 30 (-40.0 %); busy 50 -> 35 (-30.0 %); stall 0 -> 0 ()\n") &&
                  strstr(t, "            40           30   -25.0 %") && strstr(t, "gone") && strstr(t, "new  "), "%s", t);
    npu_buf_free(&out);
    /* by pc: 0x140 and 0x150 are different rows */
    o = (vw_report_opts){ .key = VW_HK_PC, .sort_col = 4, .fmt = VW_RF_JSON, .core = -1 };
    ck_assert_msg(vw_report_diff(&a, &b, &o, "a.npt", &out, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(npu_buf_append(&out, "", 1), 0);
    cJSON *j = cJSON_Parse((const char *)out.data);
    ck_assert_ptr_nonnull(j);
    ck_assert_int_eq(cJSON_GetObjectItem(j, "rows_total")->valueint, 4);
    const cJSON *r0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "rows"), 0);
    ck_assert_int_eq(cJSON_GetObjectItem(r0, "pc")->valueint, 0x140);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(r0, "new")));
    ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(r0, "base"), "busy")->valueint, 40);
    cJSON_Delete(j);
    npu_buf_free(&out);
    /* a core one of the runs does not have */
    o.core = 2;
    ck_assert_int_eq(vw_report_diff(&a, &b, &o, "a.npt", &out, &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "npuview: --core 2: a.npt has 2 cores (0..1)");
    npu_buf_free(&out);
    vw_model_free(&a);
    vw_model_free(&b);
}
END_TEST

/* Counter samples are cumulative (docs/traces.md): the totals are each
 * unit's last sample summed over units, the bins the deltas (the first
 * interval counted from 0 at cycle 0), the rates deltas per cycle (a
 * partial last bin over the cycles it covers). */
START_TEST(t_counters_cumulative)
{
    static const char *const ctrs[] = { "gm.write_bytes", "pipe.m.busy_cycles" };
    trc_meta meta = counter_meta(ctrs, 2);
    trc_event ev[11];
    size_t n = 0;
    /* one instruction per core so the run spans cycles 0..250 */
    for (uint32_t c = 0; c < 2; c++)
        ev[n++] = trc_ev_insn(c, 0, 0, 0, 0, 0, 250, 0);
    /* gm.write_bytes: core 0 at 300, 500, 800; core 1 at 50, 50, 150 */
    static const uint64_t t[3] = { 100, 200, 250 }, v0[3] = { 300, 500, 800 }, v1[3] = { 50, 50, 150 };
    for (int i = 0; i < 3; i++) {
        ev[n++] = trc_ev_counter(0, 0, t[i], v0[i]);
        ev[n++] = trc_ev_counter(1, 0, t[i], v1[i]);
        ev[n++] = trc_ev_counter(0, 1, t[i], 40 * (uint64_t)(i + 1));
    }
    vw_model m;
    load_events("ctr", &meta, ev, n, &m);
    ck_assert_uint_eq(m.nctr, 2);
    const vw_counter *k = &m.ctr[0];
    ck_assert_uint_eq(k->total, 800 + 150);          /* not the sum of the samples (1850) */
    ck_assert_uint_eq(m.ctr[1].total, 120);
    ck_assert_uint_ge(k->nbins, 3);
    ck_assert_double_eq_tol(k->bin[0], 300 + 50, 1e-9);   /* the first interval counts */
    ck_assert_double_eq_tol(k->bin[1], 200 + 0, 1e-9);
    ck_assert_double_eq_tol(k->bin[2], 300 + 100, 1e-9);
    double sum = 0;
    for (size_t i = 0; i < k->nbins; i++)
        sum += k->bin[i];
    ck_assert_double_eq_tol(sum, (double)k->total, 1e-9);
    ck_assert_uint_eq(m.t_end, 250);
    ck_assert_double_eq_tol(vw_counter_rate(&m, k, 0), 3.5, 1e-9);
    ck_assert_double_eq_tol(vw_counter_rate(&m, k, 1), 2.0, 1e-9);
    ck_assert_double_eq_tol(vw_counter_rate(&m, k, 2), 8.0, 1e-9);   /* 400 over cycles 200..250 */
    ck_assert_double_eq_tol(k->max_rate, 8.0, 1e-9);
    vw_model_free(&m);
}
END_TEST

/* The roofline's HBM bytes below level full (no HBM commands): the
 * hbm.bytes_* counters of the memory unit (npusim record, docs/traces.md),
 * summed, by range through their bins; none: -1. */
START_TEST(t_hbm_bytes_from_counters)
{
    static const char *const ctrs[] = { "gm.read_bytes", "hbm.bytes_read", "hbm.bytes_written" };
    static const char *units[3] = { NULL, NULL, "memory (L2 + HBM)" };
    trc_meta meta = counter_meta(ctrs, 3);
    meta.units = (trc_names){ units, 3 };
    trc_event ev[8];
    size_t n = 0;
    for (uint32_t c = 0; c < 2; c++)
        ev[n++] = trc_ev_insn(c, 0, 0, 0, 0, 0, 300, 0);
    ev[n++] = trc_ev_counter(2, 1, 100, 6400);   /* reads: 6400, then 1600 more */
    ev[n++] = trc_ev_counter(2, 1, 200, 8000);
    ev[n++] = trc_ev_counter(2, 2, 200, 512);    /* writes: 512 by cycle 200 */
    ev[n++] = trc_ev_counter(0, 0, 300, 99999);  /* GM bytes: not HBM */
    vw_model m;
    load_events("hbmctr", &meta, ev, n, &m);
    const char *how = NULL;
    ck_assert_double_eq_tol(vw_hbm_bytes(&m, 0, m.t_end, &how), 8000 + 512, 1e-9);
    ck_assert_str_eq(how, "hbm.bytes_* counters");
    ck_assert_double_eq_tol(vw_hbm_bytes(&m, 100, 200, &how), 1600 + 256, 1e-9);
    vw_model_free(&m);
    /* a trace without them has no HBM point */
    meta.counters = (trc_names){ ctrs, 1 };
    meta.units = (trc_names){ NULL, 0 };
    ev[n - 4] = trc_ev_counter(0, 0, 100, 1);
    ev[n - 3] = trc_ev_counter(0, 0, 200, 2);
    ev[n - 2] = trc_ev_counter(1, 0, 200, 3);
    load_events("hbmctr0", &meta, ev, n, &m);
    ck_assert_double_eq_tol(vw_hbm_bytes(&m, 0, m.t_end, &how), -1, 1e-9);
    vw_model_free(&m);
}
END_TEST

/* Heat maps: units named "L2 slice N" / "HBM channel N" (npusim record -A)
 * get a row each, N giving the row; l2.bytes feeds the slices' map and
 * hbm.bytes_read + hbm.bytes_written the channels'; a counter of the other
 * kind on a unit, or a unit with another name, feeds none. */
/* vw_heat_max (the pyramid) is the largest rate over any range of bins,
 * as a loop over them gives: 3 channels, 1 000 samples of random growth at
 * an interval of 10 cycles, 2 000 random ranges. */
START_TEST(t_heat_pyramid)
{
    static const char *const ctrs[] = { "hbm.bytes_read" };
    static const char *units[] = { NULL, NULL, "HBM channel 0", "HBM channel 1", "HBM channel 2" };
    trc_meta meta = counter_meta(ctrs, 1);
    meta.counter_interval = 10;
    meta.units = (trc_names){ units, 5 };
    static trc_event ev[3002];
    size_t n = 0;
    ev[n++] = trc_ev_insn(0, 0, 0, 0, 0, 0, 10000, 0);
    ev[n++] = trc_ev_insn(1, 0, 0, 0, 0, 0, 10000, 0);
    npu_rng rng = { 7 };
    uint64_t v[3] = { 0, 0, 0 };
    for (uint64_t t = 10; t <= 10000; t += 10)
        for (uint32_t u = 0; u < 3; u++) {
            v[u] += npu_rng_next(&rng) % 5000;
            ev[n++] = trc_ev_counter(2 + u, 0, t, v[u]);
        }
    vw_model m;
    load_events("heatpyr", &meta, ev, n, &m);
    const vw_heat *h = &m.heat[VW_HEAT_HBM];
    ck_assert_uint_eq(h->n, 3);
    ck_assert_int_gt(h->nlv, 8);
    for (int q = 0; q < 2000; q++) {
        uint32_t row = (uint32_t)(npu_rng_next(&rng) % 3);
        size_t a = npu_rng_next(&rng) % h->nbins, b = a + npu_rng_next(&rng) % (q < 1000 ? 8 : h->nbins);
        double want = 0;
        for (size_t k = a; k <= b && k < h->nbins; k++)
            want = NPU_MAX(want, vw_heat_rate(&m, h, row, k));
        ck_assert_double_eq(vw_heat_max(&m, h, row, a, b), want);
    }
    ck_assert_double_eq(vw_heat_max(&m, h, 3, 0, 5), 0);     /* no such row */
    ck_assert_double_eq(vw_heat_max(&m, h, 0, 9, 3), 0);     /* empty range */
    vw_model_free(&m);
}
END_TEST

/* The heat-map trace: slices 0 and 1, channels 0 and 3 (and a gap), with
 * the units named (or, named = 0, not). */
static void heat_trace(vw_model *m, int named)
{
    static const char *const ctrs[] = { "l2.bytes", "hbm.bytes_read", "hbm.bytes_written" };
    static const char *units[] = { NULL, NULL, "L2 slice 0", "L2 slice 1", "HBM channel 0",
                                   "HBM channel 3", "HBM channel x", "memory (L2 + HBM)" };
    trc_meta meta = counter_meta(ctrs, 3);
    if (named)
        meta.units = (trc_names){ units, 8 };
    trc_event ev[16];
    size_t n = 0;
    for (uint32_t c = 0; c < 2; c++)
        ev[n++] = trc_ev_insn(c, 0, 0, 0, 0, 0, 300, 0);
    ev[n++] = trc_ev_counter(2, 0, 100, 1000);   /* slice 0: 1000 B in 0..100, 3000 in 100..200 */
    ev[n++] = trc_ev_counter(2, 0, 200, 4000);
    ev[n++] = trc_ev_counter(3, 0, 200, 400);    /* slice 1: 400 B over 0..200 */
    ev[n++] = trc_ev_counter(3, 1, 200, 7777);   /* an HBM counter on a slice: not mapped */
    ev[n++] = trc_ev_counter(4, 1, 100, 500);    /* channel 0: reads and writes add */
    ev[n++] = trc_ev_counter(4, 2, 100, 100);
    ev[n++] = trc_ev_counter(5, 1, 300, 900);    /* channel 3: 900 B over 0..300 */
    ev[n++] = trc_ev_counter(6, 1, 300, 5555);   /* not a heat unit */
    ev[n++] = trc_ev_counter(7, 0, 300, 9999);   /* the summed unit: not a heat unit */
    load_events(named ? "heat" : "heat0", &meta, ev, n, m);
}

/* Heat maps: units named "L2 slice N" / "HBM channel N" (npusim record -A)
 * get a row each, N giving the row; l2.bytes feeds the slices' map and
 * hbm.bytes_read + hbm.bytes_written the channels'; a counter of the other
 * kind on a unit, or a unit with another name, feeds none. */
START_TEST(t_heat_maps)
{
    vw_model m;
    heat_trace(&m, 1);
    const vw_heat *l2 = &m.heat[VW_HEAT_L2], *hb = &m.heat[VW_HEAT_HBM];
    ck_assert_uint_eq(l2->n, 2);
    ck_assert_uint_eq(hb->n, 4);
    ck_assert_double_eq_tol(vw_heat_rate(&m, l2, 0, 0), 10.0, 1e-9);
    ck_assert_double_eq_tol(vw_heat_rate(&m, l2, 0, 1), 30.0, 1e-9);
    ck_assert_double_eq_tol(vw_heat_rate(&m, l2, 1, 0), 2.0, 1e-9);
    ck_assert_double_eq_tol(vw_heat_rate(&m, l2, 1, 1), 2.0, 1e-9);
    ck_assert_double_eq_tol(vw_heat_rate(&m, l2, 0, 2), 0.0, 1e-9);
    ck_assert_double_eq_tol(vw_heat_rate(&m, hb, 0, 0), 6.0, 1e-9);
    ck_assert_double_eq_tol(vw_heat_rate(&m, hb, 1, 0), 0.0, 1e-9);
    for (size_t k = 0; k < 3; k++)
        ck_assert_double_eq_tol(vw_heat_rate(&m, hb, 3, k), 3.0, 1e-9);
    ck_assert_double_eq_tol(vw_heat_rate(&m, hb, 4, 0), 0.0, 1e-9);   /* no such row */
    ck_assert_double_eq_tol(l2->max_rate, 30.0, 1e-9);
    ck_assert_double_eq_tol(hb->max_rate, 6.0, 1e-9);
    vw_model_free(&m);
    /* without such units: no maps */
    heat_trace(&m, 0);
    ck_assert_uint_eq(m.heat[VW_HEAT_L2].n, 0);
    ck_assert_uint_eq(m.heat[VW_HEAT_HBM].n, 0);
    vw_model_free(&m);
    /* a unit number that would need more than 2^26 cells: no map, the
     * trace still loads and the counter still counts */
    static const char *const ctrs[] = { "hbm.bytes_read" };
    static const char *big[] = { NULL, NULL, "HBM channel 4095" };
    trc_meta meta = counter_meta(ctrs, 1);
    meta.units = (trc_names){ big, 3 };
    trc_event ev[3] = { trc_ev_insn(0, 0, 0, 0, 0, 0, 300, 0), trc_ev_insn(1, 0, 0, 0, 0, 0, 300, 0),
                        trc_ev_counter(2, 0, 1638400, 64) };
    load_events("heatbig", &meta, ev, 3, &m);
    ck_assert_uint_eq(m.heat[VW_HEAT_HBM].n, 0);
    ck_assert_uint_eq(m.ctr[0].total, 64);
    vw_model_free(&m);
}
END_TEST

START_TEST(t_track_busy)
{
    vw_model m;
    load(&m);
    npu_rng rng = { 42 };
    for (int k = 0; k < 300; k++) {
        const vw_track *t = vw_track_at(&m, (uint32_t)(npu_rng_next(&rng) % m.ncores),
                                        (unsigned)(npu_rng_next(&rng) % TRC_NPIPES));
        uint64_t a = m.t_min + npu_rng_next(&rng) % (m.t_end - m.t_min);
        uint64_t b = a + npu_rng_next(&rng) % 5000;
        uint64_t ref = 0;
        for (size_t i = 0; i < t->n; i++) {
            uint64_t s = NPU_MAX(t->box[i].t0, a), z = NPU_MIN(t->box[i].t0 + t->box[i].dur, b);
            if (z > s)
                ref += z - s;
        }
        ck_assert_uint_eq(vw_track_busy(t, a, b), ref);
        /* the first box ending after a really is the first */
        size_t f = vw_track_first(t->maxend, t->n, a);
        for (size_t i = 0; i < f && i < t->n; i++)
            ck_assert_uint_le(t->box[i].t0 + t->box[i].dur, a);
    }
    vw_model_free(&m);
}
END_TEST

/* ---- aggregates ------------------------------------------------------------- */
/* The range aggregates go through per-track summaries (block prefix sums
 * per leaf); they must equal a brute-force pass over the boxes for any
 * range, on a trace made to be awkward: overlapping boxes, zero-length
 * ones, a few very long ones, thousands of boxes per track (so ranges span
 * many blocks) and stalls. */
START_TEST(t_range_summaries)
{
    char dir[64], path[128];
    tmp_trace(dir, path, "sum", "r.npt");
    static const char *const ops[] = { "a", "b", "c", "d", "e" };
    static const char *const causes[] = { "queue", "bank" };
    trc_meta meta = two_core_meta();
    meta.opcodes = (trc_names){ ops, 5 };
    meta.causes = (trc_names){ causes, 2 };
    npu_diag d = {0};
    trc_writer *w = trc_writer_open(path, &meta, &d);
    ck_assert_msg(w != NULL, "%s", d.msg);
    npu_rng rng = { 9 };
    uint64_t t = 0;
    for (int i = 0; i < 12000; i++) {
        t += npu_rng_next(&rng) % 7;
        uint32_t c = (uint32_t)(npu_rng_next(&rng) % 2);
        unsigned p = (unsigned)(npu_rng_next(&rng) % 3);
        uint64_t r = npu_rng_next(&rng) % 100;
        uint64_t dur = r < 10 ? 0 : r < 12 ? 2000 + r * 50 : 1 + r % 13;   /* zero, long, short */
        uint64_t q = npu_rng_next(&rng) % 40;   /* 40 pcs, an opcode each */
        trc_event e = trc_ev_insn(c, p, 0x100 + 4 * q, (uint32_t)(q % 5), t, t, t + dur, 0);
        ck_assert_int_eq(trc_write(w, &e), NPU_OK);
        if (r % 4 == 0) {
            trc_event s = trc_ev_stall(c, p, (uint32_t)(r % 2), t, t + r % 30);
            ck_assert_int_eq(trc_write(w, &s), NPU_OK);
        }
    }
    ck_assert_msg(trc_writer_close(w, &d) == NPU_OK, "%s", d.msg);
    vw_model m;
    ck_assert_msg(vw_model_load(&m, path, &d) == NPU_OK, "load: %s", d.msg);
    ck_assert_uint_gt(vw_track_at(&m, 0, 0)->n, 4 * ((size_t)1 << vw_track_at(&m, 0, 0)->sb.shift));
    vw_table tab = {0}, hot = {0};
    vw_flame f = {0};
    for (int k = 0; k < 200; k++) {
        uint64_t a = npu_rng_next(&rng) % (m.t_end + 10), b = a + npu_rng_next(&rng) % (k < 100 ? 500 : m.t_end + 1);
        if (b == a)
            b++;
        /* brute force per (pipe, op): count (overlap, or zero-length inside) and cycles */
        uint64_t cnt[TRC_NPIPES][5] = {{0}}, cyc[TRC_NPIPES][5] = {{0}}, tot = 0, stall = 0;
        for (uint32_t c = 0; c < m.ncores; c++)
            for (unsigned p = 0; p < TRC_NPIPES; p++) {
                const vw_track *tr = vw_track_at(&m, c, p);
                for (size_t i = 0; i < tr->n; i++) {
                    const vw_box *x = &tr->box[i];
                    uint64_t s0 = NPU_MAX(x->t0, a), e0 = NPU_MIN(x->t0 + x->dur, b);
                    if (e0 > s0 || (x->dur == 0 && x->t0 >= a && x->t0 < b)) {
                        cnt[p][x->op]++;
                        cyc[p][x->op] += e0 > s0 ? e0 - s0 : 0;
                        tot += e0 > s0 ? e0 - s0 : 0;
                    }
                }
                for (size_t i = 0; i < tr->ns; i++) {
                    uint64_t s0 = NPU_MAX(tr->stall[i].t0, a), e0 = NPU_MIN(tr->stall[i].t0 + tr->stall[i].dur, b);
                    stall += e0 > s0 ? e0 - s0 : 0;
                }
            }
        ck_assert(vw_range_table(&m, a, b, &tab, &d) == NPU_OK);
        ck_assert_uint_eq(tab.total_busy, tot);
        size_t rows = 0;
        for (unsigned p = 0; p < TRC_NPIPES; p++)
            for (unsigned o = 0; o < 5; o++)
                rows += cnt[p][o] > 0;
        ck_assert_uint_eq(tab.n, rows);
        for (size_t i = 0; i < tab.n; i++) {
            unsigned p = tab.row[i].pipe, o = (unsigned)tab.row[i].key & 0xFFFF;
            ck_assert_uint_eq(tab.row[i].count, cnt[p][o]);
            ck_assert_uint_eq(tab.row[i].busy, cyc[p][o]);
        }
        ck_assert(vw_flame_build(&m, a, b, 0, &f, &d) == NPU_OK);
        ck_assert_uint_eq(f.count ? f.n[0].w : 0, tot);
        ck_assert(vw_flame_build(&m, a, b, 1, &f, &d) == NPU_OK);
        ck_assert_uint_eq(f.count ? f.n[0].w : 0, stall);
        ck_assert(vw_hotspots(&m, VW_HK_PC, a, b, &hot, &d) == NPU_OK);
        ck_assert_uint_eq(hot.total_busy, tot);
        ck_assert_uint_eq(hot.total_stall, stall);
    }
    /* busy cycles: against the boxes, also across long boxes */
    for (int k = 0; k < 300; k++) {
        const vw_track *tr = vw_track_at(&m, (uint32_t)(k % 2), (unsigned)(k % 3));
        uint64_t a = npu_rng_next(&rng) % m.t_end, b = a + npu_rng_next(&rng) % 4000, ref = 0;
        for (size_t i = 0; i < tr->n; i++) {
            uint64_t s0 = NPU_MAX(tr->box[i].t0, a), e0 = NPU_MIN(tr->box[i].t0 + tr->box[i].dur, b);
            ref += e0 > s0 ? e0 - s0 : 0;
        }
        ck_assert_uint_eq(vw_track_busy(tr, a, b), ref);
        /* galloping from any hint finds the first start >= a */
        size_t hint = (size_t)(npu_rng_next(&rng) % (tr->n + 3)), g = vw_first_ge(tr->box, tr->n, a, hint);
        ck_assert(g == tr->n || tr->box[g].t0 >= a);
        ck_assert(g == 0 || tr->box[g - 1].t0 < a);
    }
    /* levels of detail: runs sorted and disjoint, counting every box once,
     * each box inside its run, gaps between runs at least the level's gap
     * unless a long box stands alone */
    int levels = 0;
    for (uint32_t c = 0; c < m.ncores; c++)
        for (unsigned p = 0; p < 3; p++) {
            const vw_track *tr = vw_track_at(&m, c, p);
            for (int L = 0; L < VW_NLOD; L++) {
                const vw_lod *ld = &tr->lod[L];
                if (!ld->n)
                    continue;
                levels++;
                uint64_t gap = (uint64_t)VW_LOD_GAP0 << (2 * L), total = 0;
                for (size_t i = 0; i < ld->n; i++) {
                    const vw_run *r = &ld->r[i];
                    total += r->count;
                    ck_assert_uint_lt(r->first, tr->n);
                    ck_assert_uint_eq(r->t0, tr->box[r->first].t0);
                    for (uint32_t k = r->first; k < r->first + r->count; k++) {
                        ck_assert_uint_ge(tr->box[k].t0, r->t0);
                        ck_assert_uint_le(tr->box[k].t0 + tr->box[k].dur, r->end);
                    }
                    if (i) {
                        const vw_run *q = &ld->r[i - 1];
                        ck_assert_uint_ge(r->t0, q->end);
                        /* a run that starts with a long box (one that stood alone at
                         * some level) keeps its own, absorbing boxes it overlaps */
                        int wide = (q->count == 1 && q->end - q->t0 >= gap) || tr->box[r->first].dur >= VW_LOD_GAP0;
                        ck_assert_msg(wide || r->t0 >= q->end + gap, "L%d i%zu q %llu-%llu c%u r %llu-%llu c%u", L, i, (unsigned long long)q->t0, (unsigned long long)q->end, q->count, (unsigned long long)r->t0, (unsigned long long)r->end, r->count);
                    }
                }
                ck_assert_uint_eq(total, tr->n);
            }
        }
    ck_assert_int_gt(levels, 0);
    vw_table_free(&tab);
    vw_table_free(&hot);
    vw_flame_free(&f);
    vw_model_free(&m);
    unlink(path);
    rmdir(dir);
}
END_TEST

static uint64_t sum_children(const vw_flame *f, int32_t n)
{
    uint64_t s = 0;
    for (int32_t c = f->n[n].child; c >= 0; c = f->n[c].next)
        s += f->n[c].w;
    return s;
}

START_TEST(t_flame)
{
    vw_model m;
    load(&m);
    vw_flame f = {0};
    npu_diag d = {0};
    ck_assert(vw_flame_build(&m, 0, 0, 0, &f, &d) == NPU_OK);
    uint64_t busy = 0, stall = 0;
    for (size_t i = 0; i < (size_t)m.ncores * TRC_NPIPES; i++) {
        busy += m.tracks[i].cum[m.tracks[i].n];
        for (size_t k = 0; k < m.tracks[i].ns; k++)
            stall += m.tracks[i].stall[k].dur;
    }
    ck_assert_uint_eq(f.n[0].w, busy);
    /* inclusive weights: a node weighs what its children weigh (leaves: opcodes) */
    int found_mmad = 0, found_fn = 0;
    for (size_t i = 0; i < f.count; i++) {
        if (f.n[i].child >= 0)
            ck_assert_uint_eq(sum_children(&f, (int32_t)i), f.n[i].w);
        found_mmad |= strcmp(f.n[i].name, "mmad") == 0 && f.n[i].pipe == TRC_PIPE_M;
        found_fn |= strcmp(f.n[i].name, "load_tile") == 0;
    }
    ck_assert(found_mmad && found_fn);
    ck_assert_uint_ge(f.max_depth, 3);
    ck_assert(vw_flame_build(&m, 0, 0, 1, &f, &d) == NPU_OK);
    ck_assert_uint_eq(f.n[0].w, stall);
    /* a range: root = the clipped busy cycles of the range */
    uint64_t a = (m.t_min + m.t_end) / 3, b = a + 3000, ref = 0;
    for (size_t i = 0; i < (size_t)m.ncores * TRC_NPIPES; i++)
        ref += vw_track_busy(&m.tracks[i], a, b);
    ck_assert(vw_flame_build(&m, a, b, 0, &f, &d) == NPU_OK);
    ck_assert_uint_eq(f.n[0].w, ref);
    vw_table t = {0};
    ck_assert(vw_range_table(&m, a, b, &t, &d) == NPU_OK);
    ck_assert_uint_eq(t.total_busy, ref);
    ck_assert_uint_gt(t.n, 3);
    vw_table_free(&t);
    for (int k = 0; k < VW_HK__N; k++) {
        ck_assert(vw_hotspots(&m, (vw_hkey)k, 0, 0, &t, &d) == NPU_OK);
        ck_assert_uint_eq(t.total_busy, busy);
        ck_assert_uint_eq(t.total_stall, stall);
        vw_table_sort(&t, 2);
        for (size_t i = 1; i < t.n; i++)
            ck_assert_uint_ge(t.row[i - 1].busy, t.row[i].busy);
        vw_table_sort(&t, 3);
        for (size_t i = 1; i < t.n; i++)
            ck_assert_uint_ge(t.row[i - 1].stall, t.row[i].stall);
    }
    vw_table_free(&t);
    vw_flame_free(&f);
    vw_model_free(&m);
}
END_TEST

/* ---- interaction through synthetic SDL events ------------------------------------ */
static SDL_Event key_ev(SDL_Keycode k, Uint16 mod)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.keysym.sym = k;
    e.key.keysym.mod = mod;
    return e;
}

static SDL_Event mouse_ev(Uint32 type, int x, int y)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = type;
    if (type == SDL_MOUSEMOTION) {
        e.motion.x = x;
        e.motion.y = y;
    } else {
        e.button.x = x;
        e.button.y = y;
        e.button.button = SDL_BUTTON_LEFT;
    }
    return e;
}

START_TEST(t_zoom_pan)
{
    vw_model m;
    load(&m);
    vw_view v;
    npu_diag d = {0};
    ck_assert(vw_view_init(&v, &m, 1280, 800, 1, &d) == NPU_OK);
    double span0 = v.t1 - v.t0;
    /* wheel at x: the time under the cursor stays put */
    SDL_Event e = mouse_ev(SDL_MOUSEMOTION, 700, 400);
    vw_handle_event(&v, &e);
    double t_at = vw_x_to_t(&v, 700);
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEWHEEL;
    e.wheel.y = 1;
    for (int i = 0; i < 5; i++)
        vw_handle_event(&v, &e);
    ck_assert(v.t1 - v.t0 < span0 * 0.4);
    ck_assert_double_eq_tol(vw_x_to_t(&v, 700), t_at, (v.t1 - v.t0) * 1e-6);
    /* W zooms in, S zooms out, A/D pan by a fraction of the view */
    double s1 = v.t1 - v.t0;
    e = key_ev(SDLK_w, 0);
    vw_handle_event(&v, &e);
    ck_assert_double_eq_tol(v.t1 - v.t0, s1 * 0.8, s1 * 1e-6);
    e = key_ev(SDLK_s, 0);
    vw_handle_event(&v, &e);
    ck_assert_double_eq_tol(v.t1 - v.t0, s1, s1 * 1e-6);
    double t0 = v.t0;
    e = key_ev(SDLK_d, 0);
    vw_handle_event(&v, &e);
    ck_assert(v.t0 > t0);
    ck_assert_double_eq_tol(v.t0 - t0, (v.t1 - v.t0) * 0.15, (v.t1 - v.t0) * 1e-6);
    /* drag pans: 100 px right moves the view 100 px of time left */
    t0 = v.t0;
    double px = (v.t1 - v.t0) / (vw_time_x1(&v) - vw_time_x0(&v));
    e = mouse_ev(SDL_MOUSEBUTTONDOWN, 600, 400);
    vw_handle_event(&v, &e);
    e = mouse_ev(SDL_MOUSEMOTION, 700, 400);
    vw_handle_event(&v, &e);
    e = mouse_ev(SDL_MOUSEBUTTONUP, 700, 400);
    vw_handle_event(&v, &e);
    ck_assert_double_eq_tol(v.t0, t0 - 100 * px, px * 1e-3);
    /* F with nothing selected fits the whole run */
    e = key_ev(SDLK_f, 0);
    vw_handle_event(&v, &e);
    ck_assert(v.t0 <= (double)m.t_min && v.t1 >= (double)m.t_end);
    /* resize and quit */
    memset(&e, 0, sizeof e);
    e.type = SDL_WINDOWEVENT;
    e.window.event = SDL_WINDOWEVENT_SIZE_CHANGED;
    e.window.data1 = 900;
    e.window.data2 = 600;
    vw_handle_event(&v, &e);
    ck_assert_int_eq(v.w, 900);
    ck_assert_int_eq(v.h, 600);
    e = key_ev(SDLK_q, 0);
    vw_handle_event(&v, &e);
    ck_assert(v.quit);
    vw_view_free(&v);
    vw_model_free(&m);
}
END_TEST

START_TEST(t_select_range)
{
    vw_model m;
    load(&m);
    vw_view v;
    npu_diag d = {0};
    ck_assert(vw_view_init(&v, &m, 1280, 800, 1, &d) == NPU_OK);
    double ta = vw_x_to_t(&v, 400), tb = vw_x_to_t(&v, 600);
    SDL_SetModState(KMOD_LSHIFT);
    SDL_Event e = mouse_ev(SDL_MOUSEBUTTONDOWN, 400, 500);
    vw_handle_event(&v, &e);
    e = mouse_ev(SDL_MOUSEMOTION, 500, 500);
    vw_handle_event(&v, &e);
    ck_assert(v.has_range);     /* live while dragging */
    e = mouse_ev(SDL_MOUSEMOTION, 600, 500);
    vw_handle_event(&v, &e);
    e = mouse_ev(SDL_MOUSEBUTTONUP, 600, 500);
    vw_handle_event(&v, &e);
    SDL_SetModState(KMOD_NONE);
    ck_assert(v.has_range);
    ck_assert_uint_eq(v.r0, (uint64_t)ta);
    ck_assert_uint_eq(v.r1, (uint64_t)tb);
    /* the range's table and flame graph follow the selection */
    vw_cmds cl = {0};
    vw_draw(&v, &cl);
    ck_assert(!cl.oom && cl.n > 100);
    uint64_t ref = 0;
    for (size_t i = 0; i < (size_t)m.ncores * TRC_NPIPES; i++)
        ref += vw_track_busy(&m.tracks[i], v.r0, v.r1);
    ck_assert_uint_eq(v.rtab.total_busy, ref);
    v.tab = VW_TAB_FLAME;
    vw_draw(&v, &cl);
    ck_assert_uint_eq(v.flame.n[0].w, ref);
    /* F fits the range */
    v.tab = VW_TAB_TIMELINE;
    e = key_ev(SDLK_f, 0);
    vw_handle_event(&v, &e);
    ck_assert(v.t0 <= (double)v.r0 && v.t1 >= (double)v.r1);
    ck_assert((v.t1 - v.t0) < (double)(v.r1 - v.r0) * 1.1);
    /* Esc clears it */
    e = key_ev(SDLK_ESCAPE, 0);
    vw_handle_event(&v, &e);
    ck_assert(!v.has_range);
    vw_cmds_free(&cl);
    vw_view_free(&v);
    vw_model_free(&m);
}
END_TEST

START_TEST(t_search)
{
    vw_model m;
    load(&m);
    vw_view v;
    npu_diag d = {0};
    ck_assert(vw_view_init(&v, &m, 1280, 800, 1, &d) == NPU_OK);
    /* "/" then typed text then Enter */
    SDL_Event e = key_ev(SDLK_SLASH, 0);
    vw_handle_event(&v, &e);
    ck_assert(v.searching);
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTINPUT;
    snprintf(e.text.text, sizeof e.text.text, "mmad");
    vw_handle_event(&v, &e);
    e = key_ev(SDLK_RETURN, 0);
    vw_handle_event(&v, &e);
    ck_assert(!v.searching);
    size_t n = 0;
    for (size_t i = 0; i < (size_t)m.ncores * TRC_NPIPES; i++)
        for (size_t k = 0; k < m.tracks[i].n; k++)
            n += strcmp(vw_op_name(&m, m.tracks[i].box[k].op), "mmad") == 0;
    ck_assert_uint_gt(n, 10);
    ck_assert_uint_eq(v.nhits, n);
    /* the selection is the hit, and the view shows it */
    ck_assert(v.has_sel && v.sel.kind == 1);
    const vw_box *b = &vw_track_at(&m, v.sel.core, v.sel.pipe)->box[v.sel.index];
    ck_assert_str_eq(vw_op_name(&m, b->op), "mmad");
    ck_assert(b->t0 >= v.t0 && b->t0 + b->dur <= v.t1);
    /* Enter steps forward in time */
    uint64_t prev = b->t0;
    for (int i = 0; i < 5; i++) {
        e = key_ev(SDLK_RETURN, 0);
        vw_handle_event(&v, &e);
        b = &vw_track_at(&m, v.sel.core, v.sel.pipe)->box[v.sel.index];
        ck_assert_str_eq(vw_op_name(&m, b->op), "mmad");
        ck_assert_uint_ge(b->t0, prev);
        prev = b->t0;
    }
    /* labels and pcs */
    ck_assert_uint_gt(vw_search(&v, "k_loop"), 0);
    b = &vw_track_at(&m, v.sel.core, v.sel.pipe)->box[v.sel.index];
    const trc_symbol *lb = trc_reader_label_at(m.r, b->pc);
    ck_assert(lb && strcmp(lb->name, "k_loop") == 0);
    char q[32];
    snprintf(q, sizeof q, "0x%x", b->pc);
    size_t np = vw_search(&v, q);
    ck_assert_uint_gt(np, 0);
    ck_assert_uint_eq(vw_track_at(&m, v.sel.core, v.sel.pipe)->box[v.sel.index].pc, b->pc);
    ck_assert_uint_eq(vw_search(&v, "no_such_thing"), 0);
    /* the hit can be clicked: hit testing finds the same box */
    vw_search(&v, "mmad");
    b = &vw_track_at(&m, v.sel.core, v.sel.pipe)->box[v.sel.index];
    int x = (int)vw_t_to_x(&v, b->t0 + b->dur / 2.0);
    int found = 0;
    for (int y = 0; y < v.h && !found; y++) {
        vw_hit h = vw_hit_test(&v, x, y);
        found = h.kind == 1 && h.core == v.sel.core && h.pipe == v.sel.pipe && h.index == v.sel.index;
    }
    ck_assert(found);
    vw_view_free(&v);
    vw_model_free(&m);
}
END_TEST

/* A search whose hit list cannot grow keeps the hits it has, in time order
 * (each allocation of the search fails in turn; the trace has more hits
 * than the list's first allocation, spread over several tracks). */
START_TEST(t_search_oom)
{
    char dir[64], p[128];
    tmp_trace(dir, p, "soom", "s.npt");
    trc_synth_opts o = { .events = 20000, .cores = 4, .seed = 7, .mem = 0 };
    npu_diag d = {0};
    ck_assert_msg(trc_synth_write(p, &o, &d) == NPU_OK, "%s", d.msg);
    vw_model m;
    ck_assert_msg(vw_model_load(&m, p, &d) == NPU_OK, "%s", d.msg);
    vw_view v;
    ck_assert(vw_view_init(&v, &m, 1280, 800, 1, &d) == NPU_OK);
    size_t n = vw_search(&v, "mmad");
    ck_assert_uint_gt(n, 1024);
    int partial = 0;
    for (long f = 1; f < 16; f++) {
        npu_alloc_fail_after(f);
        size_t nh = vw_search(&v, "mmad");
        npu_alloc_fail_after(0);
        ck_assert_uint_le(nh, n);
        partial |= nh > 0 && nh < n;
        for (size_t i = 0; i < nh; i++) {
            ck_assert_uint_eq(v.hits[i].t0, vw_track_at(&m, v.hits[i].core, v.hits[i].pipe)->box[v.hits[i].index].t0);
            if (i)
                ck_assert_uint_le(v.hits[i - 1].t0, v.hits[i].t0);
        }
    }
    ck_assert(partial);     /* some failure left a part of the hits */
    vw_view_free(&v);
    vw_model_free(&m);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(t_clicks)
{
    vw_model m;
    load(&m);
    vw_view v;
    npu_diag d = {0};
    ck_assert(vw_view_init(&v, &m, 1280, 800, 1, &d) == NPU_OK);
    vw_cmds cl = {0};
    /* click a core's name: it collapses, and clicking again expands it */
    int hy = -1;
    for (int y = 0; y < v.h && hy < 0; y++) {
        vw_hit h = vw_hit_test(&v, 30, y);
        if (h.kind == 3 && h.core == 1)
            hy = y;
    }
    ck_assert_int_ge(hy, 0);
    ck_assert(!v.collapsed[1]);
    SDL_Event e = mouse_ev(SDL_MOUSEBUTTONDOWN, 30, hy);
    vw_handle_event(&v, &e);
    e = mouse_ev(SDL_MOUSEBUTTONUP, 30, hy);
    vw_handle_event(&v, &e);
    ck_assert(v.collapsed[1]);
    /* the tabs: click "Flame graph" */
    int tx = -1;
    for (int x = 0; x < v.w && tx < 0; x++) {
        vw_hit h = vw_hit_test(&v, x, 10);
        if (h.kind == 5 && h.index == VW_TAB_FLAME)
            tx = x;
    }
    ck_assert_int_ge(tx, 0);
    e = mouse_ev(SDL_MOUSEBUTTONDOWN, tx + 5, 10);
    vw_handle_event(&v, &e);
    e = mouse_ev(SDL_MOUSEBUTTONUP, tx + 5, 10);
    vw_handle_event(&v, &e);
    ck_assert_int_eq(v.tab, VW_TAB_FLAME);
    vw_draw(&v, &cl);
    ck_assert_uint_gt(v.flame.count, 5);
    /* click a frame of depth 2: the graph zooms into it; Esc goes back up */
    int fx = -1, fy = -1;
    size_t node = 0;
    for (int y = 40; y < v.h && fx < 0; y += 2)
        for (int x = 0; x < v.w && fx < 0; x += 4) {
            vw_hit h = vw_hit_test(&v, x, y);
            if (h.kind == 4 && v.flame.n[h.index].depth == 2 && v.flame.n[h.index].w * 4 < v.flame.n[0].w * 3) {
                fx = x;
                fy = y;
                node = h.index;
            }
        }
    ck_assert_int_ge(fx, 0);
    e = mouse_ev(SDL_MOUSEBUTTONDOWN, fx, fy);
    vw_handle_event(&v, &e);
    e = mouse_ev(SDL_MOUSEBUTTONUP, fx, fy);
    vw_handle_event(&v, &e);
    ck_assert_int_eq(v.flame_zoom, (int32_t)node);
    /* zoomed: the frame spans the width (hit anywhere on its row) */
    vw_hit h = vw_hit_test(&v, 20, fy);
    ck_assert(h.kind == 4 && h.index == node);
    h = vw_hit_test(&v, v.w - 20, fy);
    ck_assert(h.kind == 4 && h.index == node);
    e = key_ev(SDLK_ESCAPE, 0);
    vw_handle_event(&v, &e);
    ck_assert_int_eq(v.flame_zoom, v.flame.n[node].parent);
    /* T: the stall flame graph */
    e = key_ev(SDLK_t, 0);
    vw_handle_event(&v, &e);
    vw_draw(&v, &cl);
    ck_assert(v.flame.stalls);
    /* ?: help, any key closes it */
    e = key_ev(SDLK_SLASH, KMOD_SHIFT);
    vw_handle_event(&v, &e);
    ck_assert(v.help);
    e = key_ev(SDLK_a, 0);
    vw_handle_event(&v, &e);
    ck_assert(!v.help);
    vw_cmds_free(&cl);
    vw_view_free(&v);
    vw_model_free(&m);
}
END_TEST

/* ---- pictures ------------------------------------------------------------------ */
static uint32_t px(SDL_Surface *s, int x, int y)
{
    const uint8_t *p = (const uint8_t *)s->pixels + (size_t)y * s->pitch + (size_t)x * 4;
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | 0xFF;  /* RGBA32 */
}

START_TEST(t_picture_timeline)
{
    vw_model m;
    load(&m);
    vw_view v;
    npu_diag d = {0};
    ck_assert(vw_view_init(&v, &m, 1280, 800, 1, &d) == NPU_OK);
    /* zoom onto one mmad so that its box is wide and alone in its pixels */
    ck_assert_uint_gt(vw_search(&v, "mmad"), 0);
    const vw_box *b = &vw_track_at(&m, v.sel.core, v.sel.pipe)->box[v.sel.index];
    v.has_sel = 0;
    v.t0 = b->t0 - b->dur * 2.0;
    v.t1 = b->t0 + b->dur * 3.0;
    int x = (int)vw_t_to_x(&v, b->t0 + b->dur / 2.0);
    int y = -1;
    for (int yy = 0; yy < v.h && y < 0; yy++) {
        vw_hit h = vw_hit_test(&v, x, yy);
        if (h.kind == 1 && h.core == v.sel.core && h.pipe == TRC_PIPE_M && h.index == v.sel.index)
            y = yy;
    }
    ck_assert_int_ge(y, 0);
    v.mx = v.my = 0;    /* no tooltip over the box */
    void *sv;
    ck_assert_msg(vw_render_view(&v, &sv, &d) == NPU_OK, "%s", d.msg);
    SDL_Surface *s = sv;
    ck_assert_int_eq(s->w, 1280);
    ck_assert_int_eq(s->h, 800);
    /* the box: its opcode's colour, right where the model puts it, and
     * background just left of its start */
    uint32_t want = vw_pipe_color(TRC_PIPE_M, b->op);
    ck_assert_uint_eq(px(s, x, y + 3), want);
    int xs = (int)vw_t_to_x(&v, (double)b->t0);
    ck_assert_uint_ne(px(s, xs - 3, y + 3), want);
    /* every lane of the core carries its pipe's marker in the label column */
    int lanes = 0;
    for (int yy = 0; yy < v.h; yy++)
        for (unsigned p = 0; p < TRC_NPIPES; p++)
            if (px(s, 15, yy) == vw_pipe_base_color(p)) {
                lanes |= 1 << p;
                break;
            }
    ck_assert_int_eq(lanes, (1 << TRC_NPIPES) - 1);
    SDL_FreeSurface(s);
    vw_view_free(&v);
    vw_model_free(&m);
}
END_TEST

/* A trace with counter samples and no instruction (a damaged one, or one
 * fuzz_view built): every tab draws, and the empty tables sort (qsort was
 * handed a NULL array, which UBSan reports; tests/fuzz/fuzz_view found it). */
START_TEST(t_no_instructions)
{
    static const char *const ctrs[] = { "l2.bytes" };
    trc_meta meta = counter_meta(ctrs, 1);
    trc_event ev[2] = { trc_ev_counter(0, 0, 100, 64), trc_ev_counter(1, 0, 200, 128) };
    vw_model m;
    load_events("noinsn", &meta, ev, 2, &m);
    vw_view v;
    npu_diag d = {0};
    ck_assert(vw_view_init(&v, &m, 640, 400, 1, &d) == NPU_OK);
    for (int tab = 0; tab < VW_NTABS; tab++) {
        v.tab = (vw_tab)tab;
        for (int k = 0; k < 4; k++) {
            v.hkey = (vw_hkey)k;
            v.htab_dirty = 1;
            vw_cmds c;
            memset(&c, 0, sizeof c);
            vw_draw(&v, &c);
            vw_cmds_free(&c);
        }
    }
    v.has_range = 1;
    v.r0 = 0;
    v.r1 = 200;
    v.tab = VW_TAB_HOTSPOTS;
    vw_cmds c;
    memset(&c, 0, sizeof c);
    vw_draw(&v, &c);
    vw_cmds_free(&c);
    vw_view_free(&v);
    vw_model_free(&m);
}
END_TEST

/* The heat maps in the timeline: the busiest row and bin in the map's top
 * colour (slice 0 in 100..200, channel 0 in 0..100), half of it (channel 3
 * everywhere) in the middle one, and no top colour where nothing is at the
 * maximum (200..300). */
START_TEST(t_picture_heat)
{
    vw_model m;
    heat_trace(&m, 1);
    vw_view v;
    npu_diag d = {0};
    ck_assert(vw_view_init(&v, &m, 1280, 800, 1, &d) == NPU_OK);
    v.t0 = 0;
    v.t1 = 300;
    v.mx = v.my = 0;
    void *sv;
    ck_assert_msg(vw_render_view(&v, &sv, &d) == NPU_OK, "%s", d.msg);
    SDL_Surface *s = sv;
    const uint32_t top = 0xF2D06BFF, mid = 0x4F8FCBFF;
    int n_top[3] = { 0 }, n_mid[3] = { 0 };
    for (int k = 0; k < 3; k++) {
        int x = (int)vw_t_to_x(&v, 50.0 + 100.0 * k);
        for (int y = 0; y < s->h; y++) {
            n_top[k] += px(s, x, y) == top;
            n_mid[k] += px(s, x, y) == mid;
        }
    }
    ck_assert_int_gt(n_top[0], 0);      /* channel 0 */
    ck_assert_int_gt(n_top[1], 0);      /* slice 0 */
    ck_assert_int_eq(n_top[2], 0);
    for (int k = 0; k < 3; k++)
        ck_assert_int_gt(n_mid[k], 0);  /* channel 3 at half the maximum */
    SDL_FreeSurface(s);
    /* the log scale (L, --heat log): half the maximum is 0.90 of the way up
     * (log10(500) / 3), so no cell of the middle colour is left; linear
     * again after */
    ck_assert(fabs(vw_heat_level(50, 100, 1) - log10(500.0) / 3) < 1e-12);
    ck_assert(vw_heat_level(50, 100, 0) == 0.5);
    ck_assert(vw_heat_level(0.01, 100, 1) == 0 && vw_heat_level(100, 100, 1) == 1);
    ck_assert(vw_heat_level(0, 100, 1) == 0 && vw_heat_level(5, 0, 1) == 0);
    v.heat_log = 1;
    ck_assert_msg(vw_render_view(&v, &sv, &d) == NPU_OK, "%s", d.msg);
    s = sv;
    int n_mid_log = 0, n_top_log = 0;
    for (int k = 0; k < 3; k++) {
        int xk = (int)vw_t_to_x(&v, 50.0 + 100.0 * k);
        for (int y = 0; y < s->h; y++) {
            n_mid_log += px(s, xk, y) == mid;
            n_top_log += px(s, xk, y) == top;
        }
    }
    ck_assert_int_eq(n_mid_log, 0);
    ck_assert_int_eq(n_top_log, n_top[0] + n_top[1]);   /* the maximum is the maximum on either scale */
    SDL_FreeSurface(s);
    v.heat_log = 0;
    /* hovering: channel 3's cell in 100..200 and the l2.bytes track's bin */
    int x = (int)vw_t_to_x(&v, 150.0), hy = -1, cy = -1;
    for (int y = 0; y < v.h; y++) {
        vw_hit h = vw_hit_test(&v, x, y);
        if (h.kind == 10 && h.core == VW_HEAT_HBM && h.pipe == 3 && hy < 0)
            hy = y;
        if (h.kind == 9 && !strcmp(m.ctr[h.core].name, "l2.bytes") && cy < 0)
            cy = y;
    }
    ck_assert_int_ge(hy, 0);
    ck_assert_int_ge(cy, 0);
    char lines[3][160];
    vw_hit h = vw_hit_test(&v, x, hy);
    ck_assert_uint_eq(h.index, 1);
    vw_bin_lines(&v, &h, lines);
    ck_assert_str_eq(lines[0], "HBM channel 3: hbm.bytes_read + hbm.bytes_written");
    ck_assert_str_eq(lines[1], "cycles 100 .. 200");
    ck_assert_str_eq(lines[2], "3 per cycle (50 % of the track's maximum)");
    h = vw_hit_test(&v, x, cy);
    vw_bin_lines(&v, &h, lines);
    ck_assert_str_eq(lines[0], "l2.bytes");
    /* 30 + 2 from the slices, 9999 / 300 from the summed unit */
    ck_assert_str_eq(lines[2], "65.33 per cycle (100 % of the track's maximum)");
    /* and the tooltip is drawn: the picture changes right of the mouse */
    v.mx = v.my = 0;
    ck_assert_msg(vw_render_view(&v, &sv, &d) == NPU_OK, "%s", d.msg);
    SDL_Surface *plain = sv;
    v.mx = x;
    v.my = hy;
    ck_assert_msg(vw_render_view(&v, &sv, &d) == NPU_OK, "%s", d.msg);
    s = sv;
    if (getenv("NPU_VIEWER_BMP"))
        SDL_SaveBMP(s, getenv("NPU_VIEWER_BMP"));
    int changed = 0;
    for (int yy = hy + 16; yy < NPU_MIN(s->h, hy + 50); yy++)
        for (int xx = x + 16; xx < NPU_MIN(s->w, x + 200); xx++)
            changed += px(s, xx, yy) != px(plain, xx, yy);
    ck_assert_int_gt(changed, 1000);
    SDL_FreeSurface(plain);
    SDL_FreeSurface(s);
    vw_view_free(&v);
    vw_model_free(&m);
}
END_TEST

/* The zoomed-out core header's utilisation row at an odd plot width: its
 * columns go two pixels at a time, so the loop ends past the plot, and the
 * last run of equal heights must still be drawn. Core 0 keeps three pipes
 * busy the whole trace; viewed inside that stretch, the row is one run
 * across the whole plot, which an odd width used to drop entirely (fixed
 * in c1f819c; this test fails on the code before it). The util rects are
 * those inside a header's full-width panel rect, right of the label
 * column. */
static double util_cover(const vw_model *m, int W)
{
    vw_view v;
    npu_diag d = {0};
    ck_assert_msg(vw_view_init(&v, m, W, 400, 1, &d) == NPU_OK, "%s", d.msg);
    /* the middle of the busy stretch: the row's last column is busy too
     * (still zoomed out far enough for the busy grid) */
    v.t0 = (double)m->t_end * 0.25;
    v.t1 = (double)m->t_end * 0.75;
    vw_cmds cl = {0};
    vw_draw(&v, &cl);
    float x0 = vw_time_x0(&v), x1 = vw_time_x1(&v);
    double best = 0;
    for (size_t i = 0; i < cl.n; i++) {
        const vw_cmd *h = &cl.c[i];
        if (h->kind != VW_CMD_RECT || h->x != 0 || h->w != (float)W || h->h > 30)
            continue;
        /* a header panel: cover of the rects of another colour inside it */
        double cover = 0;
        for (size_t j = i + 1; j < cl.n; j++) {
            const vw_cmd *u = &cl.c[j];
            if (u->kind == VW_CMD_RECT && u->color != h->color && u->y >= h->y && u->y + u->h <= h->y + h->h &&
                u->x >= x0 - 1 && u->x + u->w <= x1 + 2 && u->h >= 2)
                cover += u->w;
        }
        if (cover > best)
            best = cover;
    }
    vw_cmds_free(&cl);
    vw_view_free(&v);
    return best / (double)(x1 - x0);
}

START_TEST(t_util_odd_width)
{
    char dir[64], path[128];
    tmp_trace(dir, path, "util", "u.npt");
    static const char *const ops[] = { "busy" };
    trc_meta meta = two_core_meta();
    meta.opcodes = (trc_names){ ops, 1 };
    npu_diag d = {0};
    trc_writer *w = trc_writer_open(path, &meta, &d);
    ck_assert_msg(w != NULL, "%s", d.msg);
    for (uint64_t k = 0; k < 4000; k++)
        for (unsigned p = 0; p < 3; p++) {
            trc_event e = trc_ev_insn(0, p, 0x100 + 8 * p, 0, k * 2500, k * 2500, (k + 1) * 2500, 0);
            ck_assert_int_eq(trc_write(w, &e), NPU_OK);
        }
    trc_event e = trc_ev_insn(1, 0, 0x100, 0, 0, 0, 100, 0);
    ck_assert_int_eq(trc_write(w, &e), NPU_OK);
    ck_assert_msg(trc_writer_close(w, &d) == NPU_OK, "%s", d.msg);
    vw_model m;
    ck_assert_msg(vw_model_load(&m, path, &d) == NPU_OK, "load: %s", d.msg);
    for (int W = 1280; W <= 1283; W++) {
        double c = util_cover(&m, W);
        /* (at an odd width the last two-pixel column reaches one pixel past) */
        ck_assert_msg(c > 0.99 && c < 1.01, "width %d: the utilisation row covers %.3f of the plot", W, c);
    }
    vw_model_free(&m);
    remove(path);
    rmdir(dir);
}
END_TEST

START_TEST(t_picture_views)
{
    vw_model m;
    load(&m);
    npu_diag d = {0};
    for (int tab = 0; tab < VW_NTABS; tab++) {
        vw_shot_opts o = { 1280, 800, (vw_tab)tab, 0, 0, 0, 1, VW_HK_FUNC };
        void *sv;
        ck_assert_msg(vw_render_surface(&m, &o, &sv, &d) == NPU_OK, "%s", d.msg);
        SDL_Surface *s = sv;
        /* count pixels that are neither the background nor a panel grey */
        uint32_t bg = px(s, 640, 780 - 100);
        long colourful = 0;
        for (int y = 40; y < 770; y += 2)
            for (int x = 0; x < 1280; x += 2) {
                uint32_t c = px(s, x, y);
                int r = c >> 24, g = (c >> 16) & 255, b = (c >> 8) & 255;
                int sat = NPU_MAX(r, NPU_MAX(g, b)) - NPU_MIN(r, NPU_MIN(g, b));
                /* the hotspot table is text: count bright pixels there */
                colourful += tab == VW_TAB_HOTSPOTS ? (r + g + b > 3 * 0x70) : (sat > 40 && c != bg);
            }
        ck_assert_msg(colourful > (tab == VW_TAB_HOTSPOTS || tab == VW_TAB_COUNTERS ? 300 : 2000), "tab %d: only %ld coloured samples", tab, colourful);
        if (tab == VW_TAB_FLAME) {
            /* the root frame spans the width, in a warm colour */
            uint32_t c = px(s, 640, 66);
            ck_assert_msg((c >> 24) > ((c >> 8) & 255) + 30, "flame root not warm: %08x", c);
            ck_assert_uint_eq(px(s, 100, 66) >> 8 != 0, 1);
        }
        SDL_FreeSurface(s);
    }
    /* a screenshot file, written atomically */
    char png[200];
    snprintf(png, sizeof png, "%s/t.png", fx()->dir);
    vw_shot_opts o = { 800, 500, VW_TAB_TIMELINE, 1, m.t_min, m.t_min + 5000, 2, VW_HK_FUNC };
    ck_assert_msg(vw_screenshot(&m, &o, png, &d) == NPU_OK, "%s", d.msg);
    FILE *f = fopen(png, "rb");
    ck_assert_ptr_nonnull(f);
    unsigned char sig[8];
    ck_assert_uint_eq(fread(sig, 1, 8, f), 8);
    fclose(f);
    ck_assert(memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0);
    remove(png);
    vw_model_free(&m);
}
END_TEST

/* ---- bad input ------------------------------------------------------------------ */
START_TEST(t_damaged)
{
    npu_diag d = {0};
    vw_model m;
    char p[200];
    snprintf(p, sizeof p, "%s/bad.npt", fx()->dir[0] ? fx()->dir : "/tmp");
    trace_path(fx());
    snprintf(p, sizeof p, "%s/bad.npt", fx()->dir);
    FILE *f = fopen(p, "wb");
    fputs("this is not a trace at all, just text\n", f);
    fclose(f);
    ck_assert(vw_model_load(&m, p, &d) != NPU_OK);
    ck_assert_msg(strlen(d.msg) > 10, "message: %s", d.msg);
    ck_assert(vw_model_load(&m, "/nonexistent/x.npt", &d) != NPU_OK);
    ck_assert(strstr(d.msg, "/nonexistent/x.npt") != NULL);
    /* a trace cut in half and one with flipped bytes: an error or a partial
     * load, never a crash */
    uint8_t *buf;
    size_t len;
    ck_assert(npu_read_file(fx()->path, 0, 0, &buf, &len, &d) == NPU_OK);
    for (int k = 0; k < 6; k++) {
        size_t n = k == 0 ? len / 2 : len;
        if (k > 0)
            buf[(len / 7) * k] ^= 0x5A;
        f = fopen(p, "wb");
        fwrite(buf, 1, n, f);
        fclose(f);
        npu_status st = vw_model_load(&m, p, &d);
        if (st == NPU_OK) {
            ck_assert_uint_gt(m.n_events, 0);
            vw_model_free(&m);
        } else {
            ck_assert(strlen(d.msg) > 0);
        }
    }
    npu_free(buf);
    remove(p);
}
END_TEST

/* The load (decoding thread + inflating helper + filing thread) gives
 * exactly what a plain single-threaded iterator gives: every INSN box and
 * STALL box in its track in iterator order with the same start, duration,
 * pc and opcode / cause, and the same counts, on a trace of many chunks
 * and on a copy with a damaged chunk (which loads the rest and lists the
 * same damage). */
static void check_load_matches(const char *path)
{
    npu_diag d = {0};
    vw_model m;
    ck_assert_msg(vw_model_load(&m, path, &d) == NPU_OK, "load: %s", d.msg);
    trc_reader *r = trc_open(path, &d);
    ck_assert_ptr_nonnull(r);
    trc_iter *it = trc_iter_new(r, NULL, &d);
    size_t ntr = (size_t)m.ncores * TRC_NPIPES;
    size_t *ki = calloc(ntr, sizeof *ki), *ks = calloc(ntr, sizeof *ks);
    ck_assert(ki && ks);
    trc_event e;
    uint64_t n = 0, nsets = 0;
    while (trc_iter_next(it, &e)) {
        n++;
        nsets += e.kind == TRC_FLAG_SET;
        if ((e.kind != TRC_INSN && e.kind != TRC_STALL) || e.core >= m.ncores || e.pipe >= TRC_NPIPES)
            continue;
        const vw_track *t = vw_track_at(&m, e.core, e.pipe);
        uint64_t du = e.t1 > e.t0 ? e.t1 - e.t0 : 0;
        if (e.kind == TRC_INSN) {
            size_t *k = &ki[e.core * TRC_NPIPES + e.pipe];
            ck_assert_uint_lt(*k, t->n);
            const vw_box *b = &t->box[(*k)++];
            ck_assert_msg(b->t0 == e.t0 && b->dur == du && b->pc == (uint32_t)e.addr && b->op == e.id,
                          "core %u pipe %u: box %zu differs from the iterator's event", e.core, e.pipe, *k - 1);
        } else {
            size_t *k = &ks[e.core * TRC_NPIPES + e.pipe];
            while (*k < t->ns && (t->stall[*k].op == VW_CAUSE_FLAG || t->stall[*k].op == VW_CAUSE_BARRIER))
                (*k)++;
            ck_assert_uint_lt(*k, t->ns);
            const vw_box *b = &t->stall[(*k)++];
            ck_assert_msg(b->t0 == e.t0 && b->dur == du && b->op == e.id, "stall box differs");
        }
    }
    for (size_t i = 0; i < ntr; i++)
        ck_assert_uint_eq(ki[i], m.tracks[i].n);
    ck_assert_uint_eq(m.n_events, n);
    ck_assert_uint_eq(m.nflows, nsets);
    ck_assert_uint_eq(trc_reader_damage(m.r, NULL), trc_reader_damage(r, NULL));
    free(ki);
    free(ks);
    trc_iter_free(it);
    trc_close(r);
    vw_model_free(&m);
}

START_TEST(t_load_matches_iterator)
{
    char dir[64], p[128], q[128];
    tmp_trace(dir, p, "ld", "many.npt");
    snprintf(q, sizeof q, "%s/dmg.npt", dir);
    trc_synth_opts o = { .events = 200000, .cores = 6, .seed = 3, .mem = 0 };
    npu_diag d = {0};
    ck_assert_msg(trc_synth_write(p, &o, &d) == NPU_OK, "%s", d.msg);
    check_load_matches(p);
    uint8_t *buf;
    size_t len;
    ck_assert(npu_read_file(p, 0, 0, &buf, &len, &d) == NPU_OK);
    buf[len / 2] ^= 0x5A;   /* inside some events chunk's payload */
    FILE *f = fopen(q, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite(buf, 1, len, f);
    fclose(f);
    npu_free(buf);
    check_load_matches(q);
    vw_model m;
    ck_assert(vw_model_load(&m, q, &d) == NPU_OK);
    ck_assert_uint_gt(trc_reader_damage(m.r, NULL), 0);
    ck_assert_uint_lt(m.n_events, o.events + 1000);
    vw_model_free(&m);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(t_alloc_fail)
{
    trace_path(fx());
    /* every allocation of a load can fail: an error, no leak (ASan), no crash */
    for (long n = 1; n < 400; n += 7) {
        vw_model m;
        npu_diag d = {0};
        npu_alloc_fail_after(n);
        npu_status st = vw_model_load(&m, fx()->path, &d);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (st == NPU_OK)
            vw_model_free(&m);
        else
            ck_assert(failed);
    }
}
END_TEST

int main(void)
{
    if (SDL_Init(0) != 0)
        return 2;
    Suite *s = suite_create("viewer");
    TCase *tc = tcase_create("model");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_model_counts);
    tcase_add_test(tc, t_model_roofs);
    tcase_add_test(tc, t_hotspots_before_label);
    tcase_add_test(tc, t_report);
    tcase_add_test(tc, t_report_diff);
    tcase_add_test(tc, t_stall_owner);
    tcase_add_test(tc, t_track_busy);
    tcase_add_test(tc, t_counters_cumulative);
    tcase_add_test(tc, t_hbm_bytes_from_counters);
    tcase_add_test(tc, t_heat_maps);
    tcase_add_test(tc, t_heat_pyramid);
    tcase_add_test(tc, t_flame);
    tcase_add_test(tc, t_range_summaries);
    suite_add_tcase(s, tc);
    tc = tcase_create("interaction");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_zoom_pan);
    tcase_add_test(tc, t_select_range);
    tcase_add_test(tc, t_search);
    tcase_add_test(tc, t_search_oom);
    tcase_add_test(tc, t_clicks);
    suite_add_tcase(s, tc);
    tc = tcase_create("pictures");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_picture_timeline);
    tcase_add_test(tc, t_picture_heat);
    tcase_add_test(tc, t_no_instructions);
    tcase_add_test(tc, t_picture_views);
    tcase_add_test(tc, t_util_odd_width);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad input");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, t_damaged);
    tcase_add_test(tc, t_load_matches_iterator);
    tcase_add_test(tc, t_alloc_fail);
    suite_add_tcase(s, tc);
    /* the trace is written once, before forking */
    if (!trace_path(fx()))
        return 2;
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", fx()->dir);
    if (system(cmd) != 0)
        failed++;
    SDL_Quit();
    return failed ? 1 : 0;
}
