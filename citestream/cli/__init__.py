"""The command line: ``citestream <command>``, one module per command (faust's ``faust/cli/`` is the model).

``main`` builds the parser from the command modules and runs one; each command module declares its arguments
(``add_parser``) and wires them to the code that does the work.
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
