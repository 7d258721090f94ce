"""Data: what the models are trained and scored on, made or read here (dates, the character LM's text, Chinese
prose and everyday sentences, repeated spans), with their vocabularies and held-out sets."""
