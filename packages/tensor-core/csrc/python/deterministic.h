// The deterministic-algorithms check of the generated bindings. A binding calls
// it only while the mode is on (one branch otherwise), after the autograd slot,
// so a call is checked once, where its kernels run.
#pragma once
#include <initializer_list>

#include "core/deterministic.h"
#include "dispatch/dispatcher.h"
#include "python/arg_parser.h"

namespace flambeau::python {

// An operator's nondeterminism marks: the table entry's device types (fixed
// at build time) and those plugins declared for the operator's name since.
struct NondeterministicMarks {
  NondeterministicMarks(const char* op, std::initializer_list<const char*> table_devices);
  const OperatorEntry& op;
  uint32_t table = 0;
  bool on(DeviceType d) const { return ((table | op.nondeterministic) >> d) & 1u; }
};

// Alerts (core/deterministic.h) when the operator is marked on the device type
// of the call's first tensor among the parsed arguments `tensors` (Tensor,
// Tensor? or Tensor[] parameters; Python numbers are skipped).
void check_deterministic(const NondeterministicMarks& marks, const ParsedArgs& p,
                         std::initializer_list<int> tensors);
// The same for the Python-operator fast paths, which hold their tensors already.
void check_deterministic(const NondeterministicMarks& marks,
                         std::initializer_list<const Tensor*> tensors);

}  // namespace flambeau::python
