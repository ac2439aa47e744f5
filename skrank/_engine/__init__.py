"""Layer 1: the engine: query-id codes, segmented sorts, rankings under a tie policy,
kernels and aggregation, on the host (NumPy) and on devices (array API)."""
