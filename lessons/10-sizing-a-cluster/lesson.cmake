# Lesson 10 — sizing a cluster with the simulator: the student's answer sheet (answers.c:
# an offered cluster as dtsim flags, its throughput and time-to-train, four what-ifs, a
# landmark's scaling) graded against dtsim's own outputs (the grader runs $DT_BUILD/dtsim).
# The grader is split (lessons/kit/subject.h): answers.c holds only values, but it is C (a
# constructor could print a score or end the process), so it is linked into a program of
# its own per variant, and the grader (with remote.c) asks it for the values:
#   subject  answers.c in a server that returns offer_flags and the seven numbers
#            (subject10.c), linked with only what answers.c uses of dtlab's library
#            (--gc-sections)
if(TARGET dtsim)
  dt_lesson(10 SOURCES answers.c GRADER grader.c JUDGE remote.c SUBJECT subject10.c)
  foreach(t lesson10_student lesson10_solution)  # `lessons/grade 10` needs dtsim built
    if(TARGET ${t})
      add_dependencies(${t} dtsim)
    endif()
  endforeach()
else()
  message(STATUS "dtlab: lesson 10 skipped: it needs dtsim (SimGrid)")
endif()
