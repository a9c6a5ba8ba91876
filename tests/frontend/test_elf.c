/* test_elf.c — kernel ELF files: write -> load round trip, symbol lookup,
 * and a corpus of corrupted files (every truncation, flipped bytes in every
 * header field, targeted bad values), none of which may crash. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/asm.h"
#include "frontend/elf.h"
#include "isa/isa.h"
#include "tests/frontend/suites.h"

static const char *kernel =
    ".globl main\n.type main, @function\nmain:\n"
    "  la a0, tab\n"
    "  li a1, 4\n"
    ".Lloop:\n"
    "  addi a1, a1, -1\n"
    "  bnez a1, .Lloop\n"
    "  call helper\n"
    "  halt\n"
    ".type helper, @function\nhelper:\n"
    "  nop\n"
    ".Linner: ret\n"
    ".rodata\n.globl tab\ntab: .word 1, 2, 3, 4\n"
    ".data\nvar: .dword 7\n"
    ".bss\nbuf: .zero 256\n";

static void build(npu_buf *b, asm_output *o)
{
    npu_diag d = {0};
    ck_assert_msg(asm_assemble_mem(kernel, strlen(kernel), "k.s", NULL, o, &d) == NPU_OK, "%s", d.msg);
    ck_assert_msg(elf_write_mem(o, b, &d) == NPU_OK, "%s", d.msg);
}

static uint64_t rd(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void wr(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

START_TEST(roundtrip)
{
    npu_buf b;
    asm_output o;
    build(&b, &o);
    elf_image img;
    npu_diag d = {0};
    ck_assert_msg(elf_load_mem(b.data, b.len, "k.elf", &img, &d) == NPU_OK, "%s", d.msg);
    ck_assert_uint_eq(img.ntext, o.ntext);
    ck_assert(memcmp(img.text, o.text, o.ntext * 8) == 0);
    ck_assert_uint_eq(img.entry, o.entry);
    ck_assert_uint_eq(img.text_addr, 0);
    ck_assert_uint_eq(img.nsegs, 3);
    for (size_t i = 0; i < img.nsegs; i++) {
        const elf_seg *g = &img.segs[i];
        const asm_data *a = &o.data[g->kind];
        ck_assert_uint_eq(g->addr, a->addr);
        ck_assert_uint_eq(g->size, a->size);
        if (g->kind == ASM_SEC_BSS) {
            ck_assert_uint_eq(g->filesz, 0);
            ck_assert_ptr_null(g->data);
        } else {
            ck_assert_uint_eq(g->filesz, a->size);
            ck_assert(memcmp(g->data, a->bytes, a->size) == 0);
        }
    }
    ck_assert_uint_eq(img.nsyms, o.nsyms);
    const elf_sym *m = elf_find_sym(&img, "main");
    ck_assert_ptr_nonnull(m);
    ck_assert(m->is_func && m->is_global);
    ck_assert_uint_eq(m->addr, 0);
    ck_assert_uint_eq(m->size, 6 * 8);  /* la li addi bnez call halt: up to helper */
    const elf_sym *t = elf_find_sym(&img, "tab");
    ck_assert_uint_eq(t->addr, ASM_GM_DATA_BASE);
    ck_assert_uint_eq(t->size, 16);
    ck_assert_int_eq(t->section, ASM_SEC_RODATA);
    ck_assert(!t->is_func);
    const elf_sym *l = elf_find_sym(&img, ".Lloop");
    ck_assert(!l->is_global && !l->is_func);
    ck_assert_ptr_null(elf_find_sym(&img, "nothere"));
    /* innermost symbol at a pc */
    uint64_t off;
    ck_assert_str_eq(elf_sym_at(&img, 0, &off)->name, "main");
    ck_assert_str_eq(elf_sym_at(&img, l->addr + 8, &off)->name, ".Lloop");
    ck_assert_uint_eq(off, 8);
    const elf_sym *h = elf_find_sym(&img, "helper");
    ck_assert_str_eq(elf_sym_at(&img, h->addr, &off)->name, "helper");
    ck_assert_str_eq(elf_sym_at(&img, h->addr + 8, &off)->name, ".Linner");
    elf_free(&img);
    elf_free(&img); /* idempotent */
    asm_output_free(&o);
    npu_buf_free(&b);
}
END_TEST

/* Truncated at every length: each must fail with a message. */
START_TEST(every_truncation_fails)
{
    npu_buf b;
    asm_output o;
    build(&b, &o);
    for (size_t n = 0; n < b.len; n++) {
        uint8_t *cp = malloc(n ? n : 1);  /* exact size, so ASan sees any overread */
        memcpy(cp, b.data, n);
        elf_image img;
        npu_diag d = {0};
        ck_assert_msg(elf_load_mem(cp, n, "t.elf", &img, &d) != NPU_OK, "truncated at %zu loaded", n);
        ck_assert_msg(strncmp(d.msg, "t.elf: ", 7) == 0 && strlen(d.msg) > 12, "message at %zu: %s", n, d.msg);
        ck_assert_ptr_null(img.text);
        free(cp);
    }
    asm_output_free(&o);
    npu_buf_free(&b);
}
END_TEST

