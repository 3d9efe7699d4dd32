#include "cpu/cpu_capability.h"

#include <strings.h>

#include <cstdio>
#include <cstdlib>

namespace flambeau::cpu {

namespace {

CpuCapability hardware() {
#ifdef FLB_CPU_DISPATCH
  __builtin_cpu_init();
  // (libgcc's probe also checks that the OS saves the wider registers: XGETBV)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return CpuCapability::kAVX512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuCapability::kAVX2;
#endif
  return CpuCapability::kDefault;
}

// The capability the environment asks for; the hardware's when it asks for none.
CpuCapability requested(CpuCapability hw) {
  const char* name = "FLAMBEAU_CPU_CAPABILITY";
  const char* v = std::getenv(name);
  if (!v || !*v) v = std::getenv(name = "ATEN_CPU_CAPABILITY");
  if (!v || !*v) return hw;
  CpuCapability want;
  if (!strcasecmp(v, "default")) {
    want = CpuCapability::kDefault;
  } else if (!strcasecmp(v, "avx2")) {
    want = CpuCapability::kAVX2;
  } else if (!strcasecmp(v, "avx512")) {
    want = CpuCapability::kAVX512;
  } else {
    std::fprintf(stderr, "flambeau: ignoring %s=%s (expected default, avx2 or avx512)\n", name, v);
    return hw;
  }
  // Never more than the CPU has: the copy would die on an illegal instruction.
  return static_cast<int>(want) < static_cast<int>(hw) ? want : hw;
}

}  // namespace

CpuCapability cpu_capability() {
  static const CpuCapability c = requested(hardware());
  return c;
}

const char* cpu_capability_name(CpuCapability c) {
  switch (c) {
    case CpuCapability::kAVX512:
      return "AVX512";
    case CpuCapability::kAVX2:
      return "AVX2";
    default:
      return "DEFAULT";
  }
}

}  // namespace flambeau::cpu
