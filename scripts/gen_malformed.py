#!/usr/bin/env python3
"""gen_malformed.py — make the malformed-input corpus of tests/malformed/.

    scripts/gen_malformed.py --npusim build/bin/npusim --synth build/bin/npt-synth \
        [-o tests/malformed]

Deterministic (fixed seed): running it again gives the same files. Valid
bases come from the tree (kernels, configs) and from the tools (an ELF
assembled by npusim, a trace from npt-synth, .npy files written here); each
base is then damaged in the ways users' broken inputs are: truncated,
bit-flipped, oversized fields, wrong types, huge dimensions, negative sizes,
deep nesting, NUL bytes, invalid UTF-8. A mutant the tool still accepts
(exit 0) is not malformed and is dropped, so every file kept must be
rejected; tests/e2e/t_malformed.sh checks how. Only python3's standard
library is used."""
import argparse
import json
import os
import random
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
rng = random.Random(20261201)


def npy_bytes(header, data=b'', major=1):
    """A .npy file with this header text (padded as numpy pads it)."""
    h = header.encode('latin-1') if isinstance(header, str) else header
    pre = 10 if major == 1 else 12
    pad = (64 - (pre + len(h) + 1) % 64) % 64
    h = h + b' ' * pad + b'\n'
    size = struct.pack('<H', len(h)) if major == 1 else struct.pack('<I', len(h))
    return b'\x93NUMPY' + bytes([major, 0]) + size + h + data


def good_npy(n=8):
    return npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (%d,), }" % n,
                     b''.join(struct.pack('<i', i) for i in range(n)))


