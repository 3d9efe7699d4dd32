/* DLPack's ABI (dmlc/dlpack 1.0): the structs and names a producer and a
 * consumer of tensor capsules share. Declared once for the core's
 * from_dlpack/__dlpack__ and for plugins that hand device memory over as a
 * capsule (the CUDA plugin's IPC sharing). C++ only. */
#pragma once
#include <cstdint>

namespace flambeau::dlpack {

enum : int32_t { kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3 };
struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
enum : uint8_t {
  kDLInt = 0,
  kDLUInt = 1,
  kDLFloat = 2,
  kDLBfloat = 4,
  kDLComplex = 5,
  kDLBool = 6
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; NULL means compact row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kFlagReadOnly = 1ULL << 0;  // imported as writable
constexpr uint64_t kFlagIsCopied = 1ULL << 1;
constexpr uint32_t kMajorVersion = 1, kMinorVersion = 0;
constexpr const char* kLegacyName = "dltensor";
constexpr const char* kLegacyUsed = "used_dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kVersionedUsed = "used_dltensor_versioned";

}  // namespace flambeau::dlpack
