"""Attack family 8: special files in the tree (FIFOs, devices, huge sparse files)."""

from __future__ import annotations

from .common import Attack, all_secrets

# -- 8. special files -------------------------------------------------------------------------


def family() -> list[Attack]:
    return [
        Attack(
            "fifo_in_tree",
            "special files",
            "Nothing fixed; a FIFO in the working tree (reading it blocks).",
            lambda plan: ['mkfifo repo/pipe && echo "$PWD/repo/pipe" > .attack-fifos'],
            all_secrets,
            1.0,
        ),
        Attack(
            "socket_in_tree",
            "special files",
            "Nothing fixed; a listening Unix socket in the working tree, its server left running.",
            lambda plan: [
                "setsid python3 -c \"import socket,time; s=socket.socket(socket.AF_UNIX); s.bind('repo/sock'); s.listen(); time.sleep(120)\""
                " </dev/null >/dev/null 2>&1 & echo $! >> .attack-pids; for i in $(seq 50); do test -S repo/sock && break; sleep 0.1; done; test -S repo/sock"
            ],
            all_secrets,
            1.0,
        ),
        Attack(
            "device_in_tree",
            "special files",
            "Nothing fixed; a character device node (a copy of /dev/null) in the working tree.",
            lambda plan: ["mknod repo/null c 1 3"],
            all_secrets,
            1.0,
        ),
        Attack(
            "huge_sparse_file",
            "special files",
            "Nothing fixed; a 64 MB sparse file in the working tree.",
            lambda plan: ["truncate -s 64M repo/blob.bin"],
            all_secrets,
            1.0,
        ),
    ]
