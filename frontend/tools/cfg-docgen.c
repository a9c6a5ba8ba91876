/* cfg-docgen — writes docs/config.md (the machine config reference) from
 * the key table, frontend/config_keys.def, to standard output.
 *
 *   cfg-docgen                 the reference (docs/config.md)
 *   cfg-docgen --default-json  the embedded default machine (configs/default.json)
 *
 * tests/e2e/t_config_docs.sh fails when the committed docs/config.md is not
 * what this prints, so a new key cannot land undocumented. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "frontend/config.h"

/* The hand-written part of the page; the tables follow it. */
static const char intro[] =
"# Machine config reference\n"
"\n"
"<!-- generated from frontend/config_keys.def and frontend/tools/cfg-docgen.c\n"
"     by `cfg-docgen > docs/config.md` — do not edit; edit those two files -->\n"
"\n"
"A machine config describes the simulated NPU: how many cores, how big each\n"
"on-chip buffer is, how wide each data path is and what each instruction\n"
"costs. The default machine, modelled on public figures of Ascend A2-class\n"
"NPUs (see DESIGN.md, \"The target NPU\"), is embedded in the binary, so no\n"
"file is needed; `configs/default.json` is a copy of it (a test keeps the two\n"
"equal) and `configs/small.json` is a 2-core machine for fast tests.\n"
"\n"
"## Files\n"
"\n"
"A config file is a JSON object. `\"version\": 1` is required. Every other key\n"
"is optional: a file is applied on top of the default machine, so it only\n"
"needs the keys it changes. The dotted key names below are the nesting of the\n"
"JSON objects: `core.ub.banks` is written\n"
"\n"
"```json\n"
"{ \"version\": 1, \"core\": { \"ub\": { \"banks\": 32, \"size\": \"128K\" } } }\n"
"```\n"
"\n"
"Members whose name starts with `_` (`\"_note\": \"...\"`) are comments, at any\n"
"level, and are ignored; the memory model's preset files use them to cite\n"
"their sources.\n"
"\n"
"Parsing is strict. Each of these is an error that names the file and the key,\n"
"and the run does not start:\n"
"\n"
"- a missing or unsupported `version`;\n"
"- an unknown key anywhere: the message suggests the nearest known key\n"
"  (by edit distance), or, when none is near but the key shares a prefix\n"
"  past its first dot with known ones, up to four of those\n"
"  (`core.l1_bytes` gives \"did you mean one of core.l1.size,\n"
"  core.l1.align?\"); the `memory.*` keys as well as the core's;\n"
"- a value of the wrong JSON type (`\"24\"` for an integer, `1` for a boolean);\n"
"- a value out of the key's range, or a fraction for an integer key;\n"
"- a duplicated key, a JSON syntax error (reported as `file:line:col`) or\n"
"  text after the top-level object;\n"
"- a machine that breaks a cross-field rule: `core.ub.size` must equal\n"
"  `core.ub.banks` x `core.ub.bank_size`; `core.ub.bank_groups` must divide\n"
"  `core.ub.banks`; every alignment is a power of two and every buffer size a\n"
"  multiple of its alignment; `vector.repeat_bytes` is a whole number of\n"
"  `vector.block_bytes`.\n"
"\n"
"For example:\n"
"\n"
"```\n"
"configs/x.json: core.ub.banks: expected an integer in 1..1024, got 0\n"
"configs/x.json: core.ub.bankz: unknown config key (did you mean core.ub.banks?)\n"
"```\n"
"\n"
"Keys with unit B are sizes: besides a JSON number they take a string with a\n"
"binary suffix, `\"512K\"`, `\"1M\"`, `\"2G\"`, `\"1T\"` (x1024 each; `KB` and\n"
"`KiB` spellings work too). So do the memory keys of type size\n"
"(`memory.l2.size_bytes`, `memory.ub.size_bytes`, ...), in a file and in\n"
"`--set memory.l2.size_bytes=96M`.\n"
"\n"
"## Overrides and layering\n"
"\n"
"A run's machine is built in this order, each step on top of the last:\n"
"the embedded default; the config file (`--config FILE`, or `config` in a\n"
"launch file); the launch's `cores`; each `--set KEY=VALUE` (or launch `set`\n"
"entry) in order. Cross-field rules are checked once, at the end.\n"
"`--set` takes the same text as the tables below show, e.g.\n"
"`--set core.l1.size=1M --set timing.memory_model=fixed`. Keys under\n"
"`memory.` go to the memory model (memmodel, see docs/memmodel.md).\n"
"\n"
"```\n"
"npusim config --dump                              # the default machine\n"
"npusim config --dump --config configs/small.json --set chip.cores=4\n"
"npusim config --check my.json                     # exit 0 if valid\n"
"```\n"
"\n"
"The dump prints every key in table order (the order of this page), with\n"
"sizes in bytes; loading a dump gives back the same machine.\n"
"\n"
"## Cost model and where the numbers come from\n"
"\n"
"DESIGN.md gives the buffer sizes, alignments, cube throughput, vector width\n"
"and the peak widths of GM->L1, GM->UB, UB->GM, L1->L0A, L1->L0B, L0C->GM and\n"
"UB->UB. The cube and vector costs are fitted to per-instruction measurements\n"
"of a single Ascend 910B1 core (msKPP tables in\n"
"`/work/shared/reference/ascend910b-measured.json`):\n"
"\n"
"- an `mmad` of F fractals takes `cube.startup_cycles + F x\n"
"  cube.DT.cycles_per_fractal`: fp16 mmads of 2 to 128 fractals fit 2 to 3\n"
"  start-up cycles and 1 cycle per fractal;\n"
"- a vector instruction of R repeats takes about `max(vector.startup_cycles,\n"
"  R x vector.cpr.OP.DT)`: one-source ops 1 cycle per repeat, two-source ops\n"
"  2, fp16 exp/ln/sqrt 4 (fp32 2), div 4, fp16 sum reduction 7 (fp32 3),\n"
"  max/min reductions 7, madd/mla 6; nothing measured takes under ~3 cycles;\n"
"- a data move of n bytes on a path takes `path.P.latency + ceil(n /\n"
"  path.P.width)` cycles, plus, for GM, the time of the memory system (the\n"
"  L2/HBM model, or with `timing.memory_model = \"fixed\"` the fixed port of\n"
"  `timing.gm_fixed_*`).\n"
"\n"
"Rows whose description says \"(assumed)\" are not public figures: they are\n"
"estimates to be replaced by measurements. The bf16 vector costs copy fp16's\n"
"(no bf16 measurements). A vector cost of 0 means the op does not exist for\n"
"that dtype.\n"
"\n"
"## Keys\n";

