# cut_hints.awk — a lesson's HINTS.md cut at a level, for the student handout:
#   awk -v level=N -f lessons/kit/cut_hints.awk lessons/NN-topic/HINTS.md > CUT
# (lessons/handout --hints N). N: 0 no hint, 1 hint 1 of each part (the idea), 2 hints 1
# and 2 (the idea and the approach; the handout's default), 3 every hint (hint 3: nearly
# the code). The title line is kept, and a note after it says the level and that the
# instructor can release more; at level 0 nothing else is. Otherwise the text outside the
# hints (the introduction, a heading per part) is kept, with every hint numbered up to N.
#
# The markup it cuts, the same in every lesson (anything else is refused, naming the file
# and the line, so a hint can never ship at the wrong level by a slip of markup):
#   <details>
#   <summary>Hint 2 — the structure</summary>
#   ...
#   </details>
# one hint a block, numbered 1 to 3; blank lines outside the blocks are collapsed to one,
# so that a block left out leaves no gap (a file has no double blank line of its own).
function fail(why) {
  printf "%s:%d: %s\n", FILENAME, FNR, why > "/dev/stderr"
  failed = 1
  exit 1
}
function say(line) {  # a line kept: after one pending blank line, if any was seen
  if (pending && printed) print ""
  pending = 0
  printed = 1
  print line
}
function note(n) {
  if (n == 0)
    return "> This handout's hints are cut at level 0 of 3: no hint is here. Your instructor can\n> release them (lessons/handout --hints 1, 2 or 3)."
  if (n == 1)
    return "> This handout's hints are cut at level 1 of 3: hint 1 of each part (the idea).\n> Your instructor can release more (lessons/handout --hints 2 or 3)."
  if (n == 2)
    return "> This handout's hints are cut at level 2 of 3: hints 1 and 2 of each part (the idea\n> and the approach); hint 3 (nearly the code) is not here. Your instructor can release\n> it (lessons/handout --hints 3)."
  return "> This handout's hints are cut at level 3 of 3: every hint, hint 3 of each part\n> (nearly the code) included."
}
BEGIN {
  if (level !~ /^[0-3]$/) {
    print "cut_hints.awk: level must be 0, 1, 2 or 3 (awk -v level=N)" > "/dev/stderr"
    failed = 1
    exit 2
  }
  level += 0
}
FNR == 1 {
  if ($0 !~ /^# /) fail("expected the title (# Lesson NN — hints) on the first line")
  say($0)
  say("")
  say(note(level))
  next
}
inside && /^<details>$/ { fail("<details> inside a hint (a hint's </details> is missing)") }
inside {
  if (inside == 1) {
    if (!match($0, /^<summary>Hint [1-9]/))
      fail("expected <summary>Hint N — ...</summary> right after <details>")
    hint = substr($0, RLENGTH, 1) + 0
    if (hint > 3) fail("Hint " hint ": hints are numbered 1 to 3 (the levels cut at 3)")
  }
  block = block "\n" $0
  inside++
  if ($0 == "</details>") {
    if (hint <= level) say(block)
    inside = 0
    blocks++
  }
  next
}
/^<details>$/ { inside = 1; block = $0; next }
/^<\/?(details|summary)/ { fail("a hint's markup outside <details> ... </details>") }
/^$/ { pending = 1; next }
level > 0 { say($0) }
END {
  if (failed) exit 1
  if (inside) fail("a hint's </details> is missing at the end of the file")
  if (!blocks) fail("no hint (<details> <summary>Hint N ...) in the file")
}
