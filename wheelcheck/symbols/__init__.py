"""What symbol names mean: C++ demangling helpers and the families of libraries that export them."""
