"""Planning views over inspect: the platform x TP matrix, release diffs, suggestions, the kernel registry as a
matrix, and the collapsed rows every table shows. They compute; fp8check.core.report and the CLI show them."""
