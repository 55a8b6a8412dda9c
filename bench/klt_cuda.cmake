# klt on the GPU: push times, per-kernel times and batched throughput (JSON); the OpenCV peer
# is bench/klt_opencv_pyrlk.py on the frames and points that `klt_cuda_bench --dump DIR` writes.
if(VIDMAP_HAVE_CUDA AND TARGET vidmap_klt AND TARGET vidmap_synth)
  add_executable(klt_cuda_bench ${CMAKE_CURRENT_LIST_DIR}/klt_cuda_bench.cc)
  target_link_libraries(klt_cuda_bench PRIVATE vidmap::klt vidmap::synth)
  vidmap_apply_flags(klt_cuda_bench)
endif()
