"""Layer 0: errors and the checks of single values, for every layer above."""
