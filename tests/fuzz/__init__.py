"""wheelcheck's own fuzzer: hostile zips and ELF files, generators that favour the shapes that broke it,
and a runner that executes each input in a fresh process with memory and CPU limits.

- ``zipcraft``: zips written field by field (any header may say anything);
- ``elfcraft``: the fields of a real ELF file located, so a mutation can aim at them;
- ``shapes``: the named hostile shapes (each a one-line story of what it breaks);
- ``strategies``: hypothesis strategies over those (``profiles`` picks the fast or the long run);
- ``bounded``: run one input under RLIMIT_AS and RLIMIT_CPU and classify what happened.
"""
