# cmake/dtlab_algos.cmake — the allreduce algorithms as the registry names them, for test lists.
#
# dt_algos(<out> [FILES <header>...] [WITH <flag>...] [WITHOUT <flag>...] [JOIN <sep>])
# sets <out> to the names of the entries of nn/coll/coll_algos.c's table, in its order, then
# those of the build's DT_ALGO_EXTRA header (nn/CMakeLists.txt) and of each FILES header
# (a program's DT_ALGO_EXTRA_ENTRIES, e.g. tests/coll/algo_reverse_ring.h), keeping an entry only when its line names every WITH flag
# and no WITHOUT flag (DT_ALGO_SUMS_IN_WIRE_TYPE, DT_ALGO_USES_GROUPS, DT_ALGO_USES_GRID,
# DT_ALGO_EXTERNAL, DT_ALGO_CHOOSES: nn/coll/coll_sched.h). A CMake list, or one string
# joined by JOIN (",": an --algos argument). An entry is one line whose first string is its
# name: `X(DT_ALGO_RING, {"ring", ...})` or `{"reverse_ring", ...},`. CMake configures again
# when one of these files changes, and coll.registry_lists_match_cmake holds what this
# reads to what the compiled registry lists (coll_check --list-algos).
function(dt_algos out)
  cmake_parse_arguments(PARSE_ARGV 1 A "" "JOIN" "FILES;WITH;WITHOUT")
  set(names "")
  foreach(f ${PROJECT_SOURCE_DIR}/nn/coll/coll_algos.c ${DT_ALGO_EXTRA} ${A_FILES})
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${f})
    # one list item a line: the characters that CMake's lists treat specially (a line's
    # trailing \ of the table's macro, ';', brackets) out of the way first
    file(READ ${f} text)
    string(REGEX REPLACE "[][;\\]" " " text "${text}")
    string(REPLACE "\n" ";" lines "${text}")
    list(FILTER lines INCLUDE REGEX "^[ \t]*(X\\(DT_ALGO_[A-Z0-9_]+,[ \t]*)?{\"[A-Za-z0-9_]+\",")
    foreach(line IN LISTS lines)
      string(REGEX MATCH "{\"([A-Za-z0-9_]+)\"," _ "${line}")
      set(name ${CMAKE_MATCH_1})
      set(keep TRUE)
      foreach(flag ${A_WITH})
        if(NOT line MATCHES "${flag}")
          set(keep FALSE)
        endif()
      endforeach()
      foreach(flag ${A_WITHOUT})
        if(line MATCHES "${flag}")
          set(keep FALSE)
        endif()
      endforeach()
      if(keep)
        list(APPEND names ${name})
      endif()
    endforeach()
  endforeach()
  if(DEFINED A_JOIN)
    list(JOIN names "${A_JOIN}" names)
  endif()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()
