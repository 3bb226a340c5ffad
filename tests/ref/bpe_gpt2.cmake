# ref.bpe_gpt2 — the gpt models' byte-level BPE (nn/bpe*.c through dttok) against an
# independent Python one built on the `regex` module, as GPT-2's encoder.py is
# (tests/ref/bpe_gpt2.py): the pieces, the learned merges, encodings, vocab.json, the shards.
# Skipped visibly without a Python that imports regex (apt-get install python3-regex).
dt_python_with(DT_REGEX_PYTHON "import regex" SYSTEM_FIRST)
if(DT_REGEX_PYTHON AND TARGET dttok)
  add_test(NAME ref.bpe_gpt2
           COMMAND ${DT_REGEX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bpe_gpt2.py
                   $<TARGET_FILE:dttok> /usr/share/games/fortunes/fortunes
                   ${CMAKE_CURRENT_BINARY_DIR}/bpe_gpt2)
  set_tests_properties(ref.bpe_gpt2 PROPERTIES LABELS "ref;text" TIMEOUT 120
    PASS_REGULAR_EXPRESSION "PASS bpe_gpt2" FAIL_REGULAR_EXPRESSION "FAIL|SKIPPED")
else()
  add_test(NAME ref.bpe_gpt2.SKIPPED COMMAND ${CMAKE_COMMAND} -E echo
           "SKIPPED: ref.bpe_gpt2 needs Python 3 with regex (apt-get install python3-regex)")
endif()
