# find_package(flambeau CONFIG) for backend plugins. Point CMake here with
#   -Dflambeau_DIR=$(python -c "import flambeau; print(flambeau.get_cmake_dir())")
# It defines flambeau::backend_abi, an interface target carrying the include
# directory of flambeau/backend_abi.h (a C header: plugins link nothing of ours).
get_filename_component(_flambeau_root "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(flambeau_INCLUDE_DIR "${_flambeau_root}/include")
if(NOT EXISTS "${flambeau_INCLUDE_DIR}/flambeau/backend_abi.h")
  set(flambeau_FOUND FALSE)
  set(flambeau_NOT_FOUND_MESSAGE "flambeau/backend_abi.h not found under ${flambeau_INCLUDE_DIR}")
  return()
endif()
file(STRINGS "${flambeau_INCLUDE_DIR}/flambeau/backend_abi.h" _flambeau_abi
     REGEX "^#define FLB_ABI_M(AJOR|INOR) [0-9]+")
string(REGEX MATCH "MAJOR ([0-9]+)" _m "${_flambeau_abi}")
set(flambeau_ABI_MAJOR "${CMAKE_MATCH_1}")
string(REGEX MATCH "MINOR ([0-9]+)" _m "${_flambeau_abi}")
set(flambeau_ABI_MINOR "${CMAKE_MATCH_1}")
if(NOT TARGET flambeau::backend_abi)
  add_library(flambeau::backend_abi INTERFACE IMPORTED)
  set_target_properties(flambeau::backend_abi PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${flambeau_INCLUDE_DIR}")
endif()
unset(_flambeau_root)
unset(_flambeau_abi)
unset(_m)
