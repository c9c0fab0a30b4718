"""Report objects and their renderers, one module per format."""
