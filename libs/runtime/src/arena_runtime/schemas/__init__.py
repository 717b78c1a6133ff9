"""Payload schemas of the shared protos, one module per proto file; importing one registers it."""
