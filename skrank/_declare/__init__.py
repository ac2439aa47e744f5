"""Layer 4: the declarations: options, the metric table and the name grammar."""
