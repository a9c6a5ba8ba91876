/* tests/memmodel/test_config.c — the memory config: defaults, strict
 * parsing with messages naming the key, --set, presets, dump round trip,
 * the preset files in configs/ and the docs table. */
#include <check.h>
#include <string.h>

#include "memmodel/mem.h"
#include "memmodel/mem_int.h"
#include "tests/memmodel/tmem.h"

static npu_status parse_str(const char *json, mem_config *c, npu_diag *d)
{
    cJSON *j = cJSON_Parse(json);
    ck_assert_ptr_nonnull(j);
    npu_status st = mem_config_parse(j, "machine.json: memory", c, d);
    cJSON_Delete(j);
    return st;
}

START_TEST(t_default)
{
    mem_config c;
    mem_config_default(&c);
    ck_assert_int_eq(c.hbm.data_rate_mbps, 3200);
    ck_assert_int_eq(c.hbm.stacks, 4);
    ck_assert_int_eq(c.hbm.channels, 8);
    ck_assert_int_eq(c.hbm.pseudo_channels, 2);
    ck_assert_double_eq_tol(mem_config_peak_Bps(&c) / 1e9, 1638.4, 0.01);
    ck_assert_int_eq((int)(c.l2.size_bytes >> 20), 192);
    ck_assert_int_eq(c.l2.line_bytes, 512);
    ck_assert_int_eq(mem_config_atom_bytes(&c), 32);
    ck_assert_int_eq(mem_config_validate(&c, "memory", NULL), NPU_OK);
}
END_TEST

