# dtlab_python.cmake — which Python runs a test that needs Python modules (torch,
# torchvision, transformers, the notebooks' pandas and nbclient). Included from the
# top-level CMakeLists.txt.
#
# dt_python_with(<var> "<python statement>" [SYSTEM_FIRST])
#   Sets <var> to the first of CMake's Python 3 and Debian's /usr/bin/python3 (the other way
#   round with SYSTEM_FIRST) on which `python -c "<statement>"` succeeds, or "" if neither
#   does: a pyenv or venv python first on PATH usually lacks Debian's python3-* packages. A
#   <var> already set (-D<var>=PATH on the command line) is kept. The caller adds the test,
#   or its visible .SKIPPED stand-in when <var> is empty.
find_package(Python3 COMPONENTS Interpreter)  # here, at the top level: every folder sees it

function(dt_python_with var statement)
  cmake_parse_arguments(PARSE_ARGV 2 A "SYSTEM_FIRST" "" "")
  if(${var})
    return()
  endif()
  set(candidates ${Python3_EXECUTABLE} /usr/bin/python3)
  if(A_SYSTEM_FIRST)
    set(candidates /usr/bin/python3 ${Python3_EXECUTABLE})
  endif()
  set(found "")
  foreach(py ${candidates})
    if(NOT found AND EXISTS "${py}")
      execute_process(COMMAND ${py} -c "${statement}" RESULT_VARIABLE rc
                      OUTPUT_QUIET ERROR_QUIET)
      if(rc EQUAL 0)
        set(found ${py})
      endif()
    endif()
  endforeach()
  set(${var} "${found}" PARENT_SCOPE)
endfunction()
