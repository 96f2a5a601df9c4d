"""The command line: parses options, calls fp8check.core, renders. No logic of its own."""
