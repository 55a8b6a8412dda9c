# mvs: PatchMatch speed per image and pass (CPU twin or CUDA) with the accuracy of the same run
# against exact depth (synthetic facade), and the dense stage of a calibrated real set
# (Strecha's fountain-P11 with its cameras).
if(TARGET vidmap_mvs_testing)
  add_executable(mvs_bench ${CMAKE_CURRENT_LIST_DIR}/mvs_bench.cc)
  target_link_libraries(mvs_bench PRIVATE vidmap_mvs_testing vidmap::sfm)
  vidmap_apply_flags(mvs_bench)
endif()
