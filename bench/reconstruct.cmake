# The reconstruction benchmark's evaluator (scripts/bench_reconstruct.sh runs vidmap and COLMAP
# on the same frames and scores both with it).
if(TARGET vidmap_sfm)
  add_executable(reconstruct_eval ${CMAKE_CURRENT_LIST_DIR}/reconstruct_eval.cc)
  target_link_libraries(reconstruct_eval PRIVATE vidmap::sfm vidmap::io)
  vidmap_apply_flags(reconstruct_eval)
endif()
# Pair verification before and after the video policy, in CPU time (sfm/pair_verification.h).
if(TARGET vidmap_pipeline)
  add_executable(pair_verify_bench ${CMAKE_CURRENT_LIST_DIR}/pair_verify_bench.cc)
  target_link_libraries(pair_verify_bench PRIVATE vidmap::pipeline vidmap::sfm vidmap::io)
  vidmap_apply_flags(pair_verify_bench)
endif()
# Every verified pair's matches, descriptor and KLT track apart, scored against the ground
# truth's epipolar geometry (docs/benchmarks.md, "KLT track matches on fr1-desk").
if(TARGET vidmap_pipeline)
  add_executable(pair_truth_eval ${CMAKE_CURRENT_LIST_DIR}/pair_truth_eval.cc)
  target_link_libraries(pair_truth_eval PRIVATE vidmap::pipeline vidmap::sfm vidmap::io)
  vidmap_apply_flags(pair_truth_eval)
endif()
