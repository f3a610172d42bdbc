#include "npu/sim/regcmd_decode.h"

#include <array>
#include <cstdio>

#include "core/error.h"
#include "npu/registers.h"

namespace ork::npu::sim {

using reg::Id;
using reg::get;
namespace f = reg::f;

namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

DecodedTask decode_matmul_regcmd(const uint64_t* e, uint32_t count, const std::string& where) {
  ORK_CHECK(count > reg::kPcTailEntries, where, ": ", count,
            " register command entries; a task needs its registers and the 4-entry PC tail");
  const uint32_t body = count - reg::kPcTailEntries;

  // ---- body: block register writes only, each register known -----------------------------------
  std::array<uint32_t, reg::kRegisterCount> value{};
  std::array<bool, reg::kRegisterCount> seen{};
  for (uint32_t i = 0; i < body; ++i) {
    const reg::Entry d = reg::decode(e[i]);
    const char* block = reg::target_name(d.target);
    ORK_CHECK(block != nullptr, where, ": entry ", i, ": unknown target ", hex(d.target), " (",
              reg::describe(e[i]), ")");
    const reg::Register* r = reg::find(d.target, d.offset);
    ORK_CHECK(r != nullptr, where, ": entry ", i, ": unknown register ", hex(d.offset), " of block ",
              block);
    ORK_CHECK(d.target != reg::kTargetPc && d.target != reg::kTargetPcOpEnable, where, ": entry ", i,
              ": ", r->name, " may appear only in the PC tail");
    value[size_t(r->id)] = d.value;
    seen[size_t(r->id)] = true;
  }
  for (const reg::Register& r : reg::kRegisters) {
    if (r.target == reg::kTargetPc || r.target == reg::kTargetPcOpEnable) continue;
    ORK_CHECK(seen[size_t(r.id)], where, ": register ", r.name, " is never written");
  }
  auto v = [&](Id id) { return value[size_t(id)]; };

  // ---- PC tail ------------------------------------------------------------------------------------
  DecodedTask out;
  const uint64_t* tail = e + body;
  const reg::Entry t0 = reg::decode(tail[0]), t1 = reg::decode(tail[1]);
  if (tail[0] != 0) {
    ORK_CHECK(t0.target == reg::kTargetPc && t0.offset == reg::info(Id::PC_BASE_ADDRESS).offset,
              where, ": PC tail entry 0 must be 0 (end) or PC_BASE_ADDRESS, found ",
              reg::describe(tail[0]));
    out.chained = true;
    out.next_addr = t0.value;
  }
  ORK_CHECK(t1.target == reg::kTargetPc && t1.offset == reg::info(Id::PC_REGISTER_AMOUNTS).offset,
            where, ": PC tail entry 1 must be PC_REGISTER_AMOUNTS, found ", reg::describe(tail[1]));
  out.next_amount = get(f::kPcDataAmount, t1.value);
  ORK_CHECK(t1.value == out.next_amount, where, ": PC_REGISTER_AMOUNTS reserved bits set: ",
            hex(t1.value));
  ORK_CHECK(out.chained || out.next_amount == 0, where,
            ": PC_REGISTER_AMOUNTS is ", out.next_amount, " but no next task address is given");
  ORK_CHECK(tail[2] == reg::encode(reg::kTargetPcPreEnable, 0, 0), where,
            ": PC tail entry 2 must be the 0x0041 pre-enable marker, found ", hex(tail[2]));
  const reg::Entry t3 = reg::decode(tail[3]);
  ORK_CHECK(t3.target == reg::kTargetPcOpEnable &&
                t3.offset == reg::info(Id::PC_OPERATION_ENABLE).offset,
            where, ": PC tail entry 3 must be PC_OPERATION_ENABLE, found ", reg::describe(tail[3]));
  ORK_CHECK(t3.value == reg::kOpEnableMatmul, where, ": PC_OPERATION_ENABLE = ", hex(t3.value),
            "; the simulator runs only PC|CNA|DPU tasks (", hex(reg::kOpEnableMatmul), ")");

  // ---- the operation ------------------------------------------------------------------------------
  const uint32_t in_prec = get(f::kCnaInPrecision, v(Id::CNA_CONV_CON1));
  MatmulTaskDesc& op = out.op;
  if (in_prec == reg::kPrecisionInt8) {
    op.dtype = Dtype::kI8;
  } else if (in_prec == reg::kPrecisionFp16) {
    op.dtype = Dtype::kF16;
  } else {
    fail(where, ": CNA_CONV_CON1.IN_PRECISION = ", in_prec,
         ": the simulator supports int8 (0) and fp16 (2) inputs");
  }
  op.m = get(f::kDatainHeight, v(Id::CNA_DATA_SIZE0));
  op.k = get(f::kDatainChannel, v(Id::CNA_DATA_SIZE1));
  op.n = get(f::kWeightKernels, v(Id::CNA_WEIGHT_SIZE2));
  op.a_addr = v(Id::CNA_FEATURE_DATA_ADDR);
  op.b_addr = v(Id::CNA_DCOMP_ADDR0);
  op.c_addr = v(Id::DPU_DST_BASE_ADDR);

  // Dims that other blocks must agree on: clear messages for the common inconsistencies.
  const uint32_t elt = uint32_t(elt_bytes(op.dtype));
  ORK_CHECK(get(f::kCoreDataoutChannel, v(Id::CORE_DATAOUT_SIZE_1)) + 1 == op.n, where,
            ": inconsistent dims: CORE_DATAOUT_SIZE_1 channel+1 = ",
            get(f::kCoreDataoutChannel, v(Id::CORE_DATAOUT_SIZE_1)) + 1,
            " but CNA_WEIGHT_SIZE2 kernels = ", op.n);
  ORK_CHECK(get(f::kCubeHeight, v(Id::DPU_DATA_CUBE_HEIGHT)) + 1 == op.m, where,
            ": inconsistent dims: DPU_DATA_CUBE_HEIGHT+1 = ",
            get(f::kCubeHeight, v(Id::DPU_DATA_CUBE_HEIGHT)) + 1, " but CNA_DATA_SIZE0 height = ", op.m);
  ORK_CHECK(uint64_t(v(Id::CNA_WEIGHT_SIZE0)) == uint64_t(op.n) * op.k * elt, where,
            ": inconsistent dims: CNA_WEIGHT_SIZE0 = ", v(Id::CNA_WEIGHT_SIZE0), " bytes but n·k·elt = ",
            uint64_t(op.n) * op.k * elt);
  try {
    check_task(op);
  } catch (const Error& err) {
    fail(where, ": ", err.what());
  }

  // Every register must hold exactly what the documented configuration of these dims holds.
  uint64_t expect[kMatmulEntries];
  gen_matmul_regcmd(op, expect);
  for (uint32_t i = 0; i + reg::kPcTailEntries < kMatmulEntries; ++i) {
    const reg::Entry x = reg::decode(expect[i]);
    const reg::Register* r = reg::find(x.target, x.offset);
    const uint32_t got = v(r->id);
    ORK_CHECK(got == x.value, where, ": register ", r->name, " = ", hex(got), ", expected ",
              hex(x.value), " for ", op.str(), " (inconsistent, or a configuration the public sources "
              "do not document)");
  }
  return out;
}

}  // namespace ork::npu::sim
