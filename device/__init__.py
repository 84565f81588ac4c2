"""The edge runtime: frame sources, the live loop, display, GPIO, the match store and the command line."""
