/* test_launch.c — the launch descriptor: launch files, flags, their merge,
 * and the machine a launch runs on. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend/launch.h"
#include "isa/isa_fp.h"

Suite *launch_suite(void);

#define ASSERT_MSG(d, want) \
    ck_assert_msg(strstr((d).msg, want) != NULL, "message \"%s\" lacks \"%s\"", (d).msg, want)

/* Load text as if from "dir/l.json"; returns the status. */
static npu_status load(launch_desc *l, const char *text, npu_diag *d)
{
    launch_free(l);
    npu_diag_clear(d);
    return launch_load_json_text(l, text, strlen(text), "l.json", "dir", d);
}

static const launch_arg *arg(const launch_desc *l, const char *name)
{
    for (size_t i = 0; i < l->nargs; i++)
        if (!strcmp(l->args[i].name, name)) return &l->args[i];
    return NULL;
}

static const char *full =
    "{\n"
    "  \"version\": 1,\n"
    "  \"kernel\": \"gemm.elf\",\n"
    "  \"entry\": \"gemm_main\",\n"
    "  \"cores\": 4,\n"
    "  \"config\": \"/abs/small.json\",\n"
    "  \"set\": {\"core.l1.size\": \"1M\", \"chip.clock_ghz\": 1.5, \"vector.model_bank_conflicts\": false},\n"
    "  \"mode\": \"timing\",\n"
    "  \"max_cycles\": 5000000,\n"
    "  \"rtol\": 0.001,\n"
    "  \"args\": [\n"
    "    {\"name\": \"A\", \"kind\": \"in\", \"file\": \"a.npy\"},\n"
    "    {\"name\": \"B\", \"kind\": \"inout\", \"file\": \"b.npy\", \"save\": \"b_out.npy\"},\n"
    "    {\"name\": \"C\", \"kind\": \"out\", \"dtype\": \"float32\", \"shape\": [64, 32], \"file\": \"c.npy\"},\n"
    "    {\"name\": \"n\", \"kind\": \"scalar\", \"value\": 64},\n"
    "    {\"name\": \"alpha\", \"kind\": \"scalar\", \"value\": 0.5},\n"
    "    {\"name\": \"h\", \"kind\": \"scalar\", \"value\": 2, \"dtype\": \"float16\"},\n"
    "    {\"name\": \"big\", \"kind\": \"scalar\", \"value\": \"0x7fffffffffffffff\"}\n"
    "  ],\n"
    "  \"expect\": {\"C\": {\"file\": \"c_ref.npy\", \"atol\": 0.01}, \"B\": \"b_ref.npy\"}\n"
    "}\n";

