# synth: the speed of the 3D scene renderer and of writing a sequence, and (with OpenCV) how a
# peer corner detector, SIFT and pyramidal Lucas-Kanade fare on the frames, scored against
# the ground-truth flow from the known depth and poses.
if(TARGET vidmap_synth)
  add_executable(synth_bench ${CMAKE_CURRENT_LIST_DIR}/synth_bench.cc)
  target_link_libraries(synth_bench PRIVATE vidmap::synth)
  vidmap_apply_flags(synth_bench)
  if(VIDMAP_HAVE_OPENCV)
    target_link_libraries(synth_bench PRIVATE ${OpenCV_LIBS})
    target_include_directories(synth_bench PRIVATE ${OpenCV_INCLUDE_DIRS})
    target_compile_definitions(synth_bench PRIVATE VIDMAP_HAVE_OPENCV=1)
  endif()
endif()
