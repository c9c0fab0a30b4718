"""Reading the host: where its dynamic loader finds libraries. Only repair and `audit --lib-path` come here."""

from wheelcheck.host.search_paths import SearchPath, host_search_path
from wheelcheck.host.host_library_search import HostLibrary, Located, locate_libraries

__all__ = ["SearchPath", "host_search_path", "HostLibrary", "Located", "locate_libraries"]