/* 524288 -> "512K"; "" if not a whole K/M/G/T. */
static void human_size(double v, char *buf, size_t n)
{
    static const char suf[] = "KMGT";
    buf[0] = 0;
    for (int i = 3; i >= 0; i--) {
        double unit = ldexp(1.0, 10 * (i + 1));
        if (v >= unit && fmod(v, unit) == 0) {
            snprintf(buf, n, "%.0f%c", v / unit, suf[i]);
            return;
        }
    }
}

static void num(double v, int integral, int size, char *buf, size_t n)
{
    char h[32];
    if (size) human_size(v, h, sizeof h);
    else h[0] = 0;
    if (h[0]) snprintf(buf, n, "%s", h);
    else if (integral) snprintf(buf, n, "%.0f", v);
    else snprintf(buf, n, "%g", v);
}

/* Markdown table cells must not contain a bare '|'. */
static void cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", stdout);
        else putchar(*s);
    }
}

/* The default of memory key "group.name" from memmodel's dump, as text. */
static void memory_default(const cJSON *mem, const char *key, char *buf, size_t n)
{
    char group[64];
    const char *dot = strchr(key, '.');
    snprintf(buf, n, "?");
    if (!dot || (size_t)(dot - key) >= sizeof group) return;
    memcpy(group, key, (size_t)(dot - key));
    group[dot - key] = 0;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(mem, group);
    const cJSON *v = g ? cJSON_GetObjectItemCaseSensitive(g, dot + 1) : NULL;
    if (cJSON_IsNumber(v)) snprintf(buf, n, "%.17g", v->valuedouble);
    else if (cJSON_IsString(v)) snprintf(buf, n, "\"%s\"", v->valuestring);
    else if (cJSON_IsBool(v)) snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
}

