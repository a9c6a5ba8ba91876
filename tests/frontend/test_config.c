/* test_config.c — the machine config: table, defaults, strict parsing,
 * --set, validation, dump round trip, configs/default.json. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/config.h"

Suite *config_suite(void);

/* Load text on top of the defaults; returns the status, message in d. */
static npu_status load(cfg_machine *m, const char *text, npu_diag *d)
{
    npu_diag_clear(d);
    return cfg_load_json_text(m, text, strlen(text), "x.json", d);
}

#define ASSERT_MSG(d, want) \
    ck_assert_msg(strstr((d).msg, want) != NULL, "message \"%s\" lacks \"%s\"", (d).msg, want)

static const char *root_path(const char *rel, char *buf, size_t n)
{
    const char *root = getenv("NPU_ROOT");
    snprintf(buf, n, "%s/%s", root && *root ? root : ".", rel);
    return buf;
}

/* ---- the table -------------------------------------------------------------- */

START_TEST(table_is_sane)
{
    size_t n, ns;
    const cfg_key_info *k = cfg_keys(&n);
    const cfg_section_info *sec = cfg_sections(&ns);
    ck_assert_uint_gt(n, 100);
    ck_assert_uint_gt(ns, 5);
    for (size_t i = 0; i < n; i++) {
        ck_assert_msg(k[i].doc && *k[i].doc, "%s has no doc", k[i].key);
        ck_assert_ptr_eq(cfg_key_find(k[i].key), &k[i]); /* unique */
        ck_assert_msg(k[i].min <= k[i].max || k[i].type == CFG_T_ENUM, "%s range", k[i].key);
        /* JSON objects stay together: once a key leaves an object path,
         * no later key comes back into it (the dump relies on this) */
        const char *dot = strrchr(k[i].key, '.');
        if (!dot) continue;
        size_t plen = (size_t)(dot - k[i].key);
        for (size_t j = 0; j + 1 < i; j++) {
            if (strncmp(k[j].key, k[i].key, plen) != 0 || k[j].key[plen] != '.') continue;
            /* every key between j and i must also lie under the prefix */
            for (size_t t = j + 1; t < i; t++)
                ck_assert_msg(strncmp(k[t].key, k[i].key, plen) == 0 && k[t].key[plen] == '.',
                              "%s splits the object of %s", k[t].key, k[i].key);
            break;
        }
    }
    for (size_t i = 0; i < ns; i++) ck_assert_ptr_nonnull(sec[i].doc);
    ck_assert_ptr_null(cfg_key_find("core.ub"));
    ck_assert_str_eq(cfg_key_section(cfg_key_find("core.ub.banks"))->name, "core.ub");
    ck_assert_str_eq(cfg_key_section(cfg_key_find("vector.cpr.exp.f16"))->name, "vector.cpr");
    ck_assert_ptr_null(cfg_key_section(cfg_key_find("name")));
    /* enum names line up with the key rows */
    for (int p = 0; p < CFG_PATH__COUNT; p++) {
        char key[64];
        snprintf(key, sizeof key, "path.%s.width", cfg_path_name(p));
        ck_assert_msg(cfg_key_find(key) != NULL, "%s", key);
        ck_assert_int_eq(cfg_path_from_name(cfg_path_name(p)), p);
    }
    for (int v = 0; v < CFG_VOP__COUNT; v++) {
        char key[64];
        snprintf(key, sizeof key, "vector.cpr.%s.f32", cfg_vop_name(v));
        ck_assert_msg(cfg_key_find(key) != NULL, "%s", key);
        ck_assert_int_eq(cfg_vop_from_name(cfg_vop_name(v)), v);
    }
    ck_assert_str_eq(cfg_path_name(CFG_PATH_L1_L0A), "l1_l0a");
    ck_assert_str_eq(cfg_vop_name(CFG_VOP_EXP), "exp");
    ck_assert_str_eq(cfg_path_name(-1), "?");
    ck_assert_int_eq(cfg_vop_from_name("nope"), -1);
}
END_TEST