START_TEST(file_full)
{
    launch_desc l = { 0 };
    npu_diag d;
    ck_assert_msg(load(&l, full, &d) == NPU_OK, "%s", d.msg);
    ck_assert_str_eq(l.kernel, "dir/gemm.elf");
    ck_assert_str_eq(l.entry, "gemm_main");
    ck_assert_str_eq(l.config, "/abs/small.json"); /* absolute paths stay */
    launch_desc r = { 0 };
    ck_assert_int_eq(launch_load_json_text(&r, full, strlen(full), "l.json", "/", &d), NPU_OK);
    ck_assert_str_eq(r.kernel, "/gemm.elf");
    launch_free(&r);
    ck_assert_uint_eq(l.cores, 4);
    ck_assert_int_eq(l.mode, LAUNCH_MODE_TIMING);
    ck_assert_uint_eq(l.max_cycles, 5000000);
    ck_assert_uint_eq(l.nsets, 3);
    ck_assert_str_eq(l.sets[0].key, "core.l1.size");
    ck_assert_str_eq(l.sets[0].value, "1M");
    ck_assert_str_eq(l.sets[1].value, "1.5");
    ck_assert_str_eq(l.sets[2].value, "false");
    ck_assert_uint_eq(l.nargs, 7);
    ck_assert_str_eq(l.args[0].name, "A"); /* argument order is kept */
    ck_assert_int_eq(l.args[0].kind, LAUNCH_ARG_IN);
    ck_assert_str_eq(l.args[0].file, "dir/a.npy");
    ck_assert_int_eq(l.args[0].dtype, -1);
    ck_assert_int_eq(l.args[1].kind, LAUNCH_ARG_INOUT);
    ck_assert_str_eq(l.args[1].save, "dir/b_out.npy");
    const launch_arg *c = &l.args[2];
    ck_assert_int_eq(c->kind, LAUNCH_ARG_OUT);
    ck_assert_int_eq(c->dtype, ISA_DT_F32);
    ck_assert_int_eq(c->ndim, 2);
    ck_assert_uint_eq(c->shape[0], 64);
    ck_assert_uint_eq(c->shape[1], 32);
    ck_assert_str_eq(c->file, "dir/c.npy");
    ck_assert_int_eq(l.args[3].kind, LAUNCH_ARG_SCALAR);
    ck_assert_int_eq(l.args[3].is_float, 0);
    ck_assert_int_eq(l.args[3].ival, 64);
    ck_assert_int_eq(l.args[3].dtype, ISA_DT_S64);
    ck_assert_int_eq(l.args[4].is_float, 1);
    ck_assert(l.args[4].fval == 0.5);
    ck_assert_int_eq(l.args[4].dtype, ISA_DT_F32);
    ck_assert_int_eq(l.args[5].dtype, ISA_DT_F16);
    ck_assert_int_eq(l.args[5].is_float, 1);
    ck_assert(l.args[5].fval == 2.0);
    ck_assert_int_eq(l.args[6].ival, INT64_MAX); /* exact beyond 2^53 */
    ck_assert_uint_eq(l.nexpects, 2);
    ck_assert_str_eq(l.expects[0].name, "C");
    ck_assert_str_eq(l.expects[0].file, "dir/c_ref.npy");
    ck_assert(l.expects[0].rtol == 0.001);          /* from the top-level rtol */
    ck_assert(l.expects[0].atol == 0.01);           /* its own */
    ck_assert_str_eq(l.expects[1].file, "dir/b_ref.npy");
    ck_assert(l.expects[1].atol == LAUNCH_DEFAULT_ATOL);
    launch_free(&l);
    ck_assert_ptr_null(l.args);
    ck_assert_uint_eq(l.nargs, 0);
}
END_TEST

START_TEST(file_minimal)
{
    launch_desc l = { 0 };
    npu_diag d;
    ck_assert_int_eq(load(&l, "{\"version\":1,\"_note\":1,\"kernel\":\"k.elf\",\"set\":{\"_n\":[]},"
                              "\"args\":[{\"_n\":0,\"name\":\"a\",\"kind\":\"in\",\"file\":\"a\"}],"
                              "\"expect\":{\"_n\":{}}}", &d), NPU_OK);
    ck_assert_uint_eq(l.nsets, 0);
    ck_assert_uint_eq(l.nexpects, 0);
    ck_assert_uint_eq(l.nargs, 1);
    ck_assert_int_eq(load(&l, "{\"version\":1,\"kernel\":\"k.elf\"}", &d), NPU_OK);
    ck_assert_int_eq(l.mode, LAUNCH_MODE_PERF);
    ck_assert_uint_eq(l.cores, 0);
    ck_assert_ptr_null(l.entry);
    ck_assert_ptr_null(l.config);
    ck_assert_uint_eq(l.nargs, 0);
    launch_free(&l);
}
END_TEST

