#!/usr/bin/env python3
"""seed_exec.py ELF... OUTDIR — turn kernel ELFs into fuzz_exec seeds.

fuzz_exec reads 9-byte records (kind byte, 8-byte word); kind >= 224 means
"this raw word". Each kernel's .text becomes one seed of raw records (the
first 256 words), so the fuzzer starts from real instruction streams."""
import os
import struct
import sys


def text_words(path):
    b = open(path, 'rb').read()
    if b[:4] != b'\x7fELF':
        return []
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
    secs = [struct.unpack_from('<IIQQQQ', b, shoff + i * shentsize) for i in range(shnum)]
    stroff = secs[shstrndx][4]
    for name, _t, _f, _a, off, size in secs:
        end = b.index(b'\0', stroff + name)
        if b[stroff + name:end] == b'.text':
            return [b[off + i:off + i + 8] for i in range(0, min(size, 256 * 8), 8)]
    return []


def main():
    out = sys.argv[-1]
    os.makedirs(out, exist_ok=True)
    for p in sys.argv[1:-1]:
        words = text_words(p)
        if words:
            with open(os.path.join(out, os.path.basename(p) + '.seed'), 'wb') as f:
                for w in words:
                    f.write(b'\xff' + w)


main()
