"""`python -m rlstudy.runtime.warmstart MODULE ARGS...`: a job's command (client.py); `--serve`: the server."""

import sys

if sys.argv[1:] == ["--serve"]:
    from .server import serve

    serve()
else:
    from .client import client

    client(sys.argv[1:])
