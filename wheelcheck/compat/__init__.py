"""wheelcheck compat: will a distribution's ELF files load beside the others given (a plugin and its host)?

Pure analyses over Distributions (wheels, installed distributions, or a host's ABI manifest): the install
layout, the loader's search, symbol binding, the C++ boundary and Requires-Dist pins.
"""
