//! Streams rows out of an input file without loading it whole.
