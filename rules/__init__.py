"""The referee's domain core: tables, shots, verdicts and one referee per discipline family.

Standard library only: no images, no I/O beyond parsing the JSON contracts.
"""
