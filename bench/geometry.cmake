# Geometry benchmarks (plain mains printing JSON):
# - geometry_vs_opencv: relative pose and PnP against OpenCV (findEssentialMat + recoverPose,
#   solvePnPRansac) on the same correspondences, real pairs and synthetic scenes; OpenCV only.
# - geometry_scorer: the batched hypothesis scorer, CPU against CUDA (512 x 4096).
# - two_view_batch_bench: a keyframe's pair verification, per pair against lock-step batched
#   (CPU and CUDA batch scorers).
# - triangulation_batch_bench: batched triangulation CPU against CUDA by batch size, and PnP
#   per sample against lock-step (CPU and CUDA scorers).
# - homography_bench: RANSAC's minimal homography, the closed form against the DLT and OpenCV's
#   getPerspectiveTransform (when OpenCV is present).
if(TARGET vidmap_geometry)
  add_executable(two_view_batch_bench ${CMAKE_CURRENT_LIST_DIR}/two_view_batch_bench.cc)
  target_link_libraries(two_view_batch_bench PRIVATE vidmap::geometry)
  vidmap_apply_flags(two_view_batch_bench)
  add_executable(triangulation_batch_bench ${CMAKE_CURRENT_LIST_DIR}/triangulation_batch_bench.cc)
  target_link_libraries(triangulation_batch_bench PRIVATE vidmap::geometry)
  vidmap_apply_flags(triangulation_batch_bench)
  add_executable(geometry_scorer ${CMAKE_CURRENT_LIST_DIR}/geometry_scorer.cc)
  target_link_libraries(geometry_scorer PRIVATE vidmap::geometry)
  vidmap_apply_flags(geometry_scorer)
  add_executable(homography_bench ${CMAKE_CURRENT_LIST_DIR}/homography_bench.cc)
  target_link_libraries(homography_bench PRIVATE vidmap::geometry)
  vidmap_apply_flags(homography_bench)
  if(VIDMAP_HAVE_OPENCV)
    find_package(OpenCV QUIET COMPONENTS core imgproc imgcodecs features2d calib3d)
    if(OpenCV_FOUND)
      target_link_libraries(homography_bench PRIVATE ${OpenCV_LIBS})
      target_include_directories(homography_bench PRIVATE ${OpenCV_INCLUDE_DIRS})
      target_compile_definitions(homography_bench PRIVATE VIDMAP_BENCH_OPENCV=1)
      add_executable(geometry_vs_opencv ${CMAKE_CURRENT_LIST_DIR}/geometry_vs_opencv.cc)
      target_link_libraries(geometry_vs_opencv PRIVATE vidmap::geometry ${OpenCV_LIBS})
      target_include_directories(geometry_vs_opencv PRIVATE ${OpenCV_INCLUDE_DIRS})
      vidmap_apply_flags(geometry_vs_opencv)
    endif()
  endif()
endif()
