"""`flatfab init`: a project folder of one's own, from one of the bundled example fabrics.

The example's intent is copied with its comments (its switches' platforms changed as asked,
and the lossless profile fitted to them), and around it go what an operator needs to point
flatfab at real switches: a commented Nornir inventory, the rollout plans that fit the
fabric, the project file, a .gitignore and a README. Everything is built and checked in
memory first; nothing that exists is ever overwritten.
"""
