"""``python -m goldeval``: the goldeval command."""

from goldeval.cli import main

main()
