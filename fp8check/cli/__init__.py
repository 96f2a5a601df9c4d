"""The command line: parses options, calls fp8check.core, renders. No logic of its own.

entry starts the process; app registers the commands of one module per family (inspect; load and crosscheck;
planning: matrix and diff; reference: rules, schema, kernels, env), only the named command's family when a command
line names one; options defines the shared options once; output is the one sink (and formats every error once);
ci holds the exit codes; render_* draw tables and Markdown.
"""
