"""`python -m redaction_pressure`: the command-line tool."""

from redaction_pressure.cli import main

raise SystemExit(main())
