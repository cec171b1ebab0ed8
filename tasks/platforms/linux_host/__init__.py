"""Platform `linux_host`: GPU servers (ConnectX NICs) and the lab's hosts, over SSH."""