def truncations(b, n):
    cuts = sorted({0, 1, len(b) // 2, len(b) - 1} | {rng.randrange(1, len(b)) for _ in range(n)})
    return [(f'trunc{c}', b[:c]) for c in cuts if c < len(b)]


def bitflips(b, n, lo=0, hi=None):
    hi = len(b) if hi is None else min(hi, len(b))
    out = []
    for _ in range(n):
        i = rng.randrange(lo, hi)
        bit = rng.randrange(8)
        m = bytearray(b)
        m[i] ^= 1 << bit
        out.append((f'flip{i}.{bit}', bytes(m)))
    return out


def text_damage(t):
    """Damage common to every text format."""
    b = t.encode()
    mid = len(b) // 2
    return [
        ('empty', b''),
        ('nul-middle', b[:mid] + b'\0' + b[mid:]),
        ('nul-start', b'\0' + b),
        ('utf8-invalid', b[:mid] + b'\xff\xfe\xc3\x28' + b[mid:]),
        ('utf8-overlong', b[:mid] + b'\xc0\xaf' + b[mid:]),
        ('utf8-surrogate', b[:mid] + b'\xed\xa0\x80' + b[mid:]),
        ('binary-garbage', bytes(rng.randrange(256) for _ in range(300))),
    ]


# ---- per format ------------------------------------------------------------

def gen_asm():
    base = open(os.path.join(ROOT, 'tests/malformed/scale.s')).read()
    out = text_damage(base)
    out += truncations(base.encode(), 6)
    out += bitflips(base.encode(), 10, 200)
    lines = [
        ('unknown-mnemonic', 'frobnicate t0, t1\n'),
        ('bad-register', 'add t99, t0, t1\n'),
        ('imm-overflow', 'li t0, 0x1ffffffffffffffffffff\n'),
        ('imm-negative-shift', 'slli t0, t0, -1\n'),
        ('imm-huge-shift', 'slli t0, t0, 4096\n'),
        ('undefined-label', 'j nowhere\n'),
        ('duplicate-label', 'a:\na:\n halt\n'),
        ('align-huge', '.align 64\n'),
        ('align-negative', '.align -3\n'),
        ('space-huge', '.data\n.space 0x7fffffffffffffff\n'),
        ('space-negative', '.data\n.space -16\n'),
        ('zero-huge', '.bss\n.zero 0xffffffffffff\n'),
        ('fill-huge', '.data\n.fill 0x7fffffff, 8, 0\n'),
        ('long-identifier', 'l' * 20000 + ':\n halt\n'),
        ('long-line', 'add t0, t0, ' + 't1' * 10000 + '\n'),
        ('deep-parens', 'li t0, ' + '(' * 10000 + '1' + ')' * 10000 + '\n'),
        ('unclosed-paren', 'li t0, (1 + 2\n'),
        ('div-zero', '.equ X, 1 / 0\n'),
        ('mod-zero', '.equ X, 1 % 0\n'),
        ('include-missing', '.include "no/such/file.inc"\n'),
        ('include-self', '.include "include-self.s"\n'),
        ('include-dir', '.include "/"\n'),
        ('macro-recursive', '.macro m\n m\n.endm\n m\n'),
        ('macro-unterminated', '.macro m\n halt\n'),
        ('if-unterminated', '.if 1\n halt\n'),
        ('endif-stray', '.endif\n'),
        ('rept-huge', '.rept 100000000\n nop\n.endr\n'),
        ('rept-negative', '.rept -1\n nop\n.endr\n'),
        ('string-unterminated', '.data\n.ascii "abc\n'),
        ('string-bad-escape', '.data\n.ascii "\\q"\n'),
        ('error-directive', '.error "stop"\n'),
        ('unknown-directive', '.frob 1\n'),
        ('wrong-type-dtype', 'vadd.x99 v0, v1, v2\n'),
        ('operands-missing', 'add t0\n'),
        ('operands-extra', 'add t0, t1, t2, t3, t4\n'),
        ('equ-cycle', '.equ A, B\n.equ B, A\n li t0, A\n'),
        ('globl-undefined', '.globl nothere\n halt\n'),
        ('crlf-garbage', 'main:\r\n\tfrob\r\n'),
        ('only-comment-then-junk', '# ok\n$$$\n'),
        ('section-unknown', '.section .weird\n halt\n'),
        ('sign-min-overflow', 'li t0, -0x8000000000000001\n'),
    ]
    for name, src in lines:
        out.append((name, src.encode()))
    return [(n + '.s', b) for n, b in out]


def elf_fields(b):
    """Offsets of the ELF header fields worth damaging."""
    return {'e_ident_class': 4, 'e_ident_data': 5, 'e_ident_version': 6, 'e_type': 16,
            'e_machine': 18, 'e_version': 20, 'e_entry': 24, 'e_phoff': 32, 'e_shoff': 40,
            'e_flags': 48, 'e_ehsize': 52, 'e_phentsize': 54, 'e_phnum': 56,
            'e_shentsize': 58, 'e_shnum': 60, 'e_shstrndx': 62}


def gen_elf(elf):
    out = truncations(elf, 12)
    out += bitflips(elf, 20, 0, 64)
    out += bitflips(elf, 12, 64)
    f = elf_fields(elf)
    widths = {'e_entry': 8, 'e_phoff': 8, 'e_shoff': 8, 'e_version': 4, 'e_flags': 4}
    for name, off in f.items():
        w = widths.get(name, 2 if off >= 16 else 1)
        for tag, val in (('max', (1 << (8 * w)) - 1), ('zero', 0), ('big', 1 << (8 * w - 1))):
            m = bytearray(elf)
            m[off:off + w] = val.to_bytes(w, 'little')
            if bytes(m) != elf:
                out.append((f'{name}-{tag}', bytes(m)))
    # section headers: damage every sh_offset / sh_size / sh_link of each
    shoff, = struct.unpack_from('<Q', elf, 40)
    shentsize, shnum = struct.unpack_from('<HH', elf, 58)
    for i in range(1, shnum):
        base = shoff + i * shentsize
        for field, off, w in (('offset', 24, 8), ('size', 32, 8), ('link', 40, 4), ('entsize', 56, 8)):
            m = bytearray(elf)
            m[base + off:base + off + w] = ((1 << (8 * w)) - 1 - 7).to_bytes(w, 'little')
            out.append((f'sh{i}-{field}-huge', bytes(m)))
    out.append(('not-elf-text', b'#!/bin/sh\necho this is not an elf\n'))
    out.append(('only-magic', b'\x7fELF'))
    out.append(('elf32', elf[:4] + b'\x01' + elf[5:]))
    out.append(('big-endian', elf[:5] + b'\x02' + elf[6:]))
    out.append(('zero-padded', elf + b'\0' * 0) if False else ('all-zero', b'\0' * len(elf)))
    return [(n + '.elf', b) for n, b in out]


def gen_config():
    base = open(os.path.join(ROOT, 'configs/small.json')).read()
    out = text_damage(base)
    out += truncations(base.encode(), 6)
    j = json.loads(base)

    def var(name, fn):
        d = json.loads(base)
        fn(d)
        out.append((name, json.dumps(d, indent=1).encode()))

    var('version-missing', lambda d: d.pop('version'))
    var('version-future', lambda d: d.update(version=99))
    var('version-string', lambda d: d.update(version='1'))
    var('version-float', lambda d: d.update(version=1.5))
    var('unknown-key', lambda d: d.update(frobnicate=1))
    var('unknown-nested-key', lambda d: d['chip'].update(warp=9))
    var('cores-zero', lambda d: d['chip'].update(cores=0))
    var('cores-negative', lambda d: d['chip'].update(cores=-2))
    var('cores-huge', lambda d: d['chip'].update(cores=10 ** 30))
    var('cores-string', lambda d: d['chip'].update(cores='two'))
    var('cores-float', lambda d: d['chip'].update(cores=2.5))
    var('cores-null', lambda d: d['chip'].update(cores=None))
    var('cores-array', lambda d: d['chip'].update(cores=[2]))
    var('chip-array', lambda d: d.update(chip=[1, 2]))
    var('chip-string', lambda d: d.update(chip='big'))
    var('name-huge', lambda d: d.update(name='n' * 5000))
    var('name-number', lambda d: d.update(name=5))
    var('max-cycles-negative', lambda d: d['timing'].update(max_cycles=-1))
    var('max-cycles-2e64', lambda d: d['timing'].update(max_cycles=2 ** 64))
    var('ub-size-odd', lambda d: d.update(core={'ub': {'size': 12345}}))
    var('ub-size-zero', lambda d: d.update(core={'ub': {'size': 0}}))
    var('l1-align-not-pow2', lambda d: d.update(core={'l1': {'align': 48}}))
    var('memory-stacks-zero', lambda d: d['memory']['hbm'].update(stacks=0))
    var('memory-stacks-huge', lambda d: d['memory']['hbm'].update(stacks=1 << 40))
    var('memory-mapping-bad', lambda d: d['memory']['hbm'].update(mapping='x9 q'))
    var('memory-mapping-empty', lambda d: d['memory']['hbm'].update(mapping=''))
    var('memory-l2-size-negative', lambda d: d['memory']['l2'].update(size_bytes=-8))
    var('memory-l2-slices-string', lambda d: d['memory']['l2'].update(slices='4'))
    var('memory-unknown', lambda d: d['memory'].update(warp=1))
    var('memory-array', lambda d: d.update(memory=[]))
    var('timing-model-bad', lambda d: d['timing'].update(memory_model='quantum'))
    var('clock-nan-string', lambda d: d['chip'].update(clock_ghz='NaN'))
    var('clock-negative', lambda d: d['chip'].update(clock_ghz=-1.0))
    raw = [
        ('top-array', '[1, 2, 3]'),
        ('top-string', '"config"'),
        ('top-number', '42'),
        ('top-null', 'null'),
        ('deep-nesting-arrays', '{"version": 1, "chip": ' + '[' * 20000 + ']' * 20000 + '}'),
        ('deep-nesting-objects', '{"version": 1, "x": ' + '{"a":' * 50000 + '1' + '}' * 50001),
        ('duplicate-key', '{"version": 1, "chip": {"cores": 2, "cores": 3}}'),
        ('trailing-comma', '{"version": 1, "chip": {"cores": 2,},}'),
        ('trailing-garbage', '{"version": 1} xyz'),
        ('two-objects', '{"version": 1}{"version": 1}'),
        ('comment', '{"version": 1, /* no */ "chip": {}}'),
        ('single-quotes', "{'version': 1}"),
        ('number-1e400', '{"version": 1, "chip": {"clock_ghz": 1e400}}'),
        ('number-huge-int', '{"version": 1, "chip": {"cores": 123456789012345678901234567890}}'),
        ('number-leading-zero', '{"version": 01}'),
        ('number-hex', '{"version": 0x1}'),
        ('string-unterminated', '{"version": 1, "name": "abc'),
        ('string-bad-escape', '{"version": 1, "name": "a\\qb"}'),
        ('string-nul-escape', '{"version": 1, "name": "a\\u0000b"}'),
        ('string-lone-surrogate', '{"version": 1, "name": "\\ud800"}'),
        ('key-nul', '{"version": 1, "ch\\u0000ip": {}}'),
        ('long-key', '{"version": 1, "' + 'k' * 20000 + '": 1}'),
        ('only-whitespace', '   \n\t  '),
        ('unclosed', '{"version": 1, "chip": {"cores": 2}'),
    ]
    out += [(n, s.encode()) for n, s in raw]
    return [(n + '.json', b) for n, b in out]


LAUNCH_BASE = {
    "version": 1,
    "kernel": "scale.elf",
    "cores": 2,
    "args": [
        {"name": "A", "kind": "in", "file": "a.npy"},
        {"name": "M", "kind": "scalar", "value": 3},
        {"name": "C", "kind": "out", "dtype": "int32", "shape": [8], "file": "c.npy"},
        {"name": "N", "kind": "scalar", "value": 8},
    ],
}


def gen_launch():
    base = json.dumps(LAUNCH_BASE, indent=1)
    out = text_damage(base)
    out += truncations(base.encode(), 6)

    def var(name, fn):
        d = json.loads(base)
        fn(d)
        out.append((name, json.dumps(d, indent=1).encode()))

    var('version-missing', lambda d: d.pop('version'))
    var('version-future', lambda d: d.update(version=7))
    var('kernel-missing', lambda d: d.pop('kernel'))
    var('kernel-number', lambda d: d.update(kernel=5))
    var('kernel-nonexistent', lambda d: d.update(kernel='no-such.elf'))
    var('kernel-is-npy', lambda d: d.update(kernel='a.npy'))
    var('kernel-empty', lambda d: d.update(kernel=''))
    var('cores-zero', lambda d: d.update(cores=0))
    var('cores-negative', lambda d: d.update(cores=-1))
    var('cores-huge', lambda d: d.update(cores=1 << 40))
    var('cores-string', lambda d: d.update(cores='2'))
    var('mode-bad', lambda d: d.update(mode='fast'))
    var('args-object', lambda d: d.update(args={'A': 1}))
    var('args-string', lambda d: d.update(args='A'))
    var('arg-kind-bad', lambda d: d['args'][0].update(kind='sideways'))
    var('arg-name-missing', lambda d: d['args'][0].pop('name'))
    var('arg-file-missing', lambda d: d['args'][0].pop('file'))
    var('arg-file-nonexistent', lambda d: d['args'][0].update(file='nope.npy'))
    var('arg-file-is-elf', lambda d: d['args'][0].update(file='scale.elf'))
    var('arg-file-is-dir', lambda d: d['args'][0].update(file='.'))
    var('arg-scalar-string', lambda d: d['args'][1].update(value='three'))
    var('arg-scalar-huge', lambda d: d['args'][1].update(value=1e300))
    var('arg-scalar-missing', lambda d: d['args'][1].pop('value'))
    var('out-dtype-bad', lambda d: d['args'][2].update(dtype='float128'))
    var('out-shape-negative', lambda d: d['args'][2].update(shape=[-8]))
    var('out-shape-huge', lambda d: d['args'][2].update(shape=[1 << 40, 1 << 40]))
    var('out-shape-deep', lambda d: d['args'][2].update(shape=[1] * 40))
    var('out-shape-string', lambda d: d['args'][2].update(shape='8'))
    var('out-shape-float', lambda d: d['args'][2].update(shape=[8.5]))
    var('out-shape-zero-elems-wrong', lambda d: d['args'][2].update(shape=[0, 1 << 62]))
    var('arg-duplicate-name', lambda d: d['args'].append(dict(d['args'][0])))
    var('expect-unknown-arg', lambda d: d.update(expect={'Q': {'file': 'a.npy'}}))
    var('expect-rtol-negative', lambda d: d.update(expect={'C': {'file': 'a.npy', 'rtol': -1}}))
    var('expect-array', lambda d: d.update(expect=[1]))
    var('set-bad-key', lambda d: d.update(set=['chip.warp=1']))
    var('set-bad-value', lambda d: d.update(set=['chip.cores=many']))
    var('config-nonexistent', lambda d: d.update(config='no-such-config.json'))
    var('unknown-key', lambda d: d.update(frob=True))
    raw = [
        ('top-array', '[]'),
        ('deep-nesting', '{"version": 1, "args": ' + '[' * 20000 + ']' * 20000 + '}'),
        ('args-deep-objects', '{"version": 1, "kernel": "scale.elf", "args": [' + '{"a":' * 20000 + '1' + '}' * 20000 + ']}'),
        ('number-1e400', '{"version": 1, "kernel": "scale.elf", "cores": 1e400}'),
        ('unclosed', '{"version": 1, "kernel": "scale.elf"'),
    ]
    out += [(n, s.encode()) for n, s in raw]
    return [(n + '.json', b) for n, b in out]


def gen_npy():
    g = good_npy()
    out = truncations(g, 10)
    out += bitflips(g, 14, 0, 10)
    hdrs = [
        ('fortran-order', "{'descr': '<i4', 'fortran_order': True, 'shape': (8,), }"),
        ('big-endian', "{'descr': '>i4', 'fortran_order': False, 'shape': (8,), }"),
        ('object-dtype', "{'descr': '|O', 'fortran_order': False, 'shape': (8,), }"),
        ('structured-dtype', "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (8,), }"),
        ('complex-dtype', "{'descr': '<c8', 'fortran_order': False, 'shape': (4,), }"),
        ('unicode-dtype', "{'descr': '<U1', 'fortran_order': False, 'shape': (8,), }"),
        ('unknown-dtype', "{'descr': '<q9', 'fortran_order': False, 'shape': (8,), }"),
        ('descr-number', "{'descr': 4, 'fortran_order': False, 'shape': (8,), }"),
        ('descr-missing', "{'fortran_order': False, 'shape': (8,), }"),
        ('shape-missing', "{'descr': '<i4', 'fortran_order': False, }"),
        ('fortran-missing', "{'descr': '<i4', 'shape': (8,), }"),
        ('fortran-string', "{'descr': '<i4', 'fortran_order': 'no', 'shape': (8,), }"),
        ('shape-negative', "{'descr': '<i4', 'fortran_order': False, 'shape': (-8,), }"),
        ('shape-negative-2d', "{'descr': '<i4', 'fortran_order': False, 'shape': (-1, -8), }"),
        ('shape-huge', "{'descr': '<i4', 'fortran_order': False, 'shape': (1099511627776,), }"),
        ('shape-overflow-product', "{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }"),
        ('shape-int64-overflow', "{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999999,), }"),
        ('shape-9-dims', "{'descr': '<i4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,8), }"),
        ('shape-64-dims', "{'descr': '<i4', 'fortran_order': False, 'shape': (" + '1,' * 63 + '8), }'),
        ('shape-string', "{'descr': '<i4', 'fortran_order': False, 'shape': '8', }"),
        ('shape-float', "{'descr': '<i4', 'fortran_order': False, 'shape': (8.0,), }"),
        ('shape-list', "{'descr': '<i4', 'fortran_order': False, 'shape': [8], }"),
        ('shape-nested', "{'descr': '<i4', 'fortran_order': False, 'shape': ((8,),), }"),
        ('shape-deep-nesting', "{'descr': '<i4', 'fortran_order': False, 'shape': " + '(' * 5000 + ')' * 5000 + ", }"),
        ('shape-unclosed', "{'descr': '<i4', 'fortran_order': False, 'shape': (8, }"),
        ('shape-too-small-for-data', "{'descr': '<i4', 'fortran_order': False, 'shape': (16,), }"),
        ('duplicate-key', "{'descr': '<i4', 'descr': '<f4', 'fortran_order': False, 'shape': (8,), }"),
        ('unknown-key', "{'descr': '<i4', 'fortran_order': False, 'shape': (8,), 'extra': 1, }"),
        ('not-a-dict', "['<i4', False, (8,)]"),
        ('empty-header', ""),
        ('header-nul', "{'descr': '<i4',\0 'fortran_order': False, 'shape': (8,), }"),
        ('header-utf8-invalid', "{'descr': '<i4\xff\xfe', 'fortran_order': False, 'shape': (8,), }"),
        ('header-unterminated-string', "{'descr': '<i4, 'fortran_order': False, 'shape': (8,), }"),
        ('header-double-quotes', '{"descr": "<i4", "fortran_order": False, "shape": (8,), }'),
        ('header-python-code', "__import__('os').system('true')"),
        ('header-long-garbage', "{" + 'x' * 3000 + "}"),
    ]
    data = g[-32:]
    for name, h in hdrs:
        out.append((name, npy_bytes(h, data)))
    out.append(('version-9', b'\x93NUMPY\x09\x00' + g[8:]))
    out.append(('version-0', b'\x93NUMPY\x00\x00' + g[8:]))
    out.append(('bad-magic', b'\x93NUMPZ' + g[6:]))
    out.append(('text-file', b'1 2 3 4 5 6 7 8\n'))
    out.append(('header-len-huge', g[:8] + b'\xff\xff' + g[10:]))
    out.append(('header-len-zero', g[:8] + b'\x00\x00' + g[10:]))
    v2 = npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (8,), }", data, major=2)
    out.append(('v2-header-len-4g', v2[:8] + b'\xff\xff\xff\xff' + v2[12:]))
    out.append(('v2-truncated-len', v2[:10]))
    out.append(('short-data', good_npy()[:-5]))
    out.append(('long-data-wrong-shape', npy_bytes("{'descr': '<i4', 'fortran_order': False, 'shape': (4,), }", data)))
    return [(n + '.npy', b) for n, b in out]


def gen_trace(npt):
    out = truncations(npt, 14)
    out += bitflips(npt, 16, 0, 64)
    out.append(('bad-magic', b'XXXX' + npt[4:]))
    out.append(('all-zero', b'\0' * len(npt)))
    out.append(('text', b'this is not a trace\n'))
    out.append(('empty', b''))
    out.append(('header-only-ones', b'\xff' * 64 + npt[64:]))
    return [(n + '.npt', b) for n, b in out]


def gen_memtrace():
    good = ''.join(f'0x{0x1000 * i:x} {"READ" if i % 2 else "WRITE"} {i * 4}\n' for i in range(40))
    out = text_damage(good)
    raw = [
        ('op-unknown', '0x1000 FETCH 0\n'),
        ('addr-not-hex', 'zz READ 0\n'),
        ('addr-huge', '0x' + 'f' * 40 + ' READ 0\n'),
        ('addr-negative', '-0x10 READ 0\n'),
        ('cycle-negative', '0x1000 READ -5\n'),
        ('cycle-huge', '0x1000 READ 999999999999999999999999\n'),
        ('cycle-float', '0x1000 READ 1.5\n'),
        ('missing-cycle', '0x1000 READ\n'),
        ('missing-op', '0x1000\n'),
        ('extra-field', '0x1000 READ 5 7\n'),
        ('cycles-backwards', '0x1000 READ 50\n0x2000 READ 10\n'),
        ('long-line', '0x' + '1' * 20000 + ' READ 0\n'),
        ('json-instead', '{"addr": 4096}\n'),
    ]
    out += [(n, s.encode()) for n, s in raw]
    return [(n + '.trace', b) for n, b in out]


# ---- classification ----------------------------------------------------------

def run(cmd, cwd):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=30)
        return p.returncode
    except subprocess.TimeoutExpired:
        return 124


