// Lets pybind11 hold TensorImpl (and other intrusively counted objects) through
// flambeau::Ref. Because the count lives in the object, the same TensorImpl
// always maps back to the same Python object while that object is alive.
#pragma once
#include <pybind11/pybind11.h>

#include "core/generator.h"
#include "core/tensor.h"

PYBIND11_DECLARE_HOLDER_TYPE(T, flambeau::Ref<T>, true)
