"""Layer 3: trec_eval's view of a ranking and its measures."""
