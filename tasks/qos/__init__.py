"""The lossless plane: headroom arithmetic and the canonical RoCEv2 profile."""
