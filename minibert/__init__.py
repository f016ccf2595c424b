"""minibert: BERT built from nothing but NumPy, for reading."""