START_TEST(file_errors)
{
    launch_desc l = { 0 };
    npu_diag d;
    static const struct { const char *text; const char *msg; } cases[] = {
        { "{\"kernel\":\"k.elf\"}", "l.json: version: missing (this build reads version 1)" },
        { "{\"version\":3,\"kernel\":\"k.elf\"}", "l.json: version: unsupported version 3" },
        { "{\"version\":1,\"kernal\":\"k.elf\"}", "l.json: kernal: unknown key (did you mean kernel?)" },
        { "{\"version\":1,\"frob\":1}", "l.json: frob: unknown key" },
        { "{\"version\":1}", "l.json: kernel: missing" },
        { "{\"version\":1,\"kernel\":5}", "l.json: kernel: expected a non-empty string, got 5" },
        { "{\"version\":1,\"kernel\":\"k\",\"cores\":\"4\"}",
          "l.json: cores: expected an integer in 1..1024, got the string \"4\"" },
        { "{\"version\":1,\"kernel\":\"k\",\"cores\":0}", "l.json: cores: expected an integer in 1..1024, got 0" },
        { "{\"version\":1,\"kernel\":\"k\",\"cores\":2000}", "cores: expected an integer in 1..1024, got 2000" },
        { "{\"version\":1,\"kernel\":\"k\",\"max_cycles\":1.5}", "max_cycles: expected an integer" },
        { "{\"version\":1,\"kernel\":\"k\",\"mode\":\"fast\"}",
          "l.json: mode: expected one of \"func\", \"perf\", \"timing\", got \"fast\"" },
        { "{\"version\":1,\"kernel\":\"k\",\"rtol\":-1}", "l.json: rtol: expected a number >= 0, got -1" },
        { "{\"version\":1,\"kernel\":\"k\",\"set\":{\"core.l1.siz\":\"1M\"}}",
          "l.json: set: core.l1.siz: unknown config key (did you mean core.l1.size?)" },
        { "{\"version\":1,\"kernel\":\"k\",\"set\":{\"core.l1.size\":\"1Q\"}}", "l.json: set: core.l1.size: bad size '1Q'" },
        { "{\"version\":1,\"kernel\":\"k\",\"set\":{\"chip.cores\":[1]}}",
          "l.json: set.chip.cores: expected a string, number or boolean, got an array" },
        { "{\"version\":1,\"kernel\":\"k\",\"set\":[]}", "l.json: set: expected an object, got an array" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":{}}", "l.json: args: expected an array, got an object" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[5]}", "l.json: args[0]: expected an object, got 5" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"kind\":\"in\",\"file\":\"a\"}]}", "l.json: args[0].name: missing" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"a\",\"file\":\"a\"}]}", "l.json: args[0] (a).kind: missing" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"a\",\"kind\":\"input\",\"file\":\"a\"}]}",
          "l.json: args[0] (a).kind: expected one of \"in\", \"out\", \"inout\", \"scalar\", got \"input\"" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"a\",\"kind\":\"in\",\"fil\":\"a\"}]}",
          "l.json: args[0].fil: unknown key (did you mean file?)" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"a\",\"kind\":\"in\"}]}",
          "l.json: args[0] (a).file: missing (required for kind \"in\")" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"a\",\"kind\":\"in\",\"file\":\"a\",\"shape\":[1]}]}",
          "l.json: args[0] (a).shape: not allowed for kind \"in\"" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"c\",\"kind\":\"out\",\"shape\":[1]}]}",
          "l.json: args[0] (c).dtype: missing (required for kind \"out\")" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"c\",\"kind\":\"out\",\"dtype\":\"float33\",\"shape\":[1]}]}",
          "l.json: args[0] (c).dtype: unknown dtype \"float33\"" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"c\",\"kind\":\"out\",\"dtype\":\"int8\",\"shape\":[0]}]}",
          "l.json: args[0] (c).shape: expected an array of positive integers, got 0" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"c\",\"kind\":\"out\",\"dtype\":\"int8\",\"shape\":3}]}",
          "args[0] (c).shape: expected an array of positive integers, got 3" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"s\",\"kind\":\"scalar\",\"value\":\"x\"}]}",
          "l.json: args[0] (s).value: expected a number, got the string \"x\"" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"s\",\"kind\":\"scalar\",\"value\":300,\"dtype\":\"int8\"}]}",
          "l.json: args[0] (s): value: 300 does not fit dtype s8" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"s\",\"kind\":\"scalar\",\"value\":1.5,\"dtype\":\"int32\"}]}",
          "value: expected an integer for dtype s32, got 1.5" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"a\",\"kind\":\"in\",\"file\":\"x\"},"
          "{\"name\":\"a\",\"kind\":\"in\",\"file\":\"y\"}]}",
          "l.json: args[1]: duplicate argument name \"a\"" },
        { "{\"version\":1,\"kernel\":\"k\",\"expect\":{\"C\":\"c.npy\"}}", "l.json: expect.C: no argument of that name" },
        { "{\"version\":1,\"kernel\":\"k\",\"args\":[{\"name\":\"a\",\"kind\":\"in\",\"file\":\"x\"}],"
          "\"expect\":{\"a\":\"r.npy\"}}",
          "l.json: expect.a: the argument is of kind \"in\"" },
        { "{\"version\":1,\"kernel\":\"k\",\"expect\":{\"C\":{\"fil\":\"c.npy\"}}}",
          "l.json: expect.C.fil: unknown key (did you mean file?)" },
        { "{\"version\":1,\"kernel\":\"k\",\"expect\":{\"C\":5}}",
          "l.json: expect.C: expected an object {file, rtol, atol} or a file name, got 5" },
        { "{\"version\":1,\"kernel\":\"k\",\"kernel\":\"j\"}", "l.json: kernel: duplicate key" },
        { "{\"version\":1,\n\"kernel\":\"k\",\n\"cores\": 4,,\n}", "l.json:3:" },
        { "[]", "l.json: expected a JSON object at the top" },
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(cases); i++) {
        ck_assert_msg(load(&l, cases[i].text, &d) != NPU_OK, "case %zu passed", i);
        ck_assert_msg(strstr(d.msg, cases[i].msg) != NULL, "case %zu: \"%s\" lacks \"%s\"", i,
                      d.msg, cases[i].msg);
    }
    launch_free(&l);
}
END_TEST

