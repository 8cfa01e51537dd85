"""`python -m symgrad ...`: the same as the `symgrad` command."""
from .cli import main

raise SystemExit(main())