/* Every table default reads back through --set and is within range. */
START_TEST(table_defaults_parse)
{
    size_t n;
    const cfg_key_info *k = cfg_keys(&n);
    cfg_machine m;
    cfg_default(&m);
    npu_diag d;
    for (size_t i = 0; i < n; i++) {
        char buf[200];
        ck_assert_int_eq(cfg_get(&m, k[i].key, buf, sizeof buf, &d), NPU_OK);
        ck_assert_msg(cfg_set(&m, k[i].key, buf, &d) == NPU_OK, "%s=%s: %s", k[i].key, buf,
                      d.msg);
        ck_assert_msg(cfg_set(&m, k[i].key, k[i].def, &d) == NPU_OK, "%s", d.msg);
    }
    ck_assert_int_eq(cfg_validate(&m, &d), NPU_OK);
}
END_TEST

/* The embedded default is DESIGN.md's machine. */
START_TEST(defaults_match_design)
{
    cfg_machine m;
    cfg_default(&m);
    ck_assert_uint_eq(m.chip.cores, 24);
    ck_assert(fabs(m.chip.clock_ghz - 1.8) < 1e-12);
    ck_assert_uint_eq(m.core.l1.size, 512 * 1024);
    ck_assert_uint_eq(m.core.l0a.size, 64 * 1024);
    ck_assert_uint_eq(m.core.l0b.size, 64 * 1024);
    ck_assert_uint_eq(m.core.l0c.size, 128 * 1024);
    ck_assert_uint_eq(m.core.ub.size, 192 * 1024);
    ck_assert_uint_eq(m.core.ub.banks, 48);
    ck_assert_uint_eq(m.core.ub.bank_size, 4096);
    ck_assert_uint_eq(m.core.ub.bank_groups, 16);
    ck_assert_uint_eq(m.core.sdata.size, 16 * 1024);
    ck_assert_uint_eq(m.core.ub.align, 32);
    ck_assert_uint_eq(m.core.l1.align, 32);
    ck_assert_uint_eq(m.core.l0a.align, 512);
    ck_assert_uint_eq(m.core.l0b.align, 512);
    ck_assert_uint_eq(m.core.l0c.align, 64);
    /* cube: MACs per cycle = m*k*n / cycles_per_fractal */
    const struct { isa_dtype dt; unsigned m, k, n; } cube[] = {
        { ISA_DT_F16, 16, 16, 16 }, { ISA_DT_BF16, 16, 16, 16 }, { ISA_DT_S8, 16, 32, 16 },
        { ISA_DT_E4M3, 16, 32, 16 }, { ISA_DT_E5M2, 16, 32, 16 }, { ISA_DT_F32, 16, 8, 16 },
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(cube); i++) {
        const cfg_cube_dt *c = &m.cube.dt[cube[i].dt];
        ck_assert_uint_eq(c->m, cube[i].m);
        ck_assert_uint_eq(c->k, cube[i].k);
        ck_assert_uint_eq(c->n, cube[i].n);
        ck_assert(c->cycles_per_fractal == 1.0);
    }
    ck_assert_uint_eq(m.cube.dt[ISA_DT_S32].m, 0); /* no int32 cube mode */
    ck_assert_uint_eq(m.vector.repeat_bytes, 256);
    ck_assert_uint_eq(m.vector.block_bytes, 32);
    /* path widths are the effective rates of one move fitted to the 910B1
     * measurements (docs/fidelity.md), not DESIGN.md's peak figures: the
     * on-chip MTE1 paths keep the peak, GM paths sustain less, UB -> UB more */
    ck_assert_uint_eq(m.path[CFG_PATH_GM_L1].width, 144);
    ck_assert_uint_eq(m.path[CFG_PATH_GM_UB].width, 58);
    ck_assert_uint_eq(m.path[CFG_PATH_UB_GM].width, 82);
    ck_assert_uint_eq(m.path[CFG_PATH_L1_L0A].width, 256);
    ck_assert_uint_eq(m.path[CFG_PATH_L1_L0B].width, 128);
    ck_assert_uint_eq(m.path[CFG_PATH_L0C_GM].width, 118);
    ck_assert_uint_eq(m.path[CFG_PATH_UB_UB].width, 256);
    for (int p = 0; p < CFG_PATH__COUNT; p++) ck_assert_uint_gt(m.path[p].width, 0);
    for (int p = CFG_PIPE_V; p < CFG_PIPE__COUNT; p++) ck_assert_uint_gt(m.pipe[p].queue_depth, 0);
    ck_assert(m.vector.cpr[CFG_VOP_BINARY][ISA_DT_F32] == 2.0);
    ck_assert(m.vector.cpr[CFG_VOP_EXP][ISA_DT_F16] == 4.0);
    ck_assert(m.vector.cpr[CFG_VOP_EXP][ISA_DT_S8] == 0.0);
    /* conversion pairs: f32 -> f16 has its own rate, the rest use the class */
    ck_assert(m.vector.cast_to[ISA_DT_F16][ISA_DT_F32] == 0.5);
    ck_assert(m.vector.cast_to[ISA_DT_F32][ISA_DT_F16] == 0.0);
    ck_assert_int_eq(m.timing.memory_model, CFG_MEM_HBM);
    ck_assert_uint_eq(m.timing.max_cycles, 1000000000u);
    ck_assert_int_eq(m.vector.model_bank_conflicts, 1);
    ck_assert_str_eq(m.name, "a2-default");
    npu_diag d;
    ck_assert_int_eq(cfg_validate(&m, &d), NPU_OK);
}
END_TEST