/* ---- flags ----------------------------------------------------------------------- */

static npu_status parse(launch_desc *l, int *consumed, npu_diag *d, ...)
{
    char *argv[64];
    int argc = 0;
    va_list ap;
    va_start(ap, d);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 63;) argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    npu_diag_clear(d);
    return launch_parse_args(l, argc, argv, consumed, d);
}

START_TEST(flags_full)
{
    launch_desc l = { 0 };
    npu_diag d;
    int used;
    ck_assert_msg(parse(&l, &used, &d, "k.elf", "--cores", "8", "--arg", "A=a.npy", "--arg", "n=1024",
                        "--arg", "x=-0.25", "--arg=m=0x10", "--out", "C=out/c.npy:float16[1024,1024]",
                        "--out", "D=bfloat16[3]", "--inout", "B=b.npy:b2.npy", "--expect", "C=ref.npy",
                        "--rtol", "1e-3", "--atol=0", "--config", "cfg.json", "--set",
                        "core.l1.size=1M", "--mode", "func", "--max-cycles", "1e6", "--entry", "main",
                        "--trace", "t.npt", NULL) == NPU_OK,
                  "%s", d.msg);
    ck_assert_int_eq(used, 31); /* stops at --trace, not ours */
    ck_assert_msg(launch_finish(&l, &d) == NPU_OK, "%s", d.msg);
    ck_assert_str_eq(l.kernel, "k.elf");
    ck_assert_uint_eq(l.cores, 8);
    ck_assert_str_eq(l.config, "cfg.json");
    ck_assert_int_eq(l.mode, LAUNCH_MODE_FUNC);
    ck_assert_uint_eq(l.max_cycles, 1000000);
    ck_assert_str_eq(l.entry, "main");
    ck_assert_uint_eq(l.nsets, 1);
    ck_assert_str_eq(l.sets[0].value, "1M");
    ck_assert_uint_eq(l.nargs, 7);
    ck_assert_int_eq(arg(&l, "A")->kind, LAUNCH_ARG_IN);
    ck_assert_str_eq(arg(&l, "A")->file, "a.npy");
    ck_assert_int_eq(arg(&l, "n")->kind, LAUNCH_ARG_SCALAR);
    ck_assert_int_eq(arg(&l, "n")->ival, 1024);
    ck_assert_int_eq(arg(&l, "x")->is_float, 1);
    ck_assert(arg(&l, "x")->fval == -0.25);
    ck_assert_int_eq(arg(&l, "m")->ival, 16);
    const launch_arg *c = arg(&l, "C");
    ck_assert_int_eq(c->kind, LAUNCH_ARG_OUT);
    ck_assert_int_eq(c->dtype, ISA_DT_F16);
    ck_assert_int_eq(c->ndim, 2);
    ck_assert_uint_eq(c->shape[1], 1024);
    ck_assert_str_eq(c->file, "out/c.npy");
    ck_assert_ptr_null(arg(&l, "D")->file);
    ck_assert_int_eq(arg(&l, "D")->dtype, ISA_DT_BF16);
    ck_assert_str_eq(arg(&l, "B")->save, "b2.npy");
    ck_assert_uint_eq(l.nexpects, 1);
    ck_assert(l.expects[0].rtol == 1e-3);
    ck_assert(l.expects[0].atol == 0.0);
    launch_free(&l);
}
END_TEST

