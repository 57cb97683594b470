#!/usr/bin/env python3
"""A /dev/log stand-in: receives syslog datagrams on a unix socket and
appends each, one per line, to a file.

    syslog_sink.py SOCKET_PATH OUTPUT_FILE READY_FILE

READY_FILE is created once the socket is bound. Runs until killed.
"""
import os
import socket
import sys

sock_path, out_path, ready = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sock_path)
os.chmod(sock_path, 0o666)
open(ready, "w").close()
with open(out_path, "ab", buffering=0) as out:
    while True:
        data = s.recv(65536)
        out.write(data.rstrip(b"\n").replace(b"\n", b"\\n") + b"\n")
