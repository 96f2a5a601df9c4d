"""Reports as documents: the JSON document (schema_version 1), JUnit, and the collapsed rows a table shows."""