START_TEST(flags_stops)
{
    launch_desc l = { 0 };
    npu_diag d;
    int used;
    ck_assert_int_eq(parse(&l, &used, &d, "k.elf", "other.elf", NULL), NPU_OK);
    ck_assert_int_eq(used, 1);
    ck_assert_int_eq(parse(&l, &used, &d, "--", "x", NULL), NPU_OK);
    ck_assert_int_eq(used, 1);
    ck_assert_int_eq(parse(&l, &used, &d, "--check", "--cores", "2", NULL), NPU_OK);
    ck_assert_int_eq(used, 0);
    /* called again after the caller's own option */
    ck_assert_int_eq(parse(&l, &used, &d, "--cores", "2", NULL), NPU_OK);
    ck_assert_int_eq(used, 2);
    ck_assert_uint_eq(l.cores, 2);
    launch_free(&l);
}
END_TEST

START_TEST(flags_errors)
{
    static const char *const cases[][3] = {
        { "--cores", "0", "--cores 0: expected an integer in 1..1024" },
        { "--cores", "many", "--cores many: expected an integer" },
        { "--max-cycles", "-3", "--max-cycles -3: expected an integer" },
        { "--mode", "fast", "--mode fast: expected func, perf or timing" },
        { "--set", "core.l1.siz=1M", "--set core.l1.siz=1M: core.l1.siz: unknown config key (did you mean core.l1.size?)" },
        { "--set", "core.l1.size=1Q", "--set core.l1.size=1Q: core.l1.size: bad size '1Q'" },
        { "--set", "core.l1.size", "--set core.l1.size: expected KEY=VALUE" },
        { "--set", "memory.l2.ways=x", "--set memory.l2.ways=x: memory.l2.ways: expected integer in 1..64" },
        { "--set", "memory.l2.size_bytes=9Q", "--set memory.l2.size_bytes=9Q: memory.l2.size_bytes: expected integer" },
        { "--arg", "A", "--arg A: expected NAME=FILE.npy or NAME=NUMBER" },
        { "--arg", "=a.npy", "--arg =a.npy: expected NAME=" },
        { "--out", "C=c.npy:float33[4]", "--out C=c.npy:float33[4]: unknown dtype 'float33'" },
        { "--out", "C=c.npy:float32[4,", "--out C=c.npy:float32[4,: expected DTYPE[D0,D1,...]" },
        { "--out", "C=c.npy:float32[4,0]", "bad dimension" },
        { "--out", "C=c.npy:float32[4x4]", "bad shape" },
        { "--out", "C=c.npy", "expected DTYPE[D0,D1,...], got 'c.npy'" },
        { "--out", "C=:float32[4]", "empty file name" },
        { "--inout", "B=:x.npy", "expected NAME=FILE.npy[:SAVE.npy]" },
        { "--expect", "C", "--expect C: expected NAME=REF.npy" },
        { "--rtol", "-1", "--rtol -1: expected a number >= 0" },
        { "--atol", "x", "--atol x: expected a number >= 0" },
        { "--entry", "", "--entry: empty symbol name" },
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(cases); i++) {
        launch_desc l = { 0 };
        npu_diag d;
        int used;
        ck_assert_msg(parse(&l, &used, &d, (char *)cases[i][0], (char *)cases[i][1], NULL) != NPU_OK,
                      "case %zu passed", i);
        ck_assert_msg(strstr(d.msg, cases[i][2]) != NULL, "case %zu: \"%s\" lacks \"%s\"", i, d.msg,
                      cases[i][2]);
        launch_free(&l);
    }
    launch_desc l = { 0 };
    npu_diag d;
    int used;
    ck_assert_int_ne(parse(&l, &used, &d, "k.elf", "--cores", NULL), NPU_OK);
    ck_assert_str_eq(d.msg, "--cores: missing value");
    launch_free(&l);
    /* finish: no kernel; expectation of a missing argument */
    ck_assert_int_eq(parse(&l, &used, &d, "--expect", "C=r.npy", NULL), NPU_OK);
    ck_assert_int_ne(launch_finish(&l, &d), NPU_OK);
    ck_assert_str_eq(d.msg, "kernel: missing (give the kernel ELF path)");
    ck_assert_int_eq(parse(&l, &used, &d, "k.elf", NULL), NPU_OK);
    ck_assert_int_ne(launch_finish(&l, &d), NPU_OK);
    ck_assert_str_eq(d.msg, "expect.C: no argument of that name");
    launch_free(&l);
    /* each override is valid alone but breaks a rule across keys: the
     * message names the override, whether the rule is reported against
     * its key or against the other side of the rule */
    static const char *const cross[][2] = {
        { "memory.hbm.mapping=xyz", "set memory.hbm.mapping=xyz: memory.hbm.mapping: " },
        { "memory.hbm.channels=3", "set memory.hbm.channels=3: memory.hbm.channels: 3 is not a power of 2" },
        { "core.ub.banks=3", "set core.ub.banks=3: core.ub.size: must equal core.ub.banks x" },
        { "memory.hbm.xor_map=g0^r0 b2^r1", "set memory.hbm.xor_map=g0^r0 b2^r1: memory.hbm.xor_map: term 'b2^r1' at offset 6 names bit 2 of 'b'" },
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(cross); i++) {
        ck_assert_msg(parse(&l, &used, &d, "k.elf", "--set", "core.l1.size=2M", "--set",
                            (char *)cross[i][0], NULL) == NPU_OK,
                      "%s", d.msg);
        cfg_machine m;
        ck_assert_int_ne(launch_machine(&l, &m, &d), NPU_OK);
        ck_assert_msg(strstr(d.msg, cross[i][1]) == d.msg, "\"%s\" does not start with \"%s\"",
                      d.msg, cross[i][1]);
        launch_free(&l);
    }
}
END_TEST

