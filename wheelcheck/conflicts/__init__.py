"""Several distributions in one process: shared symbols, duplicated runtimes, undeclared dependencies."""
