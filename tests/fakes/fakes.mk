# Placeholder: the fake CUDA libraries (written next).
FAKES :=