/* ---- files and flags together ------------------------------------------------------ */

static char *write_tmp(const char *dir, const char *name, const char *text)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return p;
}

START_TEST(file_and_flags)
{
    char dir[] = "/tmp/npu-launch-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char *cfg = write_tmp(dir, "m.json", "{\"version\":1,\"chip\":{\"cores\":2},\"core\":{\"l1\":{\"size\":\"256K\"}}}");
    char *lj = write_tmp(dir, "run.json",
                         "{\"version\":1,\"kernel\":\"k.elf\",\"config\":\"m.json\",\"cores\":2,"
                         "\"mode\":\"func\",\"set\":{\"core.l1.size\":\"1M\",\"chip.clock_ghz\":1.0},"
                         "\"args\":[{\"name\":\"A\",\"kind\":\"in\",\"file\":\"a.npy\"},"
                         "{\"name\":\"C\",\"kind\":\"out\",\"dtype\":\"int32\",\"shape\":[8]}],"
                         "\"expect\":{\"C\":\"c_ref.npy\"}}");
    launch_desc l = { 0 };
    npu_diag d;
    int used;
    /* flags before the file keep priority; flags after it override it */
    ck_assert_msg(parse(&l, &used, &d, "--mode", "timing", "--set", "core.l1.size=2M", lj, "--arg",
                        "A=mine.npy", "--cores", "1", NULL) == NPU_OK,
                  "%s", d.msg);
    ck_assert_int_eq(used, 9);
    ck_assert_msg(launch_finish(&l, &d) == NPU_OK, "%s", d.msg);
    ck_assert_int_eq(l.mode, LAUNCH_MODE_TIMING);
    ck_assert_uint_eq(l.cores, 1);
    char want[256];
    snprintf(want, sizeof want, "%s/k.elf", dir);
    ck_assert_str_eq(l.kernel, want);
    ck_assert_str_eq(arg(&l, "A")->file, "mine.npy");
    ck_assert_str_eq(l.args[0].name, "A");  /* the file's order */
    ck_assert_str_eq(l.args[1].name, "C");
    ck_assert_uint_eq(l.nsets, 3);
    ck_assert_str_eq(l.sets[2].value, "2M"); /* the flag's set comes last, so it wins */
    cfg_machine m;
    ck_assert_msg(launch_machine(&l, &m, &d) == NPU_OK, "%s", d.msg);
    ck_assert_uint_eq(m.chip.cores, 1);
    ck_assert_uint_eq(m.core.l1.size, 2u << 20);
    ck_assert(m.chip.clock_ghz == 1.0);
    ck_assert_uint_eq(m.timing.max_cycles, 1000000000u);
    launch_free(&l);

    /* launch_load_file alone; launch_machine picks max_cycles */
    ck_assert_msg(launch_load_file(&l, lj, &d) == NPU_OK, "%s", d.msg);
    l.max_cycles = 1234;
    l.given |= LAUNCH_GIVEN_MAX_CYCLES;
    ck_assert_msg(launch_machine(&l, &m, &d) == NPU_OK, "%s", d.msg);
    ck_assert_uint_eq(m.chip.cores, 2);
    ck_assert_uint_eq(m.core.l1.size, 1u << 20);
    ck_assert_uint_eq(m.timing.max_cycles, 1234);
    launch_free(&l);

    /* a bad config file is reported with its name */
    char *bad = write_tmp(dir, "bad.json", "{\"version\":1,\"kernel\":\"k\",\"config\":\"nope.json\"}");
    ck_assert_int_eq(launch_load_file(&l, bad, &d), NPU_OK);
    ck_assert_int_ne(launch_machine(&l, &m, &d), NPU_OK);
    ASSERT_MSG(d, "nope.json");
    launch_free(&l);
    ck_assert_int_ne(launch_load_file(&l, "/nonexistent/run.json", &d), NPU_OK);
    ASSERT_MSG(d, "/nonexistent/run.json");
    launch_free(&l);

    unlink(cfg);
    unlink(lj);
    unlink(bad);
    rmdir(dir);
    free(cfg);
    free(lj);
    free(bad);
}
END_TEST

