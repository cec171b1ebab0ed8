"""Platform `frr`: Linux + FRR switches (the lab's switch, white boxes, Linux switchdev)."""
