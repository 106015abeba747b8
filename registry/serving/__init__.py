"""What the snapshot serves and what a call returns: the spec types and result shapes."""