START_TEST(dtype_names)
{
    static const struct { const char *name; int dt; } names[] = {
        { "float32", ISA_DT_F32 }, { "float16", ISA_DT_F16 }, { "bfloat16", ISA_DT_BF16 },
        { "float8_e4m3fn", ISA_DT_E4M3 }, { "float8_e5m2", ISA_DT_E5M2 }, { "int32", ISA_DT_S32 },
        { "int16", ISA_DT_S16 }, { "int8", ISA_DT_S8 }, { "uint8", ISA_DT_U8 },
        { "int64", ISA_DT_S64 }, { "f32", ISA_DT_F32 }, { "float64", -1 }, { "", -1 },
    };
    for (size_t i = 0; i < NPU_ARRAY_LEN(names); i++)
        ck_assert_msg(launch_dtype_from_name(names[i].name) == names[i].dt, "%s", names[i].name);
}
END_TEST

/* The example in docs/launch.md is a valid launch file. */
START_TEST(docs_example)
{
    const char *root = getenv("NPU_ROOT");
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/launch.md", root && *root ? root : ".");
    uint8_t *data;
    size_t len;
    npu_diag d;
    ck_assert_msg(npu_read_file(path, 0, 0, &data, &len, &d) == NPU_OK, "%s", d.msg);
    char *start = strstr((char *)data, "```json\n");
    ck_assert_ptr_nonnull(start);
    start += 8;
    char *end = strstr(start, "```");
    ck_assert_ptr_nonnull(end);
    launch_desc l = { 0 };
    ck_assert_msg(launch_load_json_text(&l, start, (size_t)(end - start), "launch.md", "docs", &d) ==
                      NPU_OK,
                  "%s", d.msg);
    ck_assert_uint_eq(l.nargs, 6);
    ck_assert_uint_eq(l.nexpects, 2);
    ck_assert(l.expects[0].rtol == 1e-2);
    ck_assert(l.expects[1].rtol == 1e-3);
    ck_assert_str_eq(l.config, "docs/../configs/small.json");
    cfg_machine m;
    char cwd_cfg[4096];
    snprintf(cwd_cfg, sizeof cwd_cfg, "%s/configs/small.json", root && *root ? root : ".");
    npu_free(l.config);
    l.config = npu_strdup(cwd_cfg);
    ck_assert_msg(launch_machine(&l, &m, &d) == NPU_OK, "%s", d.msg);
    ck_assert_uint_eq(m.chip.cores, 24);
    ck_assert_int_eq(m.timing.memory_model, CFG_MEM_FIXED);
    launch_free(&l);
    npu_free(data);
}
END_TEST

