"""Measurement: what a trained model does (head analysis, held-out scores, the bottleneck curves) and the records
of a run that report it."""