START_TEST(t_parse_errors)
{
    mem_config c;
    npu_diag d;
    static const struct { const char *json, *msg; } cases[] = {
        { "{\"hbm\": {\"tRCDRD\": 0}}", "machine.json: memory.hbm.tRCDRD: expected integer in 1..1000" },
        { "{\"hbm\": {\"tRCDRD\": 14.5}}", "machine.json: memory.hbm.tRCDRD: expected integer in 1..1000" },
        { "{\"hbm\": {\"tRCDRD\": \"14\"}}", "machine.json: memory.hbm.tRCDRD: expected integer" },
        { "{\"hbm\": {\"tFOO\": 1}}", "machine.json: memory.hbm.tFOO: unknown key" },
        { "{\"dram\": {}}", "machine.json: memory.dram: unknown key" },
        { "{\"hbm\": 3}", "machine.json: memory.hbm: expected an object" },
        { "{\"controller\": {\"dual_cmd\": 1}}", "machine.json: memory.controller.dual_cmd: expected true or false" },
        { "{\"controller\": {\"page_policy\": \"half\"}}", "machine.json: memory.controller.page_policy: expected one of open | closed" },
        { "{\"preset\": \"hbm9\"}", "machine.json: memory.preset: unknown HBM preset" },
        { "{\"hbm\": {\"channels\": 6}}", "machine.json: memory.hbm.channels: 6 is not a power of 2" },
        { "{\"hbm\": {\"mapping\": \"c4 x\"}}", "machine.json: memory.hbm.mapping: unknown field letter 'x'" },
        { "{\"hbm\": {\"mapping\": \"c4 k2 h3 p g2 b2 r\"}}", "machine.json: memory.hbm.mapping: field 'c' has 4 bits" },
        { "{\"hbm\": {\"xor_map\": \"g0^\"}}", "machine.json: memory.hbm.xor_map: expected terms like g0^r1 or g*^r*" },
        { "{\"hbm\": {\"xor_map\": \"g5^r1\"}}", "machine.json: memory.hbm.xor_map: term 'g5^r1' at offset 0 names bit 5 of 'g', which has 2 bits (log2(memory.hbm.bankgroups))" },
        { "{\"l2\": {\"ways\": 4, \"ways\": 8}}", "machine.json: memory.l2.ways: duplicate key" },
        { "{\"l2\": {\"ways\": 4}, \"l2\": {\"ways\": 8}}", "machine.json: memory.l2: duplicate key" },
        { "{\"hbm\": {\"xor_map\": \"b1^b1\"}}", "machine.json: memory.hbm.xor_map: term 'b1^b1' at offset 0 XORs a bit with itself" },
        { "{\"hbm\": {\"mapping\": \"c4 k2 h4 p g2 b2 c1 r\"}}", "machine.json: memory.hbm.mapping: field 'h' has 4 bits, more than log2(memory.hbm.channels) = 3" },
        { "{\"l2\": {\"size_bytes\": 1000000}}", "machine.json: memory.l2.size_bytes" },
        { "{\"l2\": {\"size_bytes\": \"96Q\"}}", "machine.json: memory.l2.size_bytes: expected integer in 4096..68719476736 (a size may end in K, M, G or T), got \"96Q\"" },
        { "{\"l2\": {\"ways\": \"16\"}}", "machine.json: memory.l2.ways: expected integer in 1..64" },
        { "{\"controller\": {\"wr_low_pct\": 90, \"wr_high_pct\": 50}}", "machine.json: memory.controller.wr_low_pct" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mem_config_default(&c);
        memset(&d, 0, sizeof d);
        ck_assert_int_ne(parse_str(cases[i].json, &c, &d), NPU_OK);
        ck_assert_msg(strncmp(d.msg, cases[i].msg, strlen(cases[i].msg)) == 0,
                      "case %zu: got \"%s\", want \"%s...\"", i, d.msg, cases[i].msg);
    }
}
END_TEST

/* a size string in a file, as --set takes it */
START_TEST(t_parse_size_string)
{
    mem_config c;
    mem_config_default(&c);
    npu_diag d = { 0 };
    ck_assert_msg(parse_str("{\"l2\": {\"size_bytes\": \"96M\"}, \"ub\": {\"size_bytes\": \"192K\"}}", &c, &d) == NPU_OK,
                  "%s", d.msg);
    ck_assert_int_eq(c.l2.size_bytes, 96LL << 20);
    ck_assert_int_eq(c.ub.size_bytes, 192 << 10);
}
END_TEST

START_TEST(t_parse_presets)
{
    mem_config c;
    mem_config_default(&c);
    ck_assert_int_eq(parse_str("{\"preset\": \"hbm3\"}", &c, NULL), NPU_OK);
    ck_assert_int_eq(c.hbm.data_rate_mbps, 6400);
    ck_assert_int_eq(c.hbm.channels, 16);
    mem_config_default(&c);
    /* the preset applies first, keys on top of it whatever their order */
    ck_assert_int_eq(parse_str("{\"hbm\": {\"tCL\": 20, \"preset\": \"hbm2\"}, \"l2\": {\"ways\": 8}}", &c, NULL), NPU_OK);
    ck_assert_int_eq(c.hbm.data_rate_mbps, 2000);
    ck_assert_int_eq(c.hbm.tCL, 20);
    ck_assert_int_eq(c.l2.ways, 8);
    ck_assert_int_eq(c.l2.line_bytes, 512);        /* untouched keys keep what c held */
}
END_TEST

START_TEST(t_set)
{
    mem_config c;
    mem_config_default(&c);
    npu_diag d = { 0 };
    ck_assert_int_eq(mem_config_set(&c, "hbm.tCL", "20", &d), NPU_OK);
    ck_assert_int_eq(c.hbm.tCL, 20);
    ck_assert_int_eq(mem_config_set(&c, "controller.page_policy", "closed", &d), NPU_OK);
    ck_assert_int_eq(c.ctrl.page_policy, MEM_PAGE_CLOSED);
    ck_assert_int_eq(mem_config_set(&c, "controller.dual_cmd", "false", &d), NPU_OK);
    ck_assert_int_eq(c.ctrl.dual_cmd, 0);
    ck_assert_int_eq(mem_config_set(&c, "l2.size_bytes", "201326592", &d), NPU_OK);
    ck_assert_int_eq(mem_config_set(&c, "l2.ways", "x", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "--set memory.l2.ways: expected integer in 1..64");
    ck_assert_int_eq(mem_config_set(&c, "hbm.nope", "1", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "--set memory.hbm.nope: unknown key");
    ck_assert_int_eq(mem_config_set(&c, "preset", "hbm3e", &d), NPU_OK);
    ck_assert_int_eq(c.hbm.data_rate_mbps, 9600);
    /* keys counting bytes take binary size suffixes; other keys do not */
    ck_assert_int_eq(mem_config_set(&c, "l2.size_bytes", "96M", &d), NPU_OK);
    ck_assert_int_eq(c.l2.size_bytes, 96LL << 20);
    ck_assert_int_eq(mem_config_set(&c, "l2.size_bytes", "1GiB", &d), NPU_OK);
    ck_assert_int_eq(c.l2.size_bytes, 1LL << 30);
    ck_assert_int_eq(mem_config_set(&c, "ub.size_bytes", "256KB", &d), NPU_OK);
    ck_assert_int_eq(c.ub.size_bytes, 256 << 10);
    ck_assert_int_eq(mem_config_set(&c, "l2.line_bytes", "1k", &d), NPU_OK);
    ck_assert_int_eq(c.l2.line_bytes, 1024);
    ck_assert_int_eq(mem_config_set(&c, "l2.size_bytes", "96X", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "--set memory.l2.size_bytes: expected integer in 4096..68719476736 "
                            "(a size may end in K, M, G or T), got '96X'");
    ck_assert_int_eq(mem_config_set(&c, "l2.size_bytes", "64T", &d), NPU_EINVAL);   /* above the range */
    ck_assert_int_eq(mem_config_set(&c, "l2.size_bytes", "-1K", &d), NPU_EINVAL);
    ck_assert_int_eq(mem_config_set(&c, "l2.size_bytes", "9999999999999G", &d), NPU_EINVAL);  /* overflows */
    ck_assert_int_eq(mem_config_set(&c, "l2.ways", "4K", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "--set memory.l2.ways: expected integer in 1..64");
    ck_assert_int_eq(c.l2.size_bytes, 1LL << 30);   /* the failed sets changed nothing */
    /* mem_config_set_at names the key under the caller's prefix */
    ck_assert_int_eq(mem_config_set_at(&c, "l2.ways", "x", "memory", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "memory.l2.ways: expected integer in 1..64");
}
END_TEST

START_TEST(t_dump_roundtrip)
{
    mem_config a, b;
    mem_config_default(&a);
    ck_assert_int_eq(mem_config_set(&a, "hbm.tRP", "31", NULL), NPU_OK);
    cJSON *j = mem_config_dump(&a);
    ck_assert_ptr_nonnull(j);
    /* parse over a different starting point: every key is in the dump */
    mem_config_default(&b);
    ck_assert_int_eq(mem_config_preset(&b, "hbm3", NULL), NPU_OK);
    b.l2.ways = 3;
    npu_diag d = { 0 };
    ck_assert_int_eq(mem_config_parse(j, "dump", &b, &d), NPU_OK);
    ck_assert(memcmp(&a, &b, sizeof a) == 0);
    /* table order: hbm first, stacks its first key */
    ck_assert_str_eq(j->child->string, "hbm");
    ck_assert_str_eq(j->child->child->string, "stacks");
    cJSON_Delete(j);
}
END_TEST

/* configs/hbm*.json must say exactly what the built-in presets say */
START_TEST(t_preset_files)
{
    static const char *const names[] = { "hbm2", "hbm2e", "hbm3", "hbm3e" };
    for (int i = 0; i < 4; i++) {
        char path[64];
        snprintf(path, sizeof path, "configs/%s.json", names[i]);
        mem_config f, p;
        mem_config_default(&f);
        mem_config_default(&p);
        /* start the file's parse from another preset so every key must be there */
        ck_assert_int_eq(mem_config_preset(&f, i ? "hbm2" : "hbm3", NULL), NPU_OK);
        npu_diag d = { 0 };
        ck_assert_msg(memsim_load_config(path, &f, &d) == NPU_OK, "%s: %s", path, d.msg);
        ck_assert_int_eq(mem_config_preset(&p, names[i], NULL), NPU_OK);
        ck_assert_msg(memcmp(&f.hbm, &p.hbm, sizeof f.hbm) == 0, "%s differs from the built-in preset", path);
        ck_assert_msg(memcmp(&f.ctrl, &p.ctrl, sizeof f.ctrl) == 0, "%s controller differs", path);
    }
    /* and the peer presets load */
    static const char *const peers[] = { "configs/hbm2-dramsim3.json", "configs/hbm2-ramulator-robaracoch.json",
                                         "configs/hbm2-ramulator-mop4clxor.json" };
    for (int i = 0; i < 3; i++) {
        mem_config c;
        mem_config_default(&c);
        npu_diag d = { 0 };
        ck_assert_msg(memsim_load_config(peers[i], &c, &d) == NPU_OK, "%s: %s", peers[i], d.msg);
        ck_assert_double_eq_tol(mem_config_peak_Bps(&c) / 1e9, 256.0, 0.01);
    }
}
END_TEST

/* '*' terms: in every preset the generated mapping decodes exactly as the
 * explicit one the presets had before (c4 k2 h3 p g2 b2 c1 r and, with
 * SIDs, h4 ... s1), and it stays valid when a size changes, where an
 * explicit mapping must be rewritten with it. */
static void build(const mem_hbm_cfg *h, const char *mapping, mem_map *m)
{
    mem_hbm_cfg x = *h;
    snprintf(x.mapping, sizeof x.mapping, "%s", mapping);
    npu_diag d = { 0 };
    ck_assert_msg(mem_map_build(&x, m, "memory", &d) == NPU_OK, "%s: %s", mapping, d.msg);
}

static const char *map_err(const mem_hbm_cfg *h, const char *mapping)
{
    static npu_diag d;
    mem_hbm_cfg x = *h;
    mem_map m;
    snprintf(x.mapping, sizeof x.mapping, "%s", mapping);
    memset(&d, 0, sizeof d);
    ck_assert_msg(mem_map_build(&x, &m, "memory", &d) != NPU_OK, "%s: accepted", mapping);
    return d.msg;
}

START_TEST(t_mapping_star)
{
    static const struct { const char *preset, *explicit_map; } cases[] = {
        { "hbm2", "c4 k2 h3 p g2 b2 c1 r" }, { "hbm2e", "c4 k2 h3 p g2 b2 c1 r" },
        { "hbm3", "c4 k2 h4 p s1 g2 b2 c1 r" }, { "hbm3e", "c4 k2 h4 p s1 g2 b2 c1 r" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mem_config c;
        mem_config_default(&c);
        ck_assert_int_eq(mem_config_preset(&c, cases[i].preset, NULL), NPU_OK);
        ck_assert_str_eq(c.hbm.mapping, "c4 k* h* p* s* g* b* c* r*");
        mem_map a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        ck_assert_str_eq(c.hbm.xor_map, "g*^r* b*^r*");
        build(&c.hbm, c.hbm.mapping, &a);
        mem_hbm_cfg old = c.hbm;
        snprintf(old.xor_map, sizeof old.xor_map, "g0^r0 g1^r1 b0^r2 b1^r3");
        build(&old, cases[i].explicit_map, &b);
        ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "%s: the '*' mapping decodes differently", cases[i].preset);
    }
    mem_config c;
    mem_config_default(&c);
    /* sizes changed: the '*' fields follow, the explicit ones do not */
    mem_hbm_cfg h = c.hbm;
    h.stacks = 2;
    h.channels = 16;
    h.pseudo_channels = 1;
    h.rows = 1 << 12;
    mem_map m;
    build(&h, h.mapping, &m);
    ck_assert_int_eq(m.width[MF_K], 1);
    ck_assert_int_eq(m.width[MF_H], 4);
    ck_assert_int_eq(m.width[MF_P], 0);
    ck_assert_int_eq(m.width[MF_R], 12);
    /* the line's 16 atoms stay in one row: the 4 lowest bits are column bits */
    for (int i = 0; i < 4; i++) ck_assert_int_eq(m.field[i], MF_C);
    ck_assert_int_eq(m.field[4], MF_K);
    ck_assert_int_eq(m.field[5], MF_H);
    /* a '*' takes what the counts leave wherever they are: c* before c4 */
    mem_map m2;
    build(&c.hbm, "c* k* h* p* g* b* c4 r", &m2);
    ck_assert_int_eq(m2.width[MF_C], m.width[MF_C]);
    ck_assert_int_eq(m2.field[m2.nbits - 1], MF_R);
    /* the XOR terms follow too: 2 bank groups of 2 banks: g0^r0 b0^r1 */
    mem_hbm_cfg x = c.hbm;
    x.bankgroups = 2;
    x.banks = 2;
    mem_map mx;
    build(&x, x.mapping, &mx);
    ck_assert_int_eq(mx.nxor, 2);
    ck_assert(mx.xt[0] == MF_G && mx.xti[0] == 0 && mx.xs[0] == MF_R && mx.xsi[0] == 0);
    ck_assert(mx.xt[1] == MF_B && mx.xti[1] == 0 && mx.xs[1] == MF_R && mx.xsi[1] == 1);
    const char *e = map_err(&h, "c4 k2 h3 p g2 b2 c1 r");
    ck_assert_msg(strstr(e, "memory.hbm.mapping: field 'k' has 2 bits, more than log2(memory.hbm.stacks) = 1 "
                            "(a term like k* takes whatever the field has)"), "%s", e);
    e = map_err(&c.hbm, "c4 h* k* h* p g2 b2 c* r");
    ck_assert_msg(strstr(e, "memory.hbm.mapping: field 'h' has a second '*' at offset 9"), "%s", e);
    mem_hbm_cfg y = c.hbm;
    snprintf(y.xor_map, sizeof y.xor_map, "g*^b*");   /* 2 bits of b from bit 0: fits; again: does not */
    build(&y, y.mapping, &mx);
    snprintf(y.xor_map, sizeof y.xor_map, "g*^b* g*^b*");
    e = map_err(&y, y.mapping);
    ck_assert_msg(strstr(e, "term 'g*^b*' at offset 6 needs 2 bits of 'b' from bit 2, which has 2"), "%s", e);
    snprintf(y.xor_map, sizeof y.xor_map, "g*^g*");
    e = map_err(&y, y.mapping);
    ck_assert_msg(strstr(e, "XORs a field with itself"), "%s", e);
    snprintf(y.xor_map, sizeof y.xor_map, "g*^r2");
    e = map_err(&y, y.mapping);
    ck_assert_msg(strstr(e, "expected terms like g0^r1 or g*^r* at offset 0"), "%s", e);
    e = map_err(&c.hbm, "c4 k2 h2 p g2 b2 c* r");
    ck_assert_msg(strstr(e, "field 'h' has 2 bits, log2(memory.hbm.channels) = 3 needed (a term like h* takes"), "%s", e);
}
END_TEST

START_TEST(t_docs_table)
{
    char *t = mem_config_doc();
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(strstr(t, "| `hbm.tRCDRD` | integer | 1..1000 |"));
    uint8_t *doc;
    size_t len;
    npu_diag d = { 0 };
    ck_assert_msg(npu_read_file("docs/memmodel.md", 0, 0, &doc, &len, &d) == NPU_OK, "%s", d.msg);
    ck_assert_msg(strstr((char *)doc, t) != NULL,
                  "docs/memmodel.md: the key table is stale (regenerate with npumemsim --doc-keys)");
    npu_free(doc);
    npu_free(t);
}
END_TEST

START_TEST(t_trace_errors)
{
    memsim_trace t;
    npu_diag d = { 0 };
    const char *ok = "0x0 READ 0\n\n0x40 WRITE 5\n";
    ck_assert_int_eq(memsim_parse_trace("a.trace", ok, strlen(ok), &t, &d), NPU_OK);
    ck_assert_uint_eq(t.n, 2);
    ck_assert_int_eq(t.req[1].is_write, 1);
    ck_assert_uint_eq(t.req[1].cycle, 5);
    npu_free(t.req);
    const char *bad1 = "0x0 READ 0\n0x40 FETCH 5\n";
    ck_assert_int_eq(memsim_parse_trace("a.trace", bad1, strlen(bad1), &t, &d), NPU_EFORMAT);
    ck_assert_str_eq(d.msg, "a.trace:2: expected READ or WRITE, got \"FETCH\"");
    const char *bad2 = "0x0 READ 0\n0x0 READ 1\n40 READ 2\n";
    ck_assert_int_eq(memsim_parse_trace("b.trace", bad2, strlen(bad2), &t, &d), NPU_EFORMAT);
    ck_assert_str_eq(d.msg, "b.trace:3: expected \"0x<hex address> READ|WRITE <cycle>\"");
    const char *bad3 = "0x0 READ 0 extra\n";
    ck_assert_int_eq(memsim_parse_trace("c.trace", bad3, strlen(bad3), &t, &d), NPU_EFORMAT);
    /* the command: bad input is exit 2 */
    char *argv1[] = { "memsim", "--pattern", "zigzag", "--requests", "5", NULL };
    ck_assert_int_eq(mem_cmd_memsim(5, argv1), 2);
    char *argv2[] = { "memsim", "/nonexistent/trace", NULL };
    ck_assert_int_eq(mem_cmd_memsim(2, argv2), 2);
    char *argv3[] = { "memsim", "--set", "hbm.tCL=0", "--pattern", "stream", "--requests", "5", NULL };
    ck_assert_int_eq(mem_cmd_memsim(7, argv3), 2);
}
END_TEST

Suite *tmem_config_suite(void)
{
    Suite *s = suite_create("memmodel-config");
    TCase *tc = tcase_create("config");
    tcase_add_test(tc, t_default);
    tcase_add_test(tc, t_parse_errors);
    tcase_add_test(tc, t_parse_presets);
    tcase_add_test(tc, t_parse_size_string);
    tcase_add_test(tc, t_set);
    tcase_add_test(tc, t_dump_roundtrip);
    tcase_add_test(tc, t_preset_files);
    tcase_add_test(tc, t_mapping_star);
    tcase_add_test(tc, t_docs_table);
    tcase_add_test(tc, t_trace_errors);
    suite_add_tcase(s, tc);
    return s;
}
