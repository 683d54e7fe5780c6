"""The frontend core: values, tracing, eager execution, caches, pytrees, promotion."""
