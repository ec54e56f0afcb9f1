"""`torchdoctor mpi`: hostfile parsing and the checks that an MPI launch across hosts will work."""
