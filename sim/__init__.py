"""The virtual table: physics and rendering with exact ground truth, for tests, benchmarks and the demo."""