/* ---- dump ------------------------------------------------------------------- */

START_TEST(dump_roundtrip)
{
    cfg_machine m, m2;
    npu_diag d;
    cfg_default(&m);
    ck_assert_int_eq(cfg_set(&m, "chip.cores", "7", &d), NPU_OK);
    ck_assert_int_eq(cfg_set(&m, "chip.clock_ghz", "1.2345678901234567", &d), NPU_OK);
    ck_assert_int_eq(cfg_set(&m, "name", "quote\" and \\ back\tslash", &d), NPU_OK);
    ck_assert_int_eq(cfg_set(&m, "timing.memory_model", "fixed", &d), NPU_OK);
    ck_assert_int_eq(cfg_set(&m, "vector.model_bank_conflicts", "false", &d), NPU_OK);
    ck_assert_int_eq(cfg_set(&m, "vector.cpr.exp.f32", "0.1", &d), NPU_OK);
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "1T", &d), NPU_OK);
    char *a = cfg_dump_json(&m);
    ck_assert_ptr_nonnull(a);
    ck_assert_msg(load(&m2, a, &d) == NPU_OK, "%s", d.msg);
    ck_assert_str_eq(m2.name, m.name);
    ck_assert(m2.chip.clock_ghz == m.chip.clock_ghz);
    ck_assert_uint_eq(m2.core.l1.size, 1ull << 40);
    ck_assert_int_eq(m2.timing.memory_model, CFG_MEM_FIXED);
    ck_assert_int_eq(m2.vector.model_bank_conflicts, 0);
    char *b = cfg_dump_json(&m2);
    ck_assert_str_eq(a, b);
    ck_assert_int_eq(memcmp(&m, &m2, sizeof m), 0);
    /* the dump is in table order: version first, memory last */
    ck_assert(strncmp(a, "{\n  \"version\": 1,\n  \"name\": ", 27) == 0);
    ck_assert_ptr_nonnull(strstr(a, "\"memory\": "));
    ck_assert(strstr(a, "\"chip\"") < strstr(a, "\"core\""));
    ck_assert(strstr(a, "\"timing\"") < strstr(a, "\"memory\""));
    npu_free(a);
    npu_free(b);
}
END_TEST

START_TEST(default_json_is_the_dump)
{
    char path[4096];
    root_path("configs/default.json", path, sizeof path);
    uint8_t *data;
    size_t len;
    npu_diag d;
    ck_assert_msg(npu_read_file(path, 0, 0, &data, &len, &d) == NPU_OK, "%s", d.msg);
    cfg_machine m;
    cfg_default(&m);
    char *dump = cfg_dump_json(&m);
    ck_assert_ptr_nonnull(dump);
    ck_assert_msg(strcmp((char *)data, dump) == 0,
                  "configs/default.json differs from the embedded default; regenerate it "
                  "with `cfg-docgen --default-json > configs/default.json`");
    cfg_machine m2;
    ck_assert_int_eq(cfg_load_file(&m2, path, &d), NPU_OK);
    ck_assert_int_eq(memcmp(&m, &m2, sizeof m), 0);
    npu_free(dump);
    npu_free(data);
}
END_TEST

/* The memory files (configs/hbm*.json) are machine configs too: the
 * default machine with that memory, as --set memory.preset gives it */
