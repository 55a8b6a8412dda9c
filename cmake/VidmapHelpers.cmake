# Common flags and helpers for modules, tests and benchmarks.

# The host path must round like the reference: no contraction of a*b+c into FMA.
set(VIDMAP_CXX_FLAGS -Wall -Wextra -Wno-unused-parameter -Wno-restrict -ffp-contract=off)
if(VIDMAP_WERROR)
  # CI only: a user's newer compiler may warn where ours does not, and must still build.
  list(APPEND VIDMAP_CXX_FLAGS -Werror)
endif()
set(VIDMAP_CUDA_FLAGS --expt-relaxed-constexpr -Xcompiler=-ffp-contract=off)
if(VIDMAP_CUDA_NO_FMA)
  list(APPEND VIDMAP_CUDA_FLAGS -fmad=false)
endif()

# vidmap_module(NAME SOURCES ... [CUDA_SOURCES ...] [DEPS ...])
# Builds libvidmap_<NAME>. CUDA sources are compiled only when CUDA is enabled, and
# VIDMAP_HAVE_CUDA=1 is defined for users of the module in that case.
function(vidmap_module name)
  cmake_parse_arguments(M "" "" "SOURCES;CUDA_SOURCES;DEPS" ${ARGN})
  set(srcs ${M_SOURCES})
  if(VIDMAP_HAVE_CUDA)
    list(APPEND srcs ${M_CUDA_SOURCES})
  endif()
  add_library(vidmap_${name} STATIC ${srcs})
  add_library(vidmap::${name} ALIAS vidmap_${name})
  target_include_directories(vidmap_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_BINARY_DIR}/generated)
  target_link_libraries(vidmap_${name} PUBLIC ${M_DEPS})
  vidmap_apply_flags(vidmap_${name})
endfunction()

function(vidmap_apply_flags target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${VIDMAP_CXX_FLAGS}>
    $<$<COMPILE_LANGUAGE:CUDA>:${VIDMAP_CUDA_FLAGS}>)
  if(OpenMP_CXX_FOUND)
    target_link_libraries(${target} PUBLIC OpenMP::OpenMP_CXX)
  endif()
  if(VIDMAP_HAVE_CUDA)
    target_compile_definitions(${target} PUBLIC VIDMAP_HAVE_CUDA=1)
    set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
  endif()
endfunction()

# vidmap_test(NAME SOURCES ... [DEPS ...] [LABELS ...])
# A GoogleTest executable registered with ctest. Label `gpu` for tests that need a GPU;
# such tests must GTEST_SKIP() when no device is present so CPU-only machines stay green.
function(vidmap_test name)
  if(NOT VIDMAP_BUILD_TESTS OR NOT VIDMAP_HAVE_GTEST)
    return()
  endif()
  cmake_parse_arguments(T "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_DEPS} GTest::gtest GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  vidmap_apply_flags(${name})
  add_test(NAME ${name} COMMAND ${name})
  set(labels cpu)
  if(T_LABELS)
    set(labels ${T_LABELS})
  endif()
  # Real data lives beside the checkout; tests skip cleanly when it is absent. OpenMP threads
  # sleep rather than spin while they wait: ctest runs tests side by side on few cores, where
  # spinning workers slowed the short parallel loops of SIFT and KLT by 8-10x.
  set_tests_properties(${name} PROPERTIES LABELS "${labels}"
    ENVIRONMENT "VIDMAP_SOURCE_DIR=${PROJECT_SOURCE_DIR};VIDMAP_DATA_DEFAULT=${PROJECT_SOURCE_DIR}/../shared/data;OMP_WAIT_POLICY=passive")
endfunction()
