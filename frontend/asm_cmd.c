/* asm_cmd.c — the bodies of `npusim asm` and `npusim dis`.
 *
 * Command code may print (it is the CLI's side of the library): messages go
 * to stderr, listings to stdout. Exit codes: 0 ok, 2 bad input or a bad
 * command line (as every npusim command: docs/reliability.md). */
#include "frontend/asm.h"
#include "frontend/elf.h"
#include "isa/isa.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void asm_usage(FILE *f)
{
    fprintf(f,
            "usage: npusim asm KERNEL.s -o KERNEL.elf [-I DIR]... [-D NAME[=VALUE]]...\n"
            "  Assemble a kernel into an ELF file (docs/asm.md, docs/elf.md).\n"
            "  -o FILE        output ELF (required)\n"
            "  -I DIR         search DIR for .include files (after the including file's directory)\n"
            "  -D NAME=VALUE  define NAME as an integer constant (.equ) before the first line\n"
            "  --max-errors N stop after N errors (default 50)\n"
            "  Errors are printed as file:line:col with the line and a caret; nothing is written\n"
            "  when there are errors. Exit status: 0 written, 2 errors or a bad command line.\n");
}

static void dis_usage(FILE *f)
{
    fprintf(f,
            "usage: npusim dis KERNEL.elf [--no-raw] [--no-data]\n"
            "  Disassemble a kernel: address, raw encoding, instruction, with symbols as labels;\n"
            "  data sections as hex.\n"
            "  --no-raw   leave out the raw instruction words\n"
            "  --no-data  leave out the data sections\n"
            "  Exit status: 0 ok, 2 the file is not a valid kernel ELF or holds illegal words.\n");
}

int asm_cmd_asm(int argc, char **argv)
{
    const char *in = NULL, *outp = NULL;
    const char **inc = npu_calloc((size_t)argc + 1, sizeof *inc);
    asm_define *defs = npu_calloc((size_t)argc + 1, sizeof *defs);
    char (*names)[128] = npu_calloc((size_t)argc + 1, sizeof *names);
    size_t ninc = 0, ndef = 0;
    int maxerr = 0, rc = 2;
    if (!inc || !defs || !names) {
        fprintf(stderr, "npusim asm: out of memory\n");
        goto out;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            asm_usage(stdout);
            rc = 0;
            goto out;
        } else if (!strcmp(a, "-o") || !strcmp(a, "-I") || !strcmp(a, "-D") || !strcmp(a, "--max-errors")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "npusim asm: option %s needs a value\n", a);
                goto out;
            }
            const char *v = argv[++i];
            if (a[1] == 'o') {
                outp = v;
            } else if (a[1] == 'I') {
                inc[ninc++] = v;
            } else if (a[1] == 'D') {
                if (asm_parse_define(v, names[ndef], sizeof names[ndef], &defs[ndef].value)) {
                    fprintf(stderr, "npusim asm: -D %s: expected NAME=VALUE with an integer VALUE\n", v);
                    goto out;
                }
                defs[ndef].name = names[ndef];
                ndef++;
            } else {
                char *end;
                long n = strtol(v, &end, 10);
                if (*end || n < 1 || n > 100000) {
                    fprintf(stderr, "npusim asm: --max-errors %s: expected a positive integer\n", v);
                    goto out;
                }
                maxerr = (int)n;
            }
        } else if (!strncmp(a, "-I", 2) && a[2]) {
            inc[ninc++] = a + 2;
        } else if (!strncmp(a, "-D", 2) && a[2]) {
            if (asm_parse_define(a + 2, names[ndef], sizeof names[ndef], &defs[ndef].value)) {
                fprintf(stderr, "npusim asm: %s: expected -DNAME=VALUE with an integer VALUE\n", a);
                goto out;
            }
            defs[ndef].name = names[ndef];
            ndef++;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "npusim asm: unknown option '%s' (see npusim asm --help)\n", a);
            goto out;
        } else if (!in) {
            in = a;
        } else {
            fprintf(stderr, "npusim asm: more than one input file ('%s' and '%s')\n", in, a);
            goto out;
        }
    }
    if (!in || !outp) {
        fprintf(stderr, "npusim asm: %s\n", !in ? "no input file" : "no output file (-o KERNEL.elf)");
        asm_usage(stderr);
        goto out;
    }
    asm_opts opts = {inc, ninc, defs, ndef, maxerr};
    asm_output o;
    npu_diag d = {0};
    npu_status s = asm_assemble_file(in, &opts, &o, &d);
    npu_buf b = {0};
    for (size_t i = 0; i < o.nmsgs; i++)
        asm_msg_format(&o.msgs[i], &b);
    if (b.len)
        fwrite(b.data, 1, b.len, stderr);
    npu_buf_free(&b);
    if (s == NPU_OK) {
        s = elf_write(outp, &o, &d);
        if (s)  /* name the source too: the problem (e.g. no .text) is in it */
            fprintf(stderr, "npusim asm: %s: %s\n", in, d.msg);
    } else if (o.nerrors) {
        fprintf(stderr, "npusim asm: %zu error%s; %s not written\n", o.nerrors, o.nerrors == 1 ? "" : "s",
                outp);
    } else {
        fprintf(stderr, "npusim asm: %s\n", d.msg);
    }
    rc = s == NPU_OK ? 0 : 2;   /* 2: bad input or error, as every command */
    asm_output_free(&o);
