"""load_inline: a C++ function from a string, compiled, cached and bound in one call.

python packages/cpp-extension/examples/demo_load_inline.py
"""

import flambeau as torch
from flambeau.utils.cpp_extension import load_inline

cube = load_inline(
    "cube_ext",
    "flambeau::Tensor cube(const flambeau::Tensor& x) {"
    "  return flambeau::ops::mul(flambeau::ops::mul(x, x), x); }",
    functions="cube",
).cube

if __name__ == "__main__":
    x = torch.arange(4.0)
    print(cube(x))  # tensor([ 0.,  1.,  8., 27.])
    assert cube(x).tolist() == [0.0, 1.0, 8.0, 27.0]
