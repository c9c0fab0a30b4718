"""Census: audit many wheels (a directory, a listing, a whole simple index) on a Dask cluster, into Parquet.

Needs the ``census`` extra (dask[distributed], pyarrow). Each wheel is audited by the same call the CLI's
``audit`` makes (``wheelcheck.api.audit``), in a child process of the Dask worker, so verdicts match.
"""
