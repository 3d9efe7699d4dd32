/* Importing flambeau's backend ABI from a plugin's extension module init.
 * Include <Python.h> first. Typical use in PyInit_<name>:
 *
 *   const flb_core_api* core = flb_import_core_api("flambeau-testdev", "0.1.0");
 *   if (!core) return NULL;  // ImportError set, naming both versions
 *
 * It checks before touching any entry: the capsule's name, that the table is
 * at least as large as the header's minor 0 defines, that the major matches,
 * and that the core's minor is at least the one this plugin compiled against.
 */
#ifndef FLAMBEAU_BACKEND_PYTHON_H_
#define FLAMBEAU_BACKEND_PYTHON_H_

#include "flambeau/backend_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline const flb_core_api* flb_import_core_api(const char* plugin_dist,
                                                      const char* plugin_version) {
  const flb_core_api* api = (const flb_core_api*)PyCapsule_Import(FLB_ABI_CAPSULE, 0);
  if (api == NULL) return NULL;
  if (api->struct_size < offsetof(flb_core_api, core_version) + sizeof(const char*)) {
    PyErr_Format(PyExc_ImportError, "%s %s: the flambeau core exports an unreadable ABI table",
                 plugin_dist, plugin_version);
    return NULL;
  }
  int too_old_core = api->abi_major < FLB_ABI_MAJOR ||
                     (api->abi_major == FLB_ABI_MAJOR && api->abi_minor < FLB_ABI_MINOR);
  if (api->abi_major != FLB_ABI_MAJOR || too_old_core) {
    PyErr_Format(PyExc_ImportError,
                 "%s %s was built for flambeau backend ABI %d.%d, but the installed "
                 "flambeau-tensor-core %s provides ABI %d.%d: upgrade %s",
                 plugin_dist, plugin_version, (int)FLB_ABI_MAJOR, (int)FLB_ABI_MINOR,
                 api->core_version, (int)api->abi_major, (int)api->abi_minor,
                 too_old_core ? "flambeau-tensor-core" : plugin_dist);
    return NULL;
  }
  if (api->struct_size < sizeof(flb_core_api)) {
    PyErr_Format(PyExc_ImportError,
                 "%s %s: the flambeau core's ABI table is smaller than ABI %d.%d defines: "
                 "upgrade flambeau-tensor-core",
                 plugin_dist, plugin_version, (int)FLB_ABI_MAJOR, (int)FLB_ABI_MINOR);
    return NULL;
  }
  return api;
}

#ifdef __cplusplus
}
#endif

#endif /* FLAMBEAU_BACKEND_PYTHON_H_ */