START_TEST(memory_files_load)
{
    static const char *const presets[] = { "hbm2", "hbm2e", "hbm3", "hbm3e" };
    for (size_t i = 0; i < NPU_ARRAY_LEN(presets); i++) {
        char rel[64], path[4096];
        snprintf(rel, sizeof rel, "configs/%s.json", presets[i]);
        root_path(rel, path, sizeof path);
        cfg_machine m, want;
        npu_diag d;
        ck_assert_msg(cfg_load_file(&m, path, &d) == NPU_OK, "%s", d.msg);
        cfg_default(&want);
        ck_assert_int_eq(cfg_set(&want, "memory.preset", presets[i], &d), NPU_OK);
        ck_assert_msg(memcmp(&m.mem.hbm, &want.mem.hbm, sizeof m.mem.hbm) == 0, "%s", rel);
        ck_assert_int_eq(memcmp(&m.core, &want.core, sizeof m.core), 0);
    }
    /* without "version", such a file is named for what it is */
    static const char text[] = "{\"_source\": \"x\", \"memory\": {\"l2\": {\"ways\": 4}}}";
    cfg_machine m;
    npu_diag d;
    ck_assert_int_ne(cfg_load_json_text(&m, text, sizeof text - 1, "m.json", &d), NPU_OK);
    ck_assert_str_eq(d.msg, "m.json: version: missing (this build reads version 1); a file with only a "
                            "\"memory\" object is a machine config (the default machine with that memory) "
                            "once it says \"version\": 1");
}
END_TEST

START_TEST(small_json_loads)
{
    char path[4096];
    root_path("configs/small.json", path, sizeof path);
    cfg_machine m, def;
    npu_diag d;
    cfg_default(&def);
    ck_assert_msg(cfg_load_file(&m, path, &d) == NPU_OK, "%s", d.msg);
    ck_assert_uint_eq(m.chip.cores, 2);
    ck_assert_int_lt(m.mem.hbm.stacks, def.mem.hbm.stacks);
    ck_assert_int_lt(m.mem.l2.size_bytes, def.mem.l2.size_bytes);
    /* same core as the default */
    ck_assert_int_eq(memcmp(&m.core, &def.core, sizeof m.core), 0);
    ck_assert_int_eq(memcmp(&m.cube, &def.cube, sizeof m.cube), 0);
    ck_assert_int_eq(memcmp(&m.vector, &def.vector, sizeof m.vector), 0);
}
END_TEST

/* ---- parse errors ---------------------------------------------------------- */

START_TEST(err_range)
{
    cfg_machine m;
    npu_diag d;
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"ub\":{\"banks\":0}}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: core.ub.banks: expected an integer in 1..1024, got 0");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"chip\":{\"cores\":2.5}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: chip.cores: expected an integer in 1..1024, got 2.5");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"chip\":{\"clock_ghz\":1000}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: chip.clock_ghz: expected a number in 0.001..100, got 1000");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"chip\":{\"cores\":-1}}", &d), NPU_EINVAL);
    ASSERT_MSG(d, "chip.cores: expected an integer in 1..1024, got -1");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"l1\":{\"size\":1e300}}}", &d), NPU_EINVAL);
    ASSERT_MSG(d, "core.l1.size: expected a size in bytes in 32..1099511627776");
    /* on error the machine is the default, not half-applied */
    cfg_machine def;
    cfg_default(&def);
    ck_assert_int_eq(load(&m, "{\"version\":1,\"chip\":{\"cores\":3,\"clock_ghz\":0}}", &d),
                     NPU_EINVAL);
    ck_assert_int_eq(memcmp(&m, &def, sizeof m), 0);
}
END_TEST

START_TEST(err_type)
{
    cfg_machine m;
    npu_diag d;
    ck_assert_int_eq(load(&m, "{\"version\":1,\"chip\":{\"cores\":\"24\"}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg,
                     "x.json: chip.cores: expected an integer in 1..1024, got the string \"24\"");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"vector\":{\"model_bank_conflicts\":1}}", &d),
                     NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: vector.model_bank_conflicts: expected true or false, got 1");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"timing\":{\"memory_model\":\"dram\"}}", &d),
                     NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: timing.memory_model: expected one of \"hbm\", \"fixed\", "
                            "got the string \"dram\"");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"chip\":5}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: chip: expected an object, got 5");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"chip\":{\"cores\":{}}}", &d), NPU_EINVAL);
    ASSERT_MSG(d, "chip.cores: expected an integer in 1..1024, got an object");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"chip\":{\"cores\":null}}", &d), NPU_EINVAL);
    ASSERT_MSG(d, "got null");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"name\":[1]}", &d), NPU_EINVAL);
    ASSERT_MSG(d, "name: expected a string of at most 63 characters, got an array");
    ck_assert_int_eq(load(&m, "[1,2]", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: expected a JSON object at the top");
    /* sizes may be strings with a suffix, other integers may not */
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"l1\":{\"size\":\"1M\"}}}", &d), NPU_OK);
    ck_assert_uint_eq(m.core.l1.size, 1u << 20);
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"l1\":{\"size\":\"1Q\"}}}", &d),
                     NPU_EINVAL);
    ASSERT_MSG(d, "x.json: core.l1.size: bad size '1Q'");
}
END_TEST

