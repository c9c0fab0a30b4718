"""The bill of materials: which third-party code a wheel carries (vendored library files and statically linked
copies), with the versions its binaries state and, for libraries grafted by a repair, the OS package that
provided them. Discovery is pure (``discover``); only ``os_packages`` asks the host."""
