"""Reading the host: where its dynamic loader finds libraries. Only `wheelcheck repair` comes here."""

from wheelcheck.host.ldpaths import SearchPath, host_search_path
from wheelcheck.host.locate import HostLibrary, Located, locate_libraries

__all__ = ["SearchPath", "host_search_path", "HostLibrary", "Located", "locate_libraries"]
