"""Stage 5, load: weights streamed and sharded per rank -> the routed kernel's numerics -> verdict."""
