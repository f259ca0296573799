"""A TCP proxy in front of a real PostgreSQL server that can turn hostile on demand.

It forwards faithfully until told otherwise: then it drip-feeds the server's
answer one byte at a time (valid messages, arriving very slowly), replaces
the answer with a message type no client knows, swallows it ("silent": a server
that no longer answers), or refuses new connections (accepts and closes at
once). It counts the connections it accepted, so a
test can see how many times a client tried.
"""

import socket
import threading
import time

UNKNOWN_MESSAGE = b"X\x00\x00\x00\x04"
"""A well-framed backend message whose type ('X', the client's Terminate) no backend sends."""


class PgProxy:
    """``127.0.0.1:port`` in front of ``upstream``; ``mode`` is "forward", "drip", "garble", "silent" or
    "refuse"."""

    def __init__(self, upstream=("127.0.0.1", 5432), drip_interval_s=0.2):
        self.upstream = upstream
        self.drip_interval_s = drip_interval_s
        self.mode = "forward"
        self.accepted = 0
        self._open = []
        self._lock = threading.Lock()
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def dsn(self, user="postgres", dbname="postgres"):
        return "host=127.0.0.1 port={} sslmode=disable user={} dbname={}".format(self.port, user, dbname)

    def cut(self):
        """Close every forwarded connection, as a network failure would."""
        with self._lock:
            sockets, self._open = self._open, []
        for sock in sockets:
            _close(sock)

    def close(self):
        _close(self._listener)
        self.cut()

    def _accept(self):
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.accepted += 1
            if self.mode == "refuse":
                _close(client)
                continue
            server = socket.create_connection(self.upstream)
            with self._lock:
                self._open += [client, server]
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, source, sink, answers):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if answers and self.mode == "silent":
                    continue
                if answers and self.mode == "garble":
                    sink.sendall(UNKNOWN_MESSAGE)
                elif answers and self.mode == "drip":
                    for index in range(len(data)):
                        time.sleep(self.drip_interval_s)
                        sink.sendall(data[index:index + 1])
                else:
                    sink.sendall(data)
        except OSError:
            pass
        finally:
            _close(source)
            _close(sink)


def _close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()
