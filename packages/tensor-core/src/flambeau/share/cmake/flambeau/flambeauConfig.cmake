# find_package(flambeau CONFIG) for backend plugins and C++ extensions. Point CMake
# here with
#   -Dflambeau_DIR=$(python -c "import flambeau; print(flambeau.get_cmake_dir())")
# (scikit-build-core projects that have flambeau-tensor-core in their build
# requirements find it without: site-packages is on CMAKE_PREFIX_PATH there).
# It defines
#   flambeau::backend_abi  an interface target carrying the include directory of
#                          flambeau/backend_abi.h (a C header: plugins link nothing of ours);
#   flambeau::extension    an interface target for extension modules: the include
#                          directory of flambeau/extension.h, C++17, and pybind11's
#                          headers (pybind11::headers when the project found pybind11,
#                          else pybind11's include directory asked from Python).
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
if(NOT TARGET flambeau::extension)
  add_library(flambeau::extension INTERFACE IMPORTED)
  set_target_properties(flambeau::extension PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${flambeau_INCLUDE_DIR}"
    INTERFACE_COMPILE_FEATURES cxx_std_17)
  if(TARGET pybind11::headers)
    set_property(TARGET flambeau::extension APPEND PROPERTY
      INTERFACE_LINK_LIBRARIES pybind11::headers)
  else()
    # The interpreter the project builds for: FindPython's, else the first python3.
    foreach(_py IN ITEMS "${Python_EXECUTABLE}" "${Python3_EXECUTABLE}" "${PYTHON_EXECUTABLE}")
      if(_py)
        set(_flambeau_python "${_py}")
        break()
      endif()
    endforeach()
    if(NOT _flambeau_python)
      find_program(_flambeau_python NAMES python3 python)
    endif()
    execute_process(
      COMMAND "${_flambeau_python}" -c "import pybind11, sysconfig; print(pybind11.get_include()); print(sysconfig.get_paths()['include'])"
      OUTPUT_VARIABLE _flambeau_py_includes OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE _flambeau_py_result)
    if(_flambeau_py_result EQUAL 0)
      string(REPLACE "\n" ";" _flambeau_py_includes "${_flambeau_py_includes}")
      set_property(TARGET flambeau::extension APPEND PROPERTY
        INTERFACE_INCLUDE_DIRECTORIES ${_flambeau_py_includes})
    else()
      message(WARNING "flambeau::extension: pybind11 not found; find_package(pybind11 CONFIG) "
                      "before find_package(flambeau), or pip install pybind11")
    endif()
    unset(_flambeau_python)
    unset(_flambeau_py_includes)
    unset(_flambeau_py_result)
    unset(_py)
  endif()
endif()
unset(_flambeau_root)
unset(_flambeau_abi)
unset(_m)