START_TEST(alloc_failures)
{
    for (long n = 1; n < 400; n++) {
        launch_desc l = { 0 };
        npu_diag d;
        npu_alloc_fail_after(n);
        npu_status s = launch_load_json_text(&l, full, strlen(full), "l.json", "dir", &d);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        ck_assert(s == NPU_OK || s == NPU_ENOMEM);
        launch_free(&l);
        if (!failed) break;
    }
}
END_TEST

/* Mutated launch files never crash and always name the file. */
START_TEST(mutations)
{
    size_t len = strlen(full);
    char *buf = malloc(len + 1);
    npu_rng rng = { 777 };
    static const char pool[] = "{}[]\",:.-0123456789 \nxyz\x01\xff";
    int bad = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, full, len + 1);
        size_t n = len;
        for (int k = 0, muts = 1 + (int)(npu_rng_next(&rng) % 4); k < muts && n > 2; k++) {
            size_t at = npu_rng_next(&rng) % n;
            if (npu_rng_next(&rng) % 2) buf[at] = pool[npu_rng_next(&rng) % (sizeof pool - 1)];
            else memmove(buf + at, buf + at + 1, n-- - at);
        }
        launch_desc l = { 0 };
        npu_diag d;
        npu_diag_clear(&d);
        if (launch_load_json_text(&l, buf, n, "mut.json", "dir", &d) != NPU_OK) {
            bad++;
            ck_assert_msg(strncmp(d.msg, "mut.json", 8) == 0, "message without file: %s", d.msg);
        }
        launch_free(&l);
    }
    ck_assert_int_gt(bad, 1000);
    free(buf);
}
END_TEST

Suite *launch_suite(void)
{
    Suite *s = suite_create("launch");
    TCase *t = tcase_create("launch");
    tcase_add_test(t, file_full);
    tcase_add_test(t, file_minimal);
    tcase_add_test(t, file_errors);
    tcase_add_test(t, flags_full);
    tcase_add_test(t, flags_stops);
    tcase_add_test(t, flags_errors);
    tcase_add_test(t, file_and_flags);
    tcase_add_test(t, dtype_names);
    tcase_add_test(t, docs_example);
    tcase_add_test(t, mutations);
    tcase_add_test(t, alloc_failures);
    suite_add_tcase(s, t);
    return s;
}
