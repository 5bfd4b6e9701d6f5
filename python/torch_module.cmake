# cureduce_add_torch_module(HEADERS_OF OUT_DIR): the module cureduce._cureduce_torch
# (src/torch_native.cpp), linked with libtorch, into OUT_DIR, taking cureduce.h from the target
# HEADERS_OF. Built when the Python that builds can import a CUDA build of torch, against that
# torch; otherwise the package runs without it. OUT_DIR/_torch_build.py records the torch
# version it was built for, the only one the package loads it under.
function(cureduce_add_torch_module headers_of out_dir)
  file(REMOVE ${out_dir}/_torch_build.py)
  # One line, marked, so that whatever else importing torch prints is passed over.
  set(_probe "import os, torch; print('CUREDUCE_TORCH', os.path.dirname(torch.__file__), torch.__version__, int(torch._C._GLIBCXX_USE_CXX11_ABI), torch.version.cuda or '-', sep='|')")
  # First as the build runs Python (a CMake build, pip --no-build-isolation); then in isolated
  # mode (-I), which leaves out the overlay of pip's isolated build and so finds the torch of the
  # environment that `pip install .` installs into. (Builders that make a virtual environment
  # of their own, such as uv and python -m build, need --no-build-isolation for it.)
  set(_found FALSE)
  foreach(_flag "-c" "-Ic")
    execute_process(COMMAND "${Python_EXECUTABLE}" ${_flag} "${_probe}" OUTPUT_VARIABLE _torch
                    RESULT_VARIABLE _rc ERROR_QUIET)
    if(_rc EQUAL 0)
      if(_torch MATCHES "CUREDUCE_TORCH\\|([^|\n]*)\\|([^|\n]*)\\|([01])\\|([^|\n]*)")
        set(_found TRUE)
        break()
      endif()
    endif()
  endforeach()
  if(NOT _found)
    message(STATUS "cureduce: torch module not built: ${Python_EXECUTABLE} cannot import torch")
    return()
  endif()
  set(_dir "${CMAKE_MATCH_1}")
  set(_version "${CMAKE_MATCH_2}")
  set(_abi "${CMAKE_MATCH_3}")
  if(CMAKE_MATCH_4 STREQUAL "-")
    message(STATUS "cureduce: torch module not built: torch ${_version} is not a CUDA build")
    return()
  endif()
  # Some distributions lay torch's headers and libraries out elsewhere; the module is optional,
  # so it is left out rather than failing the build.
  set(_libs ${_dir}/lib/libtorch_python.so ${_dir}/lib/libtorch_cuda.so ${_dir}/lib/libtorch_cpu.so
            ${_dir}/lib/libc10_cuda.so ${_dir}/lib/libc10.so)
  foreach(_need ${_libs} ${_dir}/include/torch/csrc/autograd/python_variable.h ${_dir}/include/ATen/cuda/EmptyTensor.h)
    if(NOT EXISTS ${_need})
      message(STATUS "cureduce: torch module not built: torch ${_version} has no ${_need}")
      return()
    endif()
  endforeach()
  message(STATUS "cureduce: torch module built against torch ${_version} (${_dir})")
  Python_add_library(_cureduce_torch MODULE WITH_SOABI ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/src/torch_native.cpp)
  target_include_directories(_cureduce_torch SYSTEM PRIVATE ${_dir}/include ${_dir}/include/torch/csrc/api/include
                                                             ${CUDAToolkit_INCLUDE_DIRS})
  target_include_directories(_cureduce_torch PRIVATE $<TARGET_PROPERTY:${headers_of},INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(_cureduce_torch PRIVATE _GLIBCXX_USE_CXX11_ABI=${_abi})
  target_compile_features(_cureduce_torch PRIVATE cxx_std_20) # torch 2.15's headers need C++20
  target_compile_options(_cureduce_torch PRIVATE -Wall -Wextra)
  target_link_libraries(_cureduce_torch PRIVATE ${_libs})
  # torch is imported before the module loads, so its libraries are found by name; the paths
  # only help a loader that is asked first.
  set_target_properties(_cureduce_torch PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${out_dir} BUILD_RPATH ${_dir}/lib
                                                   INSTALL_RPATH "$ORIGIN/../torch/lib")
  file(WRITE ${out_dir}/_torch_build.py
       "# Written by the build: the torch that cureduce._cureduce_torch was built against.\n"
       "TORCH_VERSION = \"${_version}\"\n")
  install(TARGETS _cureduce_torch LIBRARY DESTINATION cureduce COMPONENT python EXCLUDE_FROM_ALL)
  install(FILES ${out_dir}/_torch_build.py DESTINATION cureduce COMPONENT python EXCLUDE_FROM_ALL)
  add_dependencies(cureduce_python _cureduce_torch)
endfunction()
