// CPU-capability dispatch: the core's hot vector loops are compiled for baseline
// x86-64, AVX2 and AVX-512, and each call runs the copy for the best instruction set
// the CPU has, capped by the environment variable FLAMBEAU_CPU_CAPABILITY (or
// PyTorch's ATEN_CPU_CAPABILITY): "default", "avx2" or "avx512". The wheel stays
// portable: only the functions built through FLB_MULTIVERSION use wider instructions,
// and only on CPUs that have them. flambeau.backends.cpu.get_cpu_capability()
// reports the choice. See docs/design/cpu-capability.rst.
#pragma once

namespace flambeau::cpu {

enum class CpuCapability : int { kDefault = 0, kAVX2 = 1, kAVX512 = 2 };

// The capability every FLB_MULTIVERSION function runs with: decided once, from the
// CPU's features and the environment.
CpuCapability cpu_capability();

// PyTorch's names: "DEFAULT", "AVX2", "AVX512".
const char* cpu_capability_name(CpuCapability c);

}  // namespace flambeau::cpu

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FLB_CPU_DISPATCH 1
// AVX2 means AVX2 with FMA, as in PyTorch (every AVX2 CPU has both; AVX-512F implies FMA).
#define FLB_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define FLB_TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#endif

// The body of a multiversioned function: inlined into each instruction set's copy.
#define FLB_MULTIVERSION_BODY static inline __attribute__((always_inline))

// FLB_MULTIVERSION(ret, name, (params), (args)) defines `ret name(params)`, which runs
// name##_body(args) (an FLB_MULTIVERSION_BODY function defined before it) compiled for
// the capability cpu_capability() chose. Use it for loops the compiler vectorizes; the
// body must call nothing that is not inlined (or is not a libmvec `simd` function), so
// that nothing built for a wider instruction set runs outside its copy.
//
// FLB_MULTIVERSION_VECTOR is the same for a body that is a template over the width in
// bytes of the vectors it declares (GCC's vector_size): name##_body<64> in the AVX-512
// copy, <32> in the AVX2 one, <16> in the baseline; for register-tiled code, where
// vectors wider than the instruction set's registers would be spilled.
#ifdef FLB_CPU_DISPATCH
#define FLB_MULTIVERSION_COPIES(ret, name, params, args, avx512, avx2, baseline) \
  FLB_TARGET_AVX512 static ret name##_avx512 params { return avx512 args; }      \
  FLB_TARGET_AVX2 static ret name##_avx2 params { return avx2 args; }            \
  static ret name##_default params { return baseline args; }                     \
  ret name params {                                                              \
    switch (::flambeau::cpu::cpu_capability()) {                                 \
      case ::flambeau::cpu::CpuCapability::kAVX512:                              \
        return name##_avx512 args;                                               \
      case ::flambeau::cpu::CpuCapability::kAVX2:                                \
        return name##_avx2 args;                                                 \
      default:                                                                   \
        return name##_default args;                                              \
    }                                                                            \
  }
#define FLB_MULTIVERSION(ret, name, params, args) \
  FLB_MULTIVERSION_COPIES(ret, name, params, args, name##_body, name##_body, name##_body)
#define FLB_MULTIVERSION_VECTOR(ret, name, params, args)                             \
  FLB_MULTIVERSION_COPIES(ret, name, params, args, name##_body<64>, name##_body<32>, \
                          name##_body<16>)
#else
#define FLB_MULTIVERSION(ret, name, params, args) \
  ret name params { return name##_body args; }
#define FLB_MULTIVERSION_VECTOR(ret, name, params, args) \
  ret name params { return name##_body<16> args; }
#endif