START_TEST(err_unknown_key)
{
    cfg_machine m;
    npu_diag d;
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"ub\":{\"bankz\":4}}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: core.ub.bankz: unknown config key (did you mean core.ub.banks?)");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"_note\":\"x\",\"chip\":{\"_why\":[1],\"cores\":3}}", &d),
                     NPU_OK); /* comments */
    ck_assert_uint_eq(m.chip.cores, 3);
    ck_assert_int_eq(load(&m, "{\"version\":1,\"frobnicate\":true}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: frobnicate: unknown config key");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"ub.banks\":4}}", &d), NPU_EINVAL);
    ASSERT_MSG(d, "core.ub.banks: unknown config key");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"chip\":{\"cores\":2,\"cores\":3}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: chip.cores: duplicate key");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"memory\":5}", &d), NPU_EINVAL);
    ASSERT_MSG(d, "memory");
}
END_TEST

START_TEST(err_version)
{
    cfg_machine m;
    npu_diag d;
    ck_assert_int_eq(load(&m, "{\"chip\":{\"cores\":2}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: version: missing (this build reads version 1)");
    ck_assert_int_eq(load(&m, "{\"version\":2}", &d), NPU_EUNSUPP);
    ck_assert_str_eq(d.msg, "x.json: version: unsupported version 2 (this build reads version 1)");
    ck_assert_int_eq(load(&m, "{\"version\":\"1\"}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: version: expected an integer, got the string \"1\"");
    ck_assert_int_eq(load(&m, "{\"version\":1}", &d), NPU_OK);
}
END_TEST

START_TEST(err_syntax)
{
    cfg_machine m;
    npu_diag d;
    ck_assert_int_eq(load(&m, "{\n  \"version\": 1,\n  \"chip\": {\n    \"cores\": 24,\n  }\n}\n", &d),
                     NPU_EFORMAT);
    ASSERT_MSG(d, "x.json:5:");
    ASSERT_MSG(d, "JSON syntax error");
    ck_assert_int_eq(load(&m, "{\"version\": 1} xyz", &d), NPU_EFORMAT);
    ck_assert_str_eq(d.msg, "x.json:1:16: JSON syntax error (trailing text after the value) at 'xyz'");
    ck_assert_int_eq(load(&m, "", &d), NPU_EFORMAT);
    ASSERT_MSG(d, "x.json:1:1: JSON syntax error");
    ck_assert_int_eq(load(&m, "{\"version\": 1,\n\"chip\": {", &d), NPU_EFORMAT);
    ASSERT_MSG(d, "x.json:2:");
    /* NUL bytes inside the given length do not crash the parser */
    ck_assert_int_ne(cfg_load_json_text(&m, "{\"v\0\":1}", 8, "n.json", &d), NPU_OK);
}
END_TEST

START_TEST(err_file)
{
    cfg_machine m;
    npu_diag d;
    ck_assert_int_ne(cfg_load_file(&m, "/nonexistent/dir/x.json", &d), NPU_OK);
    ASSERT_MSG(d, "/nonexistent/dir/x.json");
}
END_TEST

/* ---- --set ------------------------------------------------------------------ */

START_TEST(set_values)
{
    cfg_machine m;
    npu_diag d;
    cfg_default(&m);
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "1048576", &d), NPU_OK);
    ck_assert_uint_eq(m.core.l1.size, 1048576);
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "512K", &d), NPU_OK);
    ck_assert_uint_eq(m.core.l1.size, 512 * 1024);
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "2MiB", &d), NPU_OK);
    ck_assert_uint_eq(m.core.l1.size, 2 << 20);
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "1g", &d), NPU_OK);
    ck_assert_uint_eq(m.core.l1.size, 1u << 30);
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "0x8000", &d), NPU_OK);
    ck_assert_uint_eq(m.core.l1.size, 0x8000);
    ck_assert_int_eq(cfg_set_kv(&m, "chip.cores=3", &d), NPU_OK);
    ck_assert_uint_eq(m.chip.cores, 3);
    ck_assert_int_eq(cfg_set(&m, "chip.clock_ghz", "2.5e0", &d), NPU_OK);
    ck_assert(m.chip.clock_ghz == 2.5);
    ck_assert_int_eq(cfg_set(&m, "timing.memory_model", "fixed", &d), NPU_OK);
    ck_assert_int_eq(m.timing.memory_model, CFG_MEM_FIXED);
    ck_assert_int_eq(cfg_set(&m, "vector.model_bank_conflicts", "off", &d), NPU_OK);
    ck_assert_int_eq(m.vector.model_bank_conflicts, 0);
    ck_assert_int_eq(cfg_set(&m, "pipe.mte2.queue_depth", "4", &d), NPU_OK);
    ck_assert_uint_eq(m.pipe[CFG_PIPE_MTE2].queue_depth, 4);
    ck_assert_int_eq(cfg_set(&m, "path.gm_l1.latency", "77", &d), NPU_OK);
    ck_assert_uint_eq(m.path[CFG_PATH_GM_L1].latency, 77);
    ck_assert_int_eq(cfg_set(&m, "cube.s8.cycles_per_fractal", "0.5", &d), NPU_OK);
    ck_assert(m.cube.dt[ISA_DT_S8].cycles_per_fractal == 0.5);
    char buf[64];
    ck_assert_int_eq(cfg_get(&m, "core.l1.size", buf, sizeof buf, &d), NPU_OK);
    ck_assert_str_eq(buf, "32768");
    ck_assert_int_eq(cfg_get(&m, "timing.memory_model", buf, sizeof buf, &d), NPU_OK);
    ck_assert_str_eq(buf, "fixed");
}
END_TEST