def rejected(fmt, path, npusim, work):
    """Exit status of the CLI command t_malformed.sh runs for fmt (0 = accepted)."""
    p = os.path.abspath(path)
    if fmt == 'asm':
        return run([npusim, 'asm', p, '-o', os.path.join(work, 'o.elf')], work)
    if fmt == 'elf':
        r = run([npusim, 'dis', p], work)
        return r if r else run([npusim, 'run', p, '--max-cycles', '100000'], work)
    if fmt == 'config':
        return run([npusim, 'config', '--check', p], work)
    if fmt == 'launch':
        dst = os.path.join(work, 'l.json')
        open(dst, 'wb').write(open(p, 'rb').read())
        return run([npusim, 'run', dst], work)
    if fmt == 'npy':
        return run([npusim, 'run', os.path.join(work, 'scale.elf'), '--cores', '2', '--arg', 'A=' + p,
                    '--arg', 'M=3', '--out', 'C=' + os.path.join(work, 'c.npy') + ':int32[8]',
                    '--arg', 'N=8'], work)
    if fmt == 'trace':
        return run([npusim, 'trace', 'info', p], work)
    if fmt == 'memtrace':
        return run([npusim, 'memsim', '--config', os.path.join(ROOT, 'configs/small.json'), p], work)
    raise ValueError(fmt)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--npusim', required=True)
    ap.add_argument('--synth', required=True, help='npt-synth, for the trace base')
    ap.add_argument('-o', default=os.path.join(ROOT, 'tests/malformed'))
    a = ap.parse_args()
    npusim = os.path.abspath(a.npusim)
    work = tempfile.mkdtemp(prefix='genmal')
    # bases made by the tools
    if subprocess.run([npusim, 'asm', os.path.join(ROOT, 'tests/malformed/scale.s'), '-o',
                       os.path.join(work, 'scale.elf')]).returncode:
        sys.exit('gen_malformed: cannot assemble scale.s')
    elf = open(os.path.join(work, 'scale.elf'), 'rb').read()
    open(os.path.join(work, 'a.npy'), 'wb').write(good_npy())
    if subprocess.run([os.path.abspath(a.synth), '-o', os.path.join(work, 'b.npt'), '--events', '60',
                       '--cores', '2', '--seed', '7']).returncode:
        sys.exit('gen_malformed: npt-synth failed')
    npt = open(os.path.join(work, 'b.npt'), 'rb').read()
    sets = {'asm': gen_asm(), 'elf': gen_elf(elf), 'config': gen_config(), 'launch': gen_launch(),
            'npy': gen_npy(), 'trace': gen_trace(npt), 'memtrace': gen_memtrace()}
    total = kept = 0
    for fmt, files in sets.items():
        d = os.path.join(a.o, fmt)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):           # regenerate, but keep fuzz regressions
            if not f.startswith('fuzz-'):
                os.remove(os.path.join(d, f))
        seen = set()
        for name, data in files:
            if name in seen or len(data) > 200_000:
                continue
            seen.add(name)
            path = os.path.join(d, name)
            open(path, 'wb').write(data)
            total += 1
            rc = rejected(fmt, path, npusim, work)
            if rc == 0:
                os.remove(path)           # the tool accepts it: not malformed
                continue
            kept += 1
            if rc >= 124:
                print(f'gen_malformed: {fmt}/{name}: exit {rc} (a signal or a hang: a finding)')
    print(f'gen_malformed: {kept} of {total} files kept in {a.o}')


main()
