"""`python -m redaction_pressure`: the command-line tool."""

from redaction_pressure.cli import main

if __name__ == "__main__":  # spawned processes re-import this module as __mp_main__
    raise SystemExit(main())
