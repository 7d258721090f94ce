"""References and fixtures: independent forward passes (Hugging Face's semantics in float64, the NumPy check of our
models) and the scripts that write the golden fixtures and benchmark networks from them."""
