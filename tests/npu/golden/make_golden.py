#!/usr/bin/env python3
"""Regenerates mtx512_streams.txt, the golden register streams of tests/npu/golden_stream_test.cpp.

Usage: make_golden.py ORK_BINARY MTX512_SOURCE_TREE [COMMIT] > mtx512_streams.txt

For every (shape, cores) of the grid below it asks `ork probe regcmd --json` which tasks ork plans
(their m, k, n and operand addresses, read from the stream with the field positions of Mesa's
registers.xml, restated here), and has mtx512/rk3588-npu's board-tested generator (commit given on
the command line's checkout; HEAD 4723947 when the fixture was made) emit the register commands of
each such task through mtx512_harness.c. mtx512 is GPL-3.0: it is compiled here, at fixture time,
into a throw-away program; nothing of it enters ork. Not run by CI.
"""
import json, os, subprocess, sys, tempfile

GRID = [  # (dtype, m, k, n, cores)
    ("i8", 4, 64, 32, 1), ("i8", 1, 32, 32, 1), ("i8", 1, 4096, 4096, 1), ("i8", 4, 8192, 32, 1),
    ("i8", 352, 1024, 64, 1), ("i8", 44, 8192, 32, 1), ("i8", 64, 4096, 256, 3), ("i8", 7, 45, 70, 3),
    ("i8", 1, 16384, 64, 2), ("i8", 333, 1000, 100, 3), ("i8", 512, 256, 320, 3), ("i8", 1, 1000, 16384, 3),
    ("i8", 64, 8300, 20, 1), ("i8", 1020, 32, 32, 1),
    ("f16", 4, 64, 32, 1), ("f16", 1, 32, 32, 1), ("f16", 4, 8192, 32, 1), ("f16", 64, 4096, 256, 3),
    ("f16", 7, 45, 70, 2), ("f16", 333, 1000, 100, 3), ("f16", 512, 256, 320, 3), ("f16", 1, 16384, 64, 3),
    ("f16", 64, 100, 1000, 3), ("f16", 4, 64, 16384, 3),
]
ADDR = ["--addr-a", "0x10000000", "--addr-b", "0x20000000", "--addr-c", "0x30000000",
        "--addr-regcmd", "0x40000000"]


def field(v, lo, hi):
    return (v >> lo) & ((1 << (hi - lo + 1)) - 1)


def task_dims(dtype, entries):
    regs = {}
    for e in entries:
        target, value, offset = e >> 48, (e >> 16) & 0xFFFFFFFF, e & 0xFFFF
        regs[(target, offset)] = value  # last write wins
    cna = 0x0201
    m = field(regs[(cna, 0x1020)], 0, 10)    # DATA_SIZE0.DATAIN_HEIGHT
    k = field(regs[(cna, 0x1024)], 0, 15)    # DATA_SIZE1.DATAIN_CHANNEL
    n = field(regs[(cna, 0x1038)], 0, 13)    # WEIGHT_SIZE2.WEIGHT_KERNELS
    a = regs[(cna, 0x1070)]                  # FEATURE_DATA_ADDR
    b = regs[(cna, 0x1110)]                  # DCOMP_ADDR0
    c = regs[(0x1001, 0x4020)]               # DPU DST_BASE_ADDR
    return m, k, n, a, b, c


def main():
    ork, mtx = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "harness")  # __fp16 (an ARM type) only appears in sizeof: 2 bytes
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run(["cc", "-O1", "-w", "-D__fp16=short", "-I", os.path.join(mtx, "include"), os.path.join(here, "mtx512_harness.c"),
                        os.path.join(mtx, "src", "npu_matmul.c"), "-o", exe], check=True)
        commit = sys.argv[3] if len(sys.argv) > 3 else subprocess.run(
            ["git", "-C", mtx, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        print(f"# mtx512/rk3588-npu {commit} gen_matmul_int8/fp16, one line per ork task: dtype m k n cores "
              "task_index core a b c then mtx512's 108 entries; made by tests/npu/golden/make_golden.py")
        for dtype, m, k, n, cores in GRID:
            out = subprocess.run([ork, "probe", "regcmd", "--dtype", dtype, "-m", str(m), "-k", str(k), "-n", str(n),
                                  "--cores", str(cores), "--json"] + ADDR, capture_output=True, text=True, check=True)
            dump = json.loads(out.stdout)
            for i, t in enumerate(dump["tasks"]):
                tm, tk, tn, a, b, c = task_dims(dtype, [int(e, 16) for e in t["regcmd"]])
                line = f"{dtype} {tm} {tk} {tn} {a:x} {b:x} {c:x}\n"
                res = subprocess.run([exe], input=line, capture_output=True, text=True, check=True).stdout.strip()
                print(f"{dtype} {m} {k} {n} {cores} {i} {t['core']} {a:x} {b:x} {c:x} {res}")


if __name__ == "__main__":
    main()