/* memmodel's key table (mem_config_doc: "| `group.name` | type | range |
 * meaning |" rows) with the "memory." prefix and a default column. */
static int memory_rows(const cJSON *mem)
{
    char *doc = mem_config_doc();
    if (!doc) return -1;
    printf("| key | type | default | range | description |\n|---|---|---|---|---|\n");
    for (char *line = doc; *line;) {
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        char *k0 = strncmp(line, "| `", 3) == 0 ? line + 3 : NULL;
        char *k1 = k0 ? strchr(k0, '`') : NULL;
        if (k1 && strncmp(k1, "` | ", 4) == 0) {
            *k1 = 0;
            char *type = k1 + 4;
            char *bar = strstr(type, " | ");
            if (bar) {
                *bar = 0;
                char def[96];
                memory_default(mem, k0, def, sizeof def);
                printf("| `memory.%s` | %s | %s | %s\n", k0, type, def, bar + 3);
            }
        }
        if (!nl) break;
        line = nl + 1;
    }
    npu_free(doc);
    return 0;
}

/* The per-op vector costs as one matrix, op classes down, dtypes across
 * (rows vector.cpr.OP.DT of one OP are adjacent in the table). Returns the
 * index of the first row after the section. */
static size_t print_matrix(const cfg_machine *m, const cfg_key_info *k, size_t n, size_t i,
                           const cfg_section_info *sec)
{
    size_t first = i;
    const char *op0 = k[i].key + strlen(sec->name) + 1;
    size_t oplen0 = (size_t)(strchr(op0, '.') - op0);
    /* header from the first op's dtypes */
    printf("Key `vector.cpr.OP.DT`, a number of cycles in %.0f..%.0f.\n\n", k[i].min, k[i].max);
    printf("| OP |");
    for (size_t j = i; j < n && cfg_key_section(&k[j]) == sec &&
                       strncmp(k[j].key + strlen(sec->name) + 1, op0, oplen0) == 0; j++)
        printf(" %s |", strrchr(k[j].key, '.') + 1);
    printf(" ops |\n|---|");
    for (size_t j = i; j < n && cfg_key_section(&k[j]) == sec &&
                       strncmp(k[j].key + strlen(sec->name) + 1, op0, oplen0) == 0; j++)
        printf("---|");
    printf("---|\n");
    while (i < n && cfg_key_section(&k[i]) == sec) {
        const char *op = k[i].key + strlen(sec->name) + 1;
        size_t oplen = (size_t)(strchr(op, '.') - op);
        printf("| `%.*s` |", (int)oplen, op);
        const char *doc = k[i].doc;
        while (i < n && cfg_key_section(&k[i]) == sec &&
               strncmp(k[i].key + strlen(sec->name) + 1, op, oplen) == 0 &&
               op[oplen] == '.') {
            char v[64];
            npu_diag d;
            if (cfg_get(m, k[i].key, v, sizeof v, &d) != NPU_OK) snprintf(v, sizeof v, "?");
            printf(" %s |", v);
            i++;
        }
        /* the row doc ends in " (DT)"; print it once without that */
        const char *paren = strrchr(doc, '(');
        size_t dl = paren && paren > doc ? (size_t)(paren - doc - 1) : strlen(doc);
        printf(" %.*s |\n", (int)dl, doc);
    }
    (void)first;
    return i;
}

