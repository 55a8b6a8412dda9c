# klt: the CPU push rate against OpenCV (klt_cpu_bench) and the OpenCV comparison of design
# 7.3 on the synthetic scene and Middlebury flow (klt_opencv_compare). OpenCV is optional:
# without it the bench prints vidmap alone and the comparison is not built.
if(TARGET vidmap_klt AND TARGET vidmap_synth)
  # The CPU records byte for byte, to compare two builds that must compute the same bits.
  add_executable(klt_record_dump ${CMAKE_CURRENT_LIST_DIR}/klt_record_dump.cc)
  target_link_libraries(klt_record_dump PRIVATE vidmap::klt vidmap::synth)
  vidmap_apply_flags(klt_record_dump)
  add_executable(klt_cpu_bench ${CMAKE_CURRENT_LIST_DIR}/klt_cpu_bench.cc)
  target_link_libraries(klt_cpu_bench PRIVATE vidmap::klt vidmap::synth)
  vidmap_apply_flags(klt_cpu_bench)
  if(VIDMAP_HAVE_OPENCV)
    target_link_libraries(klt_cpu_bench PRIVATE ${OpenCV_LIBS})
    target_include_directories(klt_cpu_bench PRIVATE ${OpenCV_INCLUDE_DIRS})
    target_compile_definitions(klt_cpu_bench PRIVATE VIDMAP_HAVE_OPENCV=1)

    # The comparison reads the Middlebury PNGs and .flo files with OpenCV's own readers.
    if(TARGET opencv_imgcodecs)
      add_executable(klt_opencv_compare ${CMAKE_CURRENT_LIST_DIR}/klt_opencv_compare.cc)
      target_link_libraries(klt_opencv_compare PRIVATE vidmap::klt vidmap::synth ${OpenCV_LIBS}
                                                       opencv_imgcodecs)
      target_include_directories(klt_opencv_compare PRIVATE ${OpenCV_INCLUDE_DIRS})
      target_compile_definitions(klt_opencv_compare PRIVATE VIDMAP_HAVE_OPENCV=1)
      vidmap_apply_flags(klt_opencv_compare)
    endif()
  endif()
endif()