out:
    npu_free(inc);
    npu_free(defs);
    npu_free(names);
    return rc;
}

typedef struct symctx { const elf_image *img; } symctx;

static const char *symbolize(void *user, uint64_t addr, uint64_t *off)
{
    const symctx *s = user;
    const elf_sym *y = elf_sym_at(s->img, addr, off);
    return y ? y->name : NULL;
}

int asm_cmd_dis(int argc, char **argv)
{
    const char *in = NULL;
    int raw = 1, data = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            dis_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--no-raw")) {
            raw = 0;
        } else if (!strcmp(a, "--no-data")) {
            data = 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "npusim dis: unknown option '%s' (see npusim dis --help)\n", a);
            return 2;
        } else if (!in) {
            in = a;
        } else {
            fprintf(stderr, "npusim dis: more than one input file ('%s' and '%s')\n", in, a);
            return 2;
        }
    }
    if (!in) {
        fprintf(stderr, "npusim dis: no input file\n");
        dis_usage(stderr);
        return 2;
    }
    elf_image img;
    npu_diag d = {0};
    if (elf_load_file(in, &img, &d)) {
        fprintf(stderr, "npusim dis: %s\n", d.msg);
        return 2;
    }
    symctx sc = {&img};
    printf("# %s: %zu instructions, entry 0x%llx\n", in, img.ntext, (unsigned long long)img.entry);
    printf("\n.text:\n");
    int bad = 0;
    for (size_t i = 0; i < img.ntext; i++) {
        uint64_t pc = i * 8;
        for (size_t k = 0; k < img.nsyms; k++) {
            const elf_sym *y = &img.syms[k];
            if (y->section == ASM_SEC_TEXT && y->addr == pc)
                printf("%s%s:%s\n", y->is_func ? "\n" : "", y->name,
                       y->is_func ? (y->is_global ? "    # global function" : "    # function") : "");
        }
        isa_insn insn;
        char txt[160];
        npu_diag dd;
        if (isa_decode(img.text[i], &insn, &dd)) {
            snprintf(txt, sizeof txt, ".dword 0x%016llx    # %.100s", (unsigned long long)img.text[i], dd.msg);
            bad++;
        } else {
            isa_disasm(&insn, pc, txt, sizeof txt, symbolize, &sc);
        }
        if (raw)
            printf("  %8llx:  %016llx  %s\n", (unsigned long long)pc, (unsigned long long)img.text[i], txt);
        else
            printf("  %8llx:  %s\n", (unsigned long long)pc, txt);
    }
    static const char *const secname[] = {".text", ".rodata", ".data", ".bss"};
    for (size_t s = 0; data && s < img.nsegs; s++) {
        const elf_seg *g = &img.segs[s];
        printf("\n%s: 0x%llx, %llu bytes\n", secname[g->kind], (unsigned long long)g->addr,
               (unsigned long long)g->size);
        /* symbols of the section by address (the file lists locals first) */
        uint64_t last = 0;
        int have_last = 0;
        for (;;) {
            const elf_sym *next = NULL;
            for (size_t k = 0; k < img.nsyms; k++) {
                const elf_sym *y = &img.syms[k];
                if (y->section != g->kind || (have_last && y->addr <= last))
                    continue;
                if (!next || y->addr < next->addr)
                    next = y;
            }
            if (!next)
                break;
            for (size_t k = 0; k < img.nsyms; k++) {
                const elf_sym *y = &img.syms[k];
                if (y->section == g->kind && y->addr == next->addr)
                    printf("  # %s = 0x%llx (%llu bytes)\n", y->name, (unsigned long long)y->addr,
                           (unsigned long long)y->size);
            }
            last = next->addr;
            have_last = 1;
        }
        if (!g->filesz)
            continue;
        for (uint64_t off = 0; off < g->filesz; off += 16) {
            printf("  %9llx: ", (unsigned long long)(g->addr + off));
            for (uint64_t j = off; j < off + 16 && j < g->filesz; j++)
                printf(" %02x", g->data[j]);
            printf("\n");
        }
    }
    elf_free(&img);
    if (bad) {
        fprintf(stderr, "npusim dis: %s: %d word%s of .text are not legal instructions\n", in, bad,
                bad == 1 ? "" : "s");
        return 2;
    }
    return 0;
}
