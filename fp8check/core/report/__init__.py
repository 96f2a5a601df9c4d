"""Reports as documents: the JSON document of every command (documents), JUnit (junit) and the one-line verdicts
(verdicts). Collapsed rows are a planning view (fp8check.core.planning.rows)."""