static int print_docs(void)
{
    cfg_machine m;
    cfg_default(&m);
    fputs(intro, stdout);
    size_t n;
    const cfg_key_info *k = cfg_keys(&n);
    const cfg_section_info *cur = NULL;
    int started = 0;
    for (size_t i = 0; i < n; i++) {
        const cfg_section_info *sec = cfg_key_section(&k[i]);
        if (!started || sec != cur) {
            if (sec) printf("\n### %s\n\n", sec->name), cell(sec->doc), printf("\n\n");
            else printf("\n### top level\n\n");
            cur = sec;
            started = 1;
            if (sec && strcmp(sec->name, "vector.cpr") == 0) {
                i--;  /* the matrix prints its own header */
                continue;
            }
            printf("| key | type | default | range | unit | description |\n");
            printf("|---|---|---|---|---|---|\n");
            if (!sec && !started)
                printf("| `version` | integer | %d | %d | | config format version; required |\n",
                       CFG_VERSION, CFG_VERSION);
            cur = sec;
            started = 1;
        }
        if (sec && strcmp(sec->name, "vector.cpr") == 0) {
            i = print_matrix(&m, k, n, i, sec) - 1;
            continue;
        }
        char def[160], lo[48], hi[48];
        npu_diag d;
        if (cfg_get(&m, k[i].key, def, sizeof def, &d) != NPU_OK) {
            fprintf(stderr, "cfg-docgen: %s\n", d.msg);
            return 1;
        }
        int size = strcmp(k[i].unit, "B") == 0;
        int integral = k[i].type != CFG_T_DOUBLE;
        printf("| `%s` | %s | ", k[i].key, cfg_type_name(k[i].type));
        if (k[i].type == CFG_T_STRING || k[i].type == CFG_T_ENUM) printf("\"%s\"", def);
        else if (size) {
            double v = strtod(def, NULL);
            char h[32];
            human_size(v, h, sizeof h);
            printf("%s%s%s%s", def, h[0] ? " (" : "", h, h[0] ? ")" : "");
        } else printf("%s", def);
        printf(" | ");
        switch (k[i].type) {
        case CFG_T_INT:
        case CFG_T_UINT:
        case CFG_T_DOUBLE:
            num(k[i].min, integral, size, lo, sizeof lo);
            num(k[i].max, integral, size, hi, sizeof hi);
            printf("%s..%s", lo, hi);
            break;
        case CFG_T_BOOL: printf("true, false"); break;
        case CFG_T_ENUM: cell(k[i].choices); break;
        case CFG_T_STRING: printf("up to %.0f chars", k[i].max); break;
        }
        printf(" | %s | ", k[i].unit);
        cell(k[i].doc);
        printf(" |\n");
    }
    printf("\n### memory\n\n"
           "The `memory` object (L2 and HBM) belongs to the memory model (memmodel); its\n"
           "key table is memmodel/mem_keys.def, its rules and presets are described in\n"
           "docs/memmodel.md. Its keys, as `--set` names them:\n\n");
    cJSON *mem = mem_config_dump(&m.mem);
    if (!mem || memory_rows(mem) != 0) {
        fprintf(stderr, "cfg-docgen: out of memory\n");
        cJSON_Delete(mem);
        return 1;
    }
    cJSON_Delete(mem);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--default-json") == 0) {
        cfg_machine m;
        cfg_default(&m);
        char *s = cfg_dump_json(&m);
        if (!s) {
            fprintf(stderr, "cfg-docgen: out of memory\n");
            return 1;
        }
        fputs(s, stdout);
        npu_free(s);
        return 0;
    }
    if (argc != 1) {
        fprintf(stderr, "usage: cfg-docgen [--default-json]\n");
        return 2;
    }
    return print_docs();
}
