"""What the user reads: the search for instance types that meet a requirement and the
prediction rendered as a table and plain language."""