START_TEST(set_errors)
{
    cfg_machine m, def;
    npu_diag d;
    cfg_default(&m);
    cfg_default(&def);
    ck_assert_int_eq(cfg_set(&m, "core.l1.siz", "1M", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "core.l1.siz: unknown config key (did you mean core.l1.size?)");
    ck_assert_int_eq(cfg_set_kv(&m, "core.l1.siz=1M", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg,
                     "--set core.l1.siz=1M: core.l1.siz: unknown config key (did you mean core.l1.size?)");
    /* too far for an edit, but sharing a prefix past the first dot: the keys under it */
    ck_assert_int_eq(cfg_set(&m, "core.l1_bytes", "1M", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "core.l1_bytes: unknown config key (did you mean one of core.l1.size, core.l1.align?)");
    ck_assert_int_eq(cfg_set(&m, "core.qqq", "1", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "core.qqq: unknown config key");
    /* the memory keys, under memory. (memmodel/mem_config.c) */
    ck_assert_int_eq(cfg_set(&m, "memory.l2.size", "1M", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "memory.l2.size: unknown key (did you mean memory.l2.size_bytes?)");
    ck_assert_int_eq(cfg_set(&m, "memory.hbm.tcl", "14", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "memory.hbm.tcl: unknown key (did you mean memory.hbm.tCL?)");
    {
        static const char js[] = "{\"version\":1,\"memory\":{\"l2\":{\"sise_bytes\":5}}}";
        cfg_machine f;
        ck_assert_int_eq(cfg_load_json_text(&f, js, sizeof js - 1, "c.json", &d), NPU_EINVAL);
        ck_assert_str_eq(d.msg, "c.json: memory.l2.sise_bytes: unknown key (did you mean memory.l2.size_bytes?)");
    }
    ck_assert_int_eq(cfg_set(&m, "memory.hbm.frobnicate", "1", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "memory.hbm.frobnicate: unknown key");
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "1Q", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "core.l1.size: bad size '1Q' (expected an integer with an optional "
                            "K, M, G or T suffix)");
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "1KX", &d), NPU_EINVAL);
    ASSERT_MSG(d, "bad size '1KX'");
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "", &d), NPU_EINVAL);
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "-5", &d), NPU_EINVAL);
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "99999999999999999999999", &d), NPU_EINVAL);
    ASSERT_MSG(d, "expected a size in bytes in 32..1099511627776");
    ck_assert_int_eq(cfg_set(&m, "core.l1.size", "16", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "core.l1.size: expected a size in bytes in 32..1099511627776, got '16'");
    ck_assert_int_eq(cfg_set(&m, "chip.cores", "4K", &d), NPU_EINVAL); /* no suffix: not a size */
    ck_assert_str_eq(d.msg, "chip.cores: expected an integer in 1..1024, got '4K'");
    ck_assert_int_eq(cfg_set(&m, "chip.clock_ghz", "fast", &d), NPU_EINVAL);
    ck_assert_int_eq(cfg_set(&m, "chip.clock_ghz", "nan", &d), NPU_EINVAL);
    ck_assert_int_eq(cfg_set(&m, "chip.clock_ghz", "1.5x", &d), NPU_EINVAL);
    ck_assert_int_eq(cfg_set(&m, "vector.model_bank_conflicts", "maybe", &d), NPU_EINVAL);
    ck_assert_int_eq(cfg_set(&m, "timing.memory_model", "HBM", &d), NPU_EINVAL);
    ck_assert_int_eq(cfg_set(&m, "name", "0123456789012345678901234567890123456789012345678901234567890123",
                             &d), NPU_EINVAL);
    ck_assert_int_eq(cfg_set_kv(&m, "chip.cores", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "--set chip.cores: expected KEY=VALUE");
    ck_assert_int_eq(cfg_set_kv(&m, "=3", &d), NPU_EINVAL);
    ck_assert_int_eq(cfg_set(&m, "memory.nonexistent_key", "1", &d), NPU_EINVAL);
    /* failed sets change nothing */
    ck_assert_int_eq(memcmp(&m, &def, sizeof m), 0);
}
END_TEST

/* ---- validation ------------------------------------------------------------ */

START_TEST(validate_cross_fields)
{
    cfg_machine m;
    npu_diag d;
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"ub\":{\"size\":\"128K\"}}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: core.ub.size: must equal core.ub.banks x core.ub.bank_size "
                            "(48 x 4096 = 196608), got 131072");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"ub\":{\"size\":\"128K\",\"banks\":32}}}", &d),
                     NPU_OK);
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"ub\":{\"bank_groups\":5}}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: core.ub.bank_groups: must divide core.ub.banks (48), got 5");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"l0a\":{\"align\":48}}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: core.l0a.align: must be a power of two, got 48");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"core\":{\"l0c\":{\"size\":1000}}}", &d), NPU_EINVAL);
    ck_assert_str_eq(d.msg, "x.json: core.l0c.size: must be a multiple of core.l0c.align (64), got 1000");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"vector\":{\"block_bytes\":24}}", &d), NPU_EINVAL);
    ASSERT_MSG(d, "vector.repeat_bytes: must be a multiple of vector.block_bytes (24)");
    cfg_default(&m);
    m.core.ub.bank_size = 2048;
    ck_assert_int_eq(cfg_validate(&m, &d), NPU_EINVAL);
    ASSERT_MSG(d, "core.ub.size");
}
END_TEST

