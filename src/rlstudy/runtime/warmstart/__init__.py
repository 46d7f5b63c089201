"""Warm starts: a workflow's jobs run as forks of one process that has already imported their libraries.

Every job is a new Python process, and before it computes anything it imports PyTorch, NumPy,
pandas and the project, and loads Numba's compiled kernels: more than a second, where a sweep
point's whole work is a few seconds (docs/speed.md). Run as `python -m rlstudy.runtime.warmstart
MODULE ARGS...` (every rule's command; client.py), a job asks a server of this workflow run to fork it from a
process that has done all that once. The fork runs `python -m MODULE ARGS...` as a fresh process would: same module, arguments,
working directory, environment, standard streams and exit status, and the same bits (a test
compares a warm run's artefacts with a cold one's). Wherever a warm start could differ, the job
starts cold instead, exactly as `python -m MODULE ARGS...`:

- no server: the command run by hand, a job on a cluster node, or the first job of a run (which
  starts the server for the jobs after it);
- another environment (a job given more threads: Snakemake sets OMP_NUM_THREADS and its kin per
  job) or working directory: libraries read both when they load;
- a source file of the project changed since the server loaded it (the server then exits);
- a server that is not single-threaded (fork copies one thread only).

The Snakefile's `onstart` names a socket in a private temporary folder (WARM_SOCKET); `onsuccess`
and `onerror` remove the folder, and the server exits once its socket is gone, once Snakemake's
process is (WARM_OWNER), or after IDLE_EXIT_S without a job. Set RLSTUDY_WARM_START=0 to run every
job cold.

What a local process could send it or name for it (tests/unit/runtime/test_hostile_warmstart.py): the
server and its clients use only `socket` in a folder named, made and owned as begin() makes it (mode
0700), so WARM_SOCKET naming any other file runs every job cold and the file is left as it was; a
request must come whole within REQUEST_DEADLINE_S, while the server goes on serving other clients;
every message is framed by its length, and bytes of the next one are kept for it; a request without
its keys, or with keys of the wrong type, is refused; staleness is judged by the sources' contents.

The package: protocol.py (the variables, where the socket may be, the wire), client.py (every job's
command; begin and end for the Snakefile), server.py (the forks), preload.py (what the server loads
and what makes it stale), reports.py (the sha256 of the files a job hashed, handed back to the server
for the jobs after it); `python -m rlstudy.runtime.warmstart` is __main__.py.
"""
