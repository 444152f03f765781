//! The SQLite checkpoint.