/* Every byte of every header and of the symbol table, flipped in a few
 * ways: the loader either accepts the file or rejects it with a message;
 * it never crashes or reads out of bounds. */
START_TEST(flipped_header_bytes)
{
    npu_buf b;
    asm_output o;
    build(&b, &o);
    uint64_t phoff = rd(b.data + 32, 8), shoff = rd(b.data + 40, 8);
    uint64_t phnum = rd(b.data + 56, 2), shnum = rd(b.data + 60, 2);
    /* regions: ELF header, program headers, section headers, .symtab */
    uint64_t reg[4][2] = {{0, 64}, {phoff, phnum * 56}, {shoff, shnum * 64}, {0, 0}};
    for (uint64_t i = 0; i < shnum; i++) {
        const uint8_t *sh = b.data + shoff + i * 64;
        if (rd(sh + 4, 4) == 2)
            reg[3][0] = rd(sh + 24, 8), reg[3][1] = rd(sh + 32, 8);
    }
    ck_assert_uint_gt(reg[3][1], 0);
    static const uint8_t xors[] = {0x01, 0x80, 0xff, 0x10};
    long rejected = 0, accepted = 0;
    uint8_t *cp = malloc(b.len);
    for (int r = 0; r < 4; r++)
        for (uint64_t off = reg[r][0]; off < reg[r][0] + reg[r][1]; off++)
            for (size_t k = 0; k < sizeof xors + 1; k++) {
                memcpy(cp, b.data, b.len);
                if (k < sizeof xors)
                    cp[off] ^= xors[k];
                else
                    cp[off] = 0xff, cp[off - (off & 7)] = 0xff; /* big values in a field */
                elf_image img;
                npu_diag d = {0};
                if (elf_load_mem(cp, b.len, "f.elf", &img, &d) == NPU_OK) {
                    accepted++;
                    ck_assert_uint_ge(img.ntext, 1);
                    ck_assert_uint_lt(img.entry, img.ntext * 8);
                    elf_free(&img);
                } else {
                    rejected++;
                    ck_assert_msg(strlen(d.msg) > 10, "empty message for byte %llu", (unsigned long long)off);
                }
            }
    free(cp);
    ck_assert_int_gt(rejected, accepted / 4);
    asm_output_free(&o);
    npu_buf_free(&b);
}
END_TEST

/* Targeted bad values: each is rejected with a message naming the problem. */
typedef struct bad { uint64_t off; int width; uint64_t value; const char *want; } bad;

