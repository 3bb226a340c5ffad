# Lesson 10 — sizing a cluster with the simulator: the student's answer sheet (answers.c:
# an offered cluster as dtsim flags, its throughput and time-to-train, four what-ifs, a
# landmark's scaling) graded against dtsim's own outputs (the grader runs $DT_BUILD/dtsim).
if(TARGET dtsim)
  dt_lesson(10 SOURCES answers.c GRADER grader.c)
  foreach(t lesson10_student lesson10_solution)  # `lessons/grade 10` needs dtsim built
    if(TARGET ${t})
      add_dependencies(${t} dtsim)
    endif()
  endforeach()
else()
  message(STATUS "dtlab: lesson 10 skipped: it needs dtsim (SimGrid)")
endif()
