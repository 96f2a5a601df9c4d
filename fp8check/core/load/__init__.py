"""The load stage (torch): weights streamed and sharded per rank -> the routed kernel's numerics -> verdict;
`--against BASE`."""
