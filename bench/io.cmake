# io: image decode/encode and video decode rates against OpenCV (imread, imwrite,
# VideoCapture) in the same run. OpenCV is optional: without it vidmap's figures print alone.
if(TARGET vidmap_io)
  add_executable(io_bench ${CMAKE_CURRENT_LIST_DIR}/io_bench.cc)
  target_link_libraries(io_bench PRIVATE vidmap::io)
  vidmap_apply_flags(io_bench)
  if(VIDMAP_HAVE_OPENCV)
    find_package(OpenCV QUIET COMPONENTS core imgcodecs imgproc videoio)
    if(OpenCV_FOUND)
      target_link_libraries(io_bench PRIVATE opencv_core opencv_imgcodecs opencv_imgproc
                                             opencv_videoio)
      target_include_directories(io_bench PRIVATE ${OpenCV_INCLUDE_DIRS})
      target_compile_definitions(io_bench PRIVATE VIDMAP_HAVE_OPENCV=1)
    endif()
  endif()
endif()