/* ---- the memory object (memmodel's keys) ------------------------------------ */

START_TEST(memory_delegation)
{
    cfg_machine m, def;
    npu_diag d;
    cfg_default(&def);
    ck_assert_int_eq(load(&m, "{\"version\":1,\"memory\":{\"hbm\":{\"tCLL\":3}}}", &d), NPU_EINVAL);
    ASSERT_MSG(d, "x.json: memory.hbm.tCLL: unknown key");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"memory\":{\"l2\":{\"ways\":16,\"line_bytes\":500}}}", &d),
                     NPU_EINVAL);
    ASSERT_MSG(d, "x.json: memory.l2.line_bytes");
    ck_assert_int_eq(load(&m, "{\"version\":1,\"memory\":{\"hbm\":{\"tCL\":30}}}", &d), NPU_OK);
    ck_assert_int_eq(m.mem.hbm.tCL, 30);
    ck_assert_int_eq(m.mem.hbm.tRP, def.mem.hbm.tRP); /* the rest stays default */
    cfg_default(&m);
    ck_assert_int_eq(cfg_set(&m, "memory.hbm.tCL", "31", &d), NPU_OK);
    ck_assert_int_eq(m.mem.hbm.tCL, 31);
    m.mem.l2.line_bytes = 500;
    ck_assert_int_eq(cfg_validate(&m, &d), NPU_EINVAL); /* memmodel's cross-field rules */
    ASSERT_MSG(d, "memory.l2.line_bytes");
    m.mem.l2.line_bytes = 512;
    char *a = cfg_dump_json(&m);
    cfg_machine m2;
    ck_assert_msg(load(&m2, a, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(m2.mem.hbm.tCL, 31);
    ck_assert_int_eq(memcmp(&m.mem, &m2.mem, sizeof m.mem), 0);
    npu_free(a);
}
END_TEST

/* ---- allocation failures --------------------------------------------------- */

START_TEST(alloc_failures)
{
    cfg_machine m;
    cfg_default(&m);
    char *ref = cfg_dump_json(&m);
    ck_assert_ptr_nonnull(ref);
    for (long n = 1; n < 200; n++) {
        npu_diag d;
        npu_alloc_fail_after(n);
        char *s = cfg_dump_json(&m);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (s) {
            ck_assert_str_eq(s, ref);
            npu_free(s);
        }
        npu_alloc_fail_after(n);
        cfg_machine m2;
        npu_status st = cfg_load_json_text(&m2, ref, strlen(ref), "r.json", &d);
        failed |= npu_alloc_failed();
        npu_alloc_fail_after(0);
        ck_assert(st == NPU_OK || st == NPU_ENOMEM);
        if (!failed) break;
    }
    npu_free(ref);
}
END_TEST

/* ---- robustness: mutated inputs never crash and always explain ------------- */

START_TEST(mutations)
{
    cfg_machine m;
    cfg_default(&m);
    char *ref = cfg_dump_json(&m);
    size_t len = strlen(ref);
    char *buf = malloc(len + 64);
    npu_rng rng = { 12345 };
    static const char pool[] = "{}[]\",:.-+0123456789eE \n\\truefalsenull\x01\xff";
    int ok = 0, bad = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, ref, len + 1);
        size_t n = len;
        int muts = 1 + (int)(npu_rng_next(&rng) % 4);
        for (int k = 0; k < muts; k++) {
            size_t at = npu_rng_next(&rng) % n;
            switch (npu_rng_next(&rng) % 3) {
            case 0: buf[at] = pool[npu_rng_next(&rng) % (sizeof pool - 1)]; break;
            case 1: memmove(buf + at, buf + at + 1, n - at); n--; break; /* delete */
            default: n = at; buf[n] = 0; break;                         /* truncate */
            }
            if (n < 2) break;
        }
        npu_diag d;
        npu_diag_clear(&d);
        npu_status st = cfg_load_json_text(&m, buf, n, "mut.json", &d);
        if (st == NPU_OK) ok++;
        else {
            bad++;
            ck_assert_msg(strncmp(d.msg, "mut.json", 8) == 0, "message without file: %s", d.msg);
        }
    }
    ck_assert_int_gt(bad, 1000);  /* most mutations break the file... */
    ck_assert_int_gt(ok, 10);     /* ...some (whitespace, digits) do not */
    free(buf);
    npu_free(ref);
}
END_TEST

