#include "core/generator.h"

namespace flambeau {

Generator& default_generator() {
  static Generator* g = [] {
    auto* p = new Generator();
    p->incref();  // never freed: Python holds it through Ref handles
    return p;
  }();
  return *g;
}

}  // namespace flambeau
