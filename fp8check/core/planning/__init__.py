"""Planning views over inspect: memory fit, the platform x TP matrix, release diffs, suggestions."""
