#include <initializer_list>
#include <utility>

#include "backend/kernels/kernels.h"

namespace flambeau::cuda::kernels {

namespace {

constexpr int32_t kRealDtypes[] = {FLB_BOOL,  FLB_UINT8,   FLB_INT8,     FLB_INT16,   FLB_INT32,
                                   FLB_INT64, FLB_FLOAT16, FLB_BFLOAT16, FLB_FLOAT32, FLB_FLOAT64};
constexpr int32_t kFloatDtypes[] = {FLB_FLOAT16, FLB_BFLOAT16, FLB_FLOAT32, FLB_FLOAT64};

// The ops' contexts: kernels read their operator from ctx.
const BinaryOp kAdd = BinaryOp::kAdd, kSub = BinaryOp::kSub, kMul = BinaryOp::kMul,
               kDiv = BinaryOp::kDiv;

struct UnaryEntry {
  const char* name;
  UnaryOp op;
};
const UnaryEntry kUnary[] = {
    {"neg", UnaryOp::kNeg},         {"abs", UnaryOp::kAbs},
    {"relu", UnaryOp::kRelu},       {"exp", UnaryOp::kExp},
    {"log", UnaryOp::kLog},         {"sqrt", UnaryOp::kSqrt},
    {"rsqrt", UnaryOp::kRsqrt},     {"sin", UnaryOp::kSin},
    {"cos", UnaryOp::kCos},         {"tanh", UnaryOp::kTanh},
    {"sigmoid", UnaryOp::kSigmoid}, {"reciprocal", UnaryOp::kReciprocal},
};

}  // namespace

flb_status register_kernels(const flb_core_api* core, int32_t type) {
  auto reg = [&](const char* op, int32_t dtype, flb_kernel_fn fn, const void* ctx) {
    return core->register_kernel(type, op, dtype, fn, const_cast<void*>(ctx));
  };
  for (int32_t d : kRealDtypes) {
    for (auto [name, ctx] : {std::pair<const char*, const BinaryOp*>{"add", &kAdd},
                             {"sub", &kSub},
                             {"mul", &kMul},
                             {"div", &kDiv}}) {
      if (flb_status s = reg(name, d, binary, ctx); s != FLB_OK) return s;
    }
    for (const char* name : {"fill_", "copy_", "sum"}) {
      flb_kernel_fn fn = name[0] == 'f' ? fill : name[0] == 'c' ? copy : sum;
      if (flb_status s = reg(name, d, fn, nullptr); s != FLB_OK) return s;
    }
  }
  for (const UnaryEntry& u : kUnary) {
    if (unary_takes_integers(u.op)) {
      for (int32_t d : kRealDtypes)
        if (flb_status s = reg(u.name, d, unary, &u.op); s != FLB_OK) return s;
    } else {
      for (int32_t d : kFloatDtypes)
        if (flb_status s = reg(u.name, d, unary, &u.op); s != FLB_OK) return s;
    }
  }
  return FLB_OK;
}

}  // namespace flambeau::cuda::kernels