START_TEST(targeted_corruptions)
{
    npu_buf b;
    asm_output o;
    build(&b, &o);
    uint64_t shoff = rd(b.data + 40, 8), phoff = rd(b.data + 32, 8);
    /* our writer's section order: 1 .text, 2 .rodata, 3 .data, 4 .bss, 5 .symtab, 6 .strtab */
    uint64_t sh_text = shoff + 64, sh_sym = shoff + 5 * 64, sh_str = shoff + 6 * 64;
    uint64_t symoff = rd(b.data + sh_sym + 24, 8);
    bad cases[] = {
        {0, 1, 0x7e, "bad magic"},
        {4, 1, 1, "not ELFCLASS64"},
        {5, 1, 2, "not little-endian"},
        {6, 1, 2, "identification version"},
        {16, 2, 3, "not ET_EXEC"},
        {18, 2, 62, "e_machine 0x3e"},
        {20, 4, 0, "e_version"},
        {24, 8, 0x100000, "entry point 0x100000"},
        {24, 8, 4, "not 8-aligned"},
        {32, 8, 0xfffffffffffffff0ull, "program headers at offset"},
        {40, 8, 0x7fffffffffffffffull, "section headers at offset"},
        {52, 2, 40, "e_ehsize"},
        {54, 2, 32, "e_phentsize"},
        {58, 2, 40, "e_shentsize"},
        {62, 2, 99, "e_shstrndx"},
        {sh_text + 32, 8, 12, ".text size 12"},
        {sh_text + 24, 8, 0xffffffffffffff00ull, "extends past the end of the file"},
        {sh_text + 32, 8, 0xffffffffffff0000ull, "extends past the end of the file"},
        {sh_text + 16, 8, 0x40, ".text at address 0x40"},
        {sh_sym + 32, 8, 25, "entries must be 24 bytes"},
        {sh_sym + 24, 8, 1ull << 40, "extends past the end"},
        {sh_sym + 40, 4, 1, "not a string table"},
        {sh_str + 32, 8, 2, "outside .strtab or unterminated"},
        {symoff + 5 * 24, 4, 0xffffff, "outside .strtab"},
        {symoff + 5 * 24 + 8, 8, 0x7000000, "lies outside its section"},
        {symoff + 5 * 24 + 6, 2, 9, "section index 9"},
        {shoff + 64 * 2 + 16, 8, 0, "overlap"},                /* .rodata moved onto .text */
        {phoff + 56 + 16, 8, 0, "overlaps an earlier segment"}, /* segment 2 moved onto segment 1 */
        {phoff + 32, 8, 1u << 20, "p_filesz"},
        {phoff + 8, 8, 1ull << 50, "extends past the end of the file"},
        {phoff + 56 + 16, 8, 0x200000000ull, "not loaded by any PT_LOAD"},
    };
    uint8_t *cp = malloc(b.len);
    for (size_t i = 0; i < NPU_ARRAY_LEN(cases); i++) {
        memcpy(cp, b.data, b.len);
        wr(cp + cases[i].off, cases[i].value, cases[i].width);
        elf_image img;
        npu_diag d = {0};
        ck_assert_msg(elf_load_mem(cp, b.len, "c.elf", &img, &d) != NPU_OK, "case %zu (%s) loaded", i, cases[i].want);
        ck_assert_msg(strstr(d.msg, cases[i].want), "case %zu: '%s' lacks '%s'", i, d.msg, cases[i].want);
    }
    /* unterminated string table at the end */
    memcpy(cp, b.data, b.len);
    uint64_t stroff = rd(cp + sh_str + 24, 8), strsz = rd(cp + sh_str + 32, 8);
    cp[stroff + strsz - 1] = 'x';
    elf_image img;
    npu_diag d = {0};
    ck_assert_int_ne(elf_load_mem(cp, b.len, "c.elf", &img, &d), NPU_OK);
    ck_assert_ptr_nonnull(strstr(d.msg, "unterminated"));
    free(cp);
    asm_output_free(&o);
    npu_buf_free(&b);
}
END_TEST

START_TEST(file_io)
{
    npu_buf b;
    asm_output o;
    build(&b, &o);
    char path[] = "/tmp/npu-elf-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    npu_diag d = {0};
    ck_assert_msg(elf_write(path, &o, &d) == NPU_OK, "%s", d.msg);
    elf_image img;
    ck_assert_msg(elf_load_file(path, &img, &d) == NPU_OK, "%s", d.msg);
    ck_assert_uint_eq(img.ntext, o.ntext);
    elf_free(&img);
    remove(path);
    ck_assert_int_ne(elf_load_file(path, &img, &d), NPU_OK);
    ck_assert_ptr_nonnull(strstr(d.msg, path));
    /* an empty program cannot be a kernel */
    npu_buf_free(&b);
    asm_output empty;
    memset(&empty, 0, sizeof empty);
    ck_assert_int_ne(elf_write_mem(&empty, &b, &d), NPU_OK);
    ck_assert_ptr_nonnull(strstr(d.msg, "no instructions"));
    asm_output_free(&o);
}
END_TEST

START_TEST(allocation_failures)
{
    npu_buf b;
    asm_output o;
    build(&b, &o);
    for (long n = 1;; n++) {
        npu_alloc_fail_after(n);
        elf_image img;
        npu_diag d = {0};
        npu_status s = elf_load_mem(b.data, b.len, "a.elf", &img, &d);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (!failed) {
            ck_assert_int_eq(s, NPU_OK);
            elf_free(&img);
            break;
        }
        ck_assert_int_eq(s, NPU_ENOMEM);
        ck_assert_ptr_null(img.text);
    }
    for (long n = 1;; n++) {
        npu_alloc_fail_after(n);
        npu_buf w;
        npu_diag d = {0};
        npu_status s = elf_write_mem(&o, &w, &d);
        int failed = npu_alloc_failed();
        npu_alloc_fail_after(0);
        if (!failed) {
            ck_assert_int_eq(s, NPU_OK);
            ck_assert_uint_eq(w.len, b.len);
            ck_assert(memcmp(w.data, b.data, b.len) == 0);
            npu_buf_free(&w);
            break;
        }
        ck_assert_int_eq(s, NPU_ENOMEM);
    }
    asm_output_free(&o);
    npu_buf_free(&b);
}
END_TEST

Suite *elf_suite(void)
{
    Suite *s = suite_create("elf");
    TCase *t = tcase_create("elf");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, roundtrip);
    tcase_add_test(t, every_truncation_fails);
    tcase_add_test(t, flipped_header_bytes);
    tcase_add_test(t, targeted_corruptions);
    tcase_add_test(t, file_io);
    tcase_add_test(t, allocation_failures);
    suite_add_tcase(s, t);
    return s;
}
