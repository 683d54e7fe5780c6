"""The frontend: tracing, pytrees, the NumPy and lax namespaces, and the user API."""
