"""The user API: make_jaxpr, jit and its stages, the grad family, vmap, control flow,
custom derivatives, checkpoint, device_put."""
