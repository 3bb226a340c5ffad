# gpt_crosscheck.cmake — included by tests/ref/CMakeLists.txt. dtlab's gpt2-tiny (logits,
# loss, every gradient of one training step) and AdamW (five steps) against a PyTorch
# reference module and torch.optim.AdamW (gpt_crosscheck.py writes the weights and PyTorch's
# float64 and float32 results; dt_gpt_crosscheck compares). Needs only torch, not
# torchvision: the first of CMake's Python 3 and /usr/bin/python3 that imports torch runs it;
# without one it skips visibly. About 2 s.
add_executable(dt_gpt_crosscheck ${CMAKE_CURRENT_LIST_DIR}/gpt_crosscheck.c)
target_link_libraries(dt_gpt_crosscheck PRIVATE dtnn)
dt_python_with(DT_TORCH_PYTHON "import torch")
if(DT_TORCH_PYTHON)
  add_test(NAME ref.gpt_crosscheck
           COMMAND ${DT_TORCH_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/gpt_crosscheck.py
                   $<TARGET_FILE:dt_gpt_crosscheck> ${CMAKE_CURRENT_BINARY_DIR}/gpt_crosscheck)
  set_tests_properties(ref.gpt_crosscheck PROPERTIES LABELS ref TIMEOUT 300
                       SKIP_RETURN_CODE 77
                       ENVIRONMENT "OMP_NUM_THREADS=2;PYTHONWARNINGS=ignore")
else()
  add_test(NAME ref.gpt_crosscheck.SKIPPED COMMAND ${CMAKE_COMMAND} -E echo
           "SKIPPED: ref.gpt_crosscheck needs Python 3 with torch (apt-get install python3-torch)")
endif()
