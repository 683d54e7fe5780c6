"""Programs written for JAX, unchanged: the tests run each under JAX and, with
``python -m plait run``, under plait, and compare what they print."""
