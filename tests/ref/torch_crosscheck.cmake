# torch_crosscheck.cmake — included by tests/ref/CMakeLists.txt (DT_TORCHVISION_PYTHON set).
# Numerical cross-check against PyTorch: torch_crosscheck.py writes torchvision weights to
# safetensors with its own writer (json + struct) and PyTorch's float64 results; crosscheck.c
# loads them with dt_weights_load and compares eval logits (F32, F16, BF16 weights) and, for
# ResNets, one training step (loss, gradients, running statistics). Skipped visibly without
# torchvision. Each run draws a fresh seed (printed); DT_TEST_SEED in ctest's environment
# replays one. The reference keeps relu and max-pool kinks beyond fp32's reach (see
# keep_off_kinks in the script: a kink within rounding once failed ~1 seed in 8).
add_executable(dt_crosscheck ${CMAKE_CURRENT_LIST_DIR}/crosscheck.c)
target_link_libraries(dt_crosscheck PRIVATE dtnn)
if(DT_TORCHVISION_PYTHON)
  add_test(NAME ref.torch_crosscheck
           COMMAND ${DT_TORCHVISION_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/torch_crosscheck.py
                   $<TARGET_FILE:dt_crosscheck> ${CMAKE_CURRENT_BINARY_DIR}/crosscheck
                   resnet18 alexnet resnet50)
  set_tests_properties(ref.torch_crosscheck PROPERTIES LABELS ref TIMEOUT 900 COST 35
                       ENVIRONMENT "OMP_NUM_THREADS=2;PYTHONWARNINGS=ignore")
else()
  add_test(NAME ref.torch_crosscheck.SKIPPED COMMAND ${CMAKE_COMMAND} -E echo
           "SKIPPED: ref.torch_crosscheck needs Python 3 with torch and torchvision"
           "(apt-get install python3-torchvision)")
endif()