/* ---- the command ------------------------------------------------------------- */

START_TEST(cmd_config)
{
    char path[4096];
    root_path("configs/small.json", path, sizeof path);
    char *ok[] = { "config", "--check", path, NULL };
    ck_assert_int_eq(cfg_cmd_config(3, ok), 0);
    char *bad[] = { "config", "--check", "/nonexistent.json", NULL };
    ck_assert_int_ne(cfg_cmd_config(3, bad), 0);
    char *badset[] = { "config", "--dump", "--set", "chip.corez=2", NULL };
    ck_assert_int_ne(cfg_cmd_config(4, badset), 0);
    char *badopt[] = { "config", "--frob", NULL };
    ck_assert_int_ne(cfg_cmd_config(2, badopt), 0);
}
END_TEST

Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *t = tcase_create("config");
    tcase_add_test(t, table_is_sane);
    tcase_add_test(t, table_defaults_parse);
    tcase_add_test(t, defaults_match_design);
    tcase_add_test(t, dump_roundtrip);
    tcase_add_test(t, default_json_is_the_dump);
    tcase_add_test(t, small_json_loads);
    tcase_add_test(t, memory_files_load);
    tcase_add_test(t, err_range);
    tcase_add_test(t, err_type);
    tcase_add_test(t, err_unknown_key);
    tcase_add_test(t, err_version);
    tcase_add_test(t, err_syntax);
    tcase_add_test(t, err_file);
    tcase_add_test(t, set_values);
    tcase_add_test(t, set_errors);
    tcase_add_test(t, validate_cross_fields);
    tcase_add_test(t, memory_delegation);
    tcase_add_test(t, alloc_failures);
    tcase_add_test(t, mutations);
    tcase_add_test(t, cmd_config);
    suite_add_tcase(s, t);
    return s;
}
