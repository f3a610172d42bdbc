/* Fixture generator, never built by the project: links against mtx512/rk3588-npu's src/npu_matmul.c
 * (GPL-3.0, not part of ork) to print the register commands that board-tested generator emits for
 * one task. Reads lines "i8|f16 m k n a b c" (addresses hex) on stdin; prints, for each, one line with
 * the 108 entries of gen_matmul_int8 / gen_matmul_fp16 as 16-digit hex. make_golden.py runs it. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "npu_matmul.h"

int main(void) {
  char dtype[8];
  unsigned m, k, n;
  unsigned long long a, b, c;
  while (scanf("%7s %u %u %u %llx %llx %llx", dtype, &m, &k, &n, &a, &b, &c) == 7) {
    uint64_t regs[112];
    memset(regs, 0, sizeof regs);
    matmul_params_t p;
    memset(&p, 0, sizeof p);
    p.m = (uint16_t)m, p.k = (uint16_t)k, p.n = (uint16_t)n;
    p.input_dma = (uint32_t)a, p.weights_dma = (uint32_t)b, p.output_dma = (uint32_t)c;
    p.tasks = regs;
    p.fp32tofp16 = 0;
    const int ret = strcmp(dtype, "i8") == 0 ? gen_matmul_int8(&p) : gen_matmul_fp16(&p);
    if (ret != 0) {
      printf("error %d\n", ret);
      continue;
    }
    for (int i = 0; i < 108; ++i) printf(i ? " %016llx" : "%016llx", (unsigned long long)regs[i]);
    printf("\n");
  }
  return 0;
}
