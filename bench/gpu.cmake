# gpu: costs of the device layer (profiler per launch, saxpy bandwidth against a device copy,
# allocation through DeviceBuffer). Needs a GPU to measure; prints {"skipped": ...} without one.
if(VIDMAP_HAVE_CUDA)
  add_executable(gpu_layer_bench ${CMAKE_CURRENT_LIST_DIR}/gpu_layer_bench.cu)
  target_link_libraries(gpu_layer_bench PRIVATE vidmap::gpu)
  vidmap_apply_flags(gpu_layer_bench)
endif()
